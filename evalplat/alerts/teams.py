"""The Microsoft Teams channel: an Adaptive Card (default) or a legacy MessageCard.

``format = "adaptive"`` posts what Teams Workflows ("Post to a channel when a webhook request is
received") expect::

    {"type": "message",
     "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
                      "content": {"type": "AdaptiveCard", "version": "1.4",
                                  "body": [title, FactSet, worst queries], "actions": [...]}}]}

``format = "messagecard"`` posts the Office 365 connector shape (``@type: MessageCard`` with
``title``, ``summary``, ``themeColor``, a section of ``facts`` and an ``OpenUri`` action) for
older incoming-webhook URLs. The report becomes an "Open the report" action (and the site's
index an "All reports" one) only when it is an http(s) URL; a file path is shown as a fact
instead. A notice of several alert events (a night) has the night's counts as its title and one
titled block (Adaptive Card) or section (MessageCard) per event.
"""

from __future__ import annotations

from typing import Any

from evalplat.alerts.base import BACKOFF, Channel, ChannelKind, Param, post_json
from evalplat.alerts.message import AlertMessage
from evalplat.alerts.notice import Notice
from evalplat.alerts.webhook import TIMEOUT

FORMATS = ("adaptive", "messagecard")
# Red for a regression, green for its resolution, grey for a test.
COLORS = {"opened": "D70000", "resolved": "2E7D32", "retired": "808080", "test": "808080"}
ADAPTIVE_COLORS = {
    "opened": "attention",
    "resolved": "good",
    "retired": "default",
    "test": "default",
}


def _links(notice: Notice) -> list[tuple[str, str]]:
    """The card's buttons: the report (the first event's comparison page) and the site's index,
    each only when it is an http(s) URL."""
    shown = [("Open the report", notice.report()), ("All reports", notice.index())]
    return [(t, u) for t, u in shown if u and u.startswith(("http://", "https://"))]


def adaptive_card(notice: Notice) -> dict[str, Any]:
    body: list[dict[str, Any]] = [
        {
            "type": "TextBlock",
            "text": notice.title(),
            "weight": "bolder",
            "size": "medium",
            "color": ADAPTIVE_COLORS[notice.event],
            "wrap": True,
        }
    ]
    several = len(notice.entries) > 1
    for message in notice.entries:
        if several:
            body.append(
                {
                    "type": "TextBlock",
                    "text": message.title(),
                    "weight": "bolder",
                    "color": ADAPTIVE_COLORS[message.event],
                    "wrap": True,
                    "separator": True,
                }
            )
        body += _adaptive_entry(message)
    card: dict[str, Any] = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    }
    card["actions"] = [
        {"type": "Action.OpenUrl", "title": title, "url": url} for title, url in _links(notice)
    ]
    if not card["actions"]:
        del card["actions"]
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }


def _adaptive_entry(message: AlertMessage) -> list[dict[str, Any]]:
    body: list[dict[str, Any]] = [
        {
            "type": "FactSet",
            "facts": [{"title": label, "value": value} for label, value in message.facts()],
        }
    ]
    queries = message.query_lines()
    if queries:
        body.append({"type": "TextBlock", "text": "Queries that moved most", "weight": "bolder"})
        body += [
            {"type": "TextBlock", "text": line, "wrap": True, "fontType": "monospace"}
            for line in queries
        ]
    return body


def _card_section(message: AlertMessage, titled: bool) -> dict[str, Any]:
    section: dict[str, Any] = {
        "facts": [{"name": label, "value": value} for label, value in message.facts()],
        "markdown": False,
    }
    if titled:
        section["activityTitle"] = message.title()
    queries = message.query_lines()
    if queries:
        section["text"] = "Queries that moved most:\n\n" + "\n\n".join(queries)
    return section


def message_card(notice: Notice) -> dict[str, Any]:
    several = len(notice.entries) > 1
    card: dict[str, Any] = {
        "@type": "MessageCard",
        "@context": "https://schema.org/extensions",
        "summary": notice.title(),
        "title": notice.title(),
        "themeColor": COLORS[notice.event],
        "sections": [_card_section(m, several) for m in notice.entries],
    }
    actions = [
        {"@type": "OpenUri", "name": title, "targets": [{"os": "default", "uri": url}]}
        for title, url in _links(notice)
    ]
    if actions:
        card["potentialAction"] = actions
    return card


class TeamsChannel(Channel):
    kind = "teams"

    def send(self, notice: Notice) -> None:
        shape = adaptive_card if self.params["format"] == "adaptive" else message_card
        post_json(
            self.expanded("url"),
            shape(notice),
            timeout=float(self.params["timeout"]),
            headers=self.http_headers(notice),
        )


KIND = ChannelKind(
    name="teams",
    description="a Microsoft Teams webhook (Adaptive Card or MessageCard)",
    params=(
        Param("url", (str,), "the webhook URL, e.g. ${TEAMS_WEBHOOK_URL}", required=True),
        Param("format", (str,), "card shape", default="adaptive", choices=FORMATS),
        TIMEOUT,
        BACKOFF,
    ),
    factory=TeamsChannel,
)
