"""The Slack channel: an incoming-webhook message with a plain-text fallback and blocks.

Shape (Slack's Block Kit, as accepted by ``hooks.slack.com/services/...`` URLs)::

    {"text": <title — notification fallback>,
     "blocks": [header(title), section(fields: the facts), section(worst queries, code block),
                context(report link: the comparison's page; the site's index)]}

A notice of several alert events has one header (the night's counts), then per event a section
with its title, its facts, its queries and the link to its own comparison page; at most
``ENTRIES_LIMIT`` events are shown (Slack takes 50 blocks), and a last line says how many more
the report has, with the link to the site's index.

Slack limits respected: a header's text ≤ 150 characters, at most 10 fields per section, a
section's text ≤ 3000 characters. User text is escaped for mrkdwn (``&``, ``<``, ``>``) so a
query like ``<b> & c`` shows as written and cannot form a link or a mention.
"""

from __future__ import annotations

from typing import Any

from evalplat.alerts.base import BACKOFF, Channel, ChannelKind, Param, post_json
from evalplat.alerts.message import AlertMessage
from evalplat.alerts.notice import Notice
from evalplat.alerts.webhook import TIMEOUT
from evalplat.metrics.numbers import counted

HEADER_LIMIT = 150
SECTION_LIMIT = 3000
FIELDS_LIMIT = 10
ENTRIES_LIMIT = 10


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def payload(notice: Notice) -> dict[str, Any]:
    title = notice.title()
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(title, HEADER_LIMIT)}}
    ]
    several = len(notice.entries) > 1
    for message in notice.entries[:ENTRIES_LIMIT]:
        if several:
            heading = f"*{escape(message.title())}*"
            blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": heading}})
        blocks += _entry_blocks(message)
        if several and message.report:  # each event links the page of its own comparison
            text = _report(message.report)
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": text}]})
    hidden = len(notice.entries) - ENTRIES_LIMIT
    more = counted(hidden, "more alert")
    context = [] if hidden <= 0 else [f"and {more} in the report"]
    report = notice.report()
    if report and not several:
        context.append(_report(report))
    index = notice.index()
    if index:
        context.append(_report(index, "All reports"))
    if context:
        blocks.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": t} for t in context]}
        )
    return {"text": title, "blocks": blocks}


def _entry_blocks(message: AlertMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    facts = [(label, value) for label, value in message.facts() if label != "Report"]
    blocks.append(
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": _cut(f"*{label}*\n{escape(value)}", 2000)}
                for label, value in facts[:FIELDS_LIMIT]
            ],
        }
    )
    queries = message.query_lines()
    if queries:
        body = "*Queries that moved most*\n```" + escape("\n".join(queries)) + "```"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut_code(body)}})
    return blocks


def _report(report: str, words: str = "Open the report") -> str:
    if report.startswith(("http://", "https://")):
        return f"<{report}|{words}>"
    return f"{'Report' if words == 'Open the report' else words}: {escape(report)}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cut_code(text: str) -> str:
    # Keep the closing fence when cutting, or the rest of the message renders as code.
    if len(text) <= SECTION_LIMIT:
        return text
    return text[: SECTION_LIMIT - 4] + "…```"


class SlackChannel(Channel):
    kind = "slack"

    def send(self, notice: Notice) -> None:
        post_json(
            self.expanded("url"),
            payload(notice),
            timeout=float(self.params["timeout"]),
            headers=self.http_headers(notice),
        )


KIND = ChannelKind(
    name="slack",
    description="a Slack incoming webhook (Block Kit message)",
    params=(
        Param("url", (str,), "the incoming-webhook URL, e.g. ${SLACK_WEBHOOK_URL}", required=True),
        TIMEOUT,
        BACKOFF,
    ),
    factory=SlackChannel,
)
