"""The JSON channel (``type = "json"``): alerts written to a file for other tools to read.

``mode = "append"`` (default) adds one JSON object per line (JSON Lines) and keeps every alert
ever sent — a log a dashboard can tail. ``mode = "write"`` rewrites the file as a JSON array of
the messages this channel object sent (one nightly invocation), like the JUnit channel.
Each object is one alert event: the message's fields (``AlertMessage.to_dict``) plus ``title``,
``sent_at`` (UTC, ISO 8601) and ``idempotency_key`` (stable across retries, so a reader can drop
an event it has already seen). The channel drops it first: an event whose key the file already
holds is not written again, so a notice sent again after a process died between writing it and
the outbox recording it leaves one line per event. The module is not named ``json`` so that it
cannot shadow the standard library.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalplat.alerts.base import Channel, ChannelKind, Param
from evalplat.alerts.junit import PATH, write_atomically
from evalplat.alerts.message import AlertMessage
from evalplat.alerts.notice import Notice

MODES = ("append", "write")


def record(message: AlertMessage, key: str | None = None) -> dict[str, Any]:
    return {
        "sent_at": datetime.now(UTC).isoformat(),
        "title": message.title(),
        "idempotency_key": key,
        **message.to_dict(),
    }


def written_keys(path: Path) -> set[str]:
    """The idempotency keys of the events a JSON Lines file holds (none when it is missing).

    A line that is not a JSON object (another tool's, or one cut short) holds no key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    keys = set()
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("idempotency_key"), str):
            keys.add(item["idempotency_key"])
    return keys


class JsonFileChannel(Channel):
    kind = "json"

    def __init__(self, name: str, params: dict[str, Any]):
        super().__init__(name, params)
        self.sent: list[dict[str, Any]] = []

    def send(self, notice: Notice) -> None:
        path = Path(self.expanded("path"))
        keys = notice.keys or (None,) * len(notice.entries)
        append = self.params["mode"] == "append"
        written = written_keys(path) if append else {item["idempotency_key"] for item in self.sent}
        items = [
            record(m, k)
            for m, k in zip(notice.entries, keys, strict=True)
            if k is None or k not in written
        ]
        if append:
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
            with path.open("a", encoding="utf-8") as file:
                file.write(lines)
        else:
            text = json.dumps([*self.sent, *items], indent=2, ensure_ascii=False) + "\n"
            write_atomically(path, text.encode("utf-8"))
        self.sent += items


KIND = ChannelKind(
    name="json",
    description="append alerts to a JSON Lines file, or write them as a JSON array",
    params=(PATH, Param("mode", (str,), "append or write", default="append", choices=MODES)),
    factory=JsonFileChannel,
)
