"""The generic webhook channel: the alert as one JSON object POSTed to a URL.

Payload (stable field names, snake_case), one per notice (the alert events of a night)::

    {"source": "evalplat", "event": "opened", "title": "...", "text": "...",
     "idempotency_key": "...",
     "alerts": [{"kind": "regression", "event": "opened", "title": ..., "idempotency_key": ...,
                 "config": ..., "metric": ..., "baseline": ..., "candidate": ..., "delta": ...,
                 "p_value": ..., "worst_queries": [{"query_id", "text", "baseline",
                 "candidate", "delta"}], "report": ..., ...}]}

The notice's key is also sent as the ``Idempotency-Key`` header: a receiver that keeps the keys
it has accepted drops a retried delivery.

``url`` and every ``headers`` value may hold ``${ENV}`` placeholders (tokens), expanded at send.
"""

from __future__ import annotations

from typing import Any

from evalplat.alerts.base import BACKOFF, Channel, ChannelKind, Param, SettingError, post_json
from evalplat.alerts.notice import Notice
from evalplat.inputs.http_headers import header_problem

URL = Param("url", (str,), "the URL to POST to, e.g. ${EVALPLAT_WEBHOOK_URL}", required=True)
TIMEOUT = Param(
    "timeout", (int, float), "seconds to wait for the server", default=10.0, above=0, maximum=3600
)


def payload(notice: Notice) -> dict[str, Any]:
    keys = notice.keys or (None,) * len(notice.entries)
    return {
        "source": "evalplat",
        "event": notice.event,
        "title": notice.title(),
        "text": notice.text(),
        "idempotency_key": notice.key,
        "alerts": [
            {"title": m.title(), "idempotency_key": key, **m.to_dict()}
            for m, key in zip(notice.entries, keys, strict=True)
        ],
    }


class WebhookChannel(Channel):
    kind = "webhook"

    def __init__(self, name: str, params: dict[str, Any]):
        headers = params["headers"] or {}
        if not all(isinstance(v, str) for v in headers.values()):
            raise SettingError("webhook channel: headers values must be strings", "headers")
        for header, value in headers.items():
            problem = header_problem(header, value)
            if problem is not None:
                raise SettingError(f"webhook channel: {problem}", "headers")
        super().__init__(name, params)

    def send(self, notice: Notice) -> None:
        post_json(
            self.expanded("url"),
            payload(notice),
            timeout=float(self.params["timeout"]),
            headers={**self.http_headers(notice), **(self.expanded("headers") or {})},
        )


KIND = ChannelKind(
    name="webhook",
    description="POST the alert as JSON to any URL",
    params=(
        URL,
        Param("headers", (dict,), "extra HTTP headers, e.g. Authorization", default=None),
        TIMEOUT,
        BACKOFF,
    ),
    factory=WebhookChannel,
)
