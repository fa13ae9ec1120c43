"""Read the site index's hooks (shared interface of the report site): each config x test set
row (``data-config``, ``data-testset``, ``data-verdict``, its links and text), each open alert's
row (``data-alert-id``, ``data-alert-kind``, its ``alert-link``) and each event of the latest
night (``data-event``, ``data-night-alert``: the alert's id)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any


class IndexHooks(HTMLParser):
    """The index's hooks: each config row's attributes and links, each alert row's attributes
    and its ``alert-link``."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        self.alerts: dict[int, dict[str, Any]] = {}
        self.night: list[dict[str, Any]] = []  # the "Last night" rows, in page order
        self._row: dict[str, Any] | None = None
        self._in_verdict_metrics = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "tr" and "data-night-alert" in found:
            self._row = {**found, "links": [], "alert_links": []}
            self.night.append(self._row)
        elif tag == "tr" and "data-alert-id" in found:
            self._row = {**found, "links": [], "alert_links": []}
            self.alerts[int(found["data-alert-id"])] = self._row
        elif tag == "tr" and "data-verdict" in found:
            self._row = {**found, "links": [], "alert_links": [], "text": ""}
            self.rows[(found["data-config"], found["data-testset"])] = self._row
        elif tag == "span" and found.get("class") == "verdict-metric" and self._row is not None:
            self._row["verdict_metrics"] = ""
            self._in_verdict_metrics = True
        elif tag == "a" and self._row is not None:
            self._row["links"].append(found["href"])
            if found.get("class") == "alert-link":
                self._row["alert_links"].append(found["href"])

    def handle_data(self, data: str) -> None:
        if self._row is not None and "text" in self._row:
            self._row["text"] += data
        if self._row is not None and self._in_verdict_metrics:
            self._row["verdict_metrics"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._in_verdict_metrics = False
        if tag == "tr":
            self._row = None


def read_index(site: Path) -> IndexHooks:
    hooks = IndexHooks()
    hooks.feed((site / "index.html").read_text(encoding="utf-8"))
    return hooks
