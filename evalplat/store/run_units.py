"""What a run's units are: queries of a test set, or sessions of an online log.

An online run (``evalplat events score``) is stored as a run of the reserved test set
``online`` whose per-unit scores are sessions; its ``options["online"]`` holds the window
(``window``, ``start``, ``end``) and the log's counts (``sessions``, ``searches``, ``events``).
Listings and JSON name its units so: sessions and searches of a day, never queries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from evalplat.metrics.numbers import counted


class RunUnits:
    """Mixed into ``RunInfo``: the run's units as a reader names them."""

    trigger: str
    options: dict[str, Any]
    started_at: datetime
    queries_total: int
    queries_done: int

    @property
    def online(self) -> dict[str, Any] | None:
        """An online run's window and counts (module doc); None for a run of queries."""
        if self.trigger != "online":
            return None
        span = self.options.get("online")
        return dict(span) if isinstance(span, dict) else {}

    @property
    def day(self) -> str:
        """An online run's window as a reader names it: its UTC day, or ``all days``."""
        span = self.online or {}
        return "all days" if span.get("window") == "all" else f"{self.started_at:%Y-%m-%d}"

    def size_text(self) -> str:
        """``225/225 queries``, or ``600 sessions, 1180 searches`` for an online run."""
        span = self.online
        if span is None:
            return f"{self.queries_done}/{counted(self.queries_total, 'query')}"
        searches = span.get("searches")
        return counted(self.queries_total, "session") + (
            f", {counted(searches, 'search')}" if searches is not None else ""
        )

    def with_units(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` (a run's JSON) with ``unit``; an online run's query counts replaced by
        ``sessions``, ``searches``, ``events``, ``window`` and ``day``."""
        span = self.online
        if span is None:
            return {**data, "unit": "query"}
        for key in ("queries_total", "queries_done", "queries_failed"):
            data.pop(key, None)
        return {
            **data,
            "unit": "session",
            "sessions": self.queries_total,
            "searches": span.get("searches"),
            "events": span.get("events"),
            "window": span.get("window"),
            "day": self.day,
        }
