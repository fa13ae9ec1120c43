"""The generic webhook channel: the alert as one JSON object POSTed to a URL.

Payload (stable field names, snake_case)::

    {"source": "evalplat", "event": "opened", "title": "...", "text": "...",
     "alert": {"config": ..., "metric": ..., "baseline": ..., "candidate": ..., "delta": ...,
               "p_value": ..., "worst_queries": [{"query_id", "text", "baseline", "candidate",
               "delta"}], "report": ..., ...}}

``url`` and every ``headers`` value may hold ``${ENV}`` placeholders (tokens), expanded at send.
"""

from __future__ import annotations

from typing import Any

from evalplat.alerts.base import Channel, ChannelKind, Param, post_json
from evalplat.alerts.message import AlertMessage
from evalplat.errors import InputError

URL = Param("url", (str,), "the URL to POST to, e.g. ${EVALPLAT_WEBHOOK_URL}", required=True)
TIMEOUT = Param("timeout", (int, float), "seconds to wait for the server", default=10.0)


def payload(message: AlertMessage) -> dict[str, Any]:
    return {
        "source": "evalplat",
        "event": message.event,
        "title": message.title(),
        "text": message.text(),
        "alert": message.to_dict(),
    }


class WebhookChannel(Channel):
    kind = "webhook"

    def __init__(self, name: str, params: dict[str, Any]):
        headers = params["headers"] or {}
        if not all(isinstance(v, str) for v in headers.values()):
            raise InputError("webhook channel: headers values must be strings")
        super().__init__(name, params)

    def send(self, message: AlertMessage) -> None:
        post_json(
            self.expanded("url"),
            payload(message),
            timeout=float(self.params["timeout"]),
            headers=self.expanded("headers") or {},
        )


KIND = ChannelKind(
    name="webhook",
    description="POST the alert as JSON to any URL",
    params=(
        URL,
        Param("headers", (dict,), "extra HTTP headers, e.g. Authorization", default=None),
        TIMEOUT,
    ),
    factory=WebhookChannel,
)
