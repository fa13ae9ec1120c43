"""Seeded synthetic UBI logs: users of a position-biased cascade click model on A/B arms.

For demos and tests that need an interaction log whose truth is known. Each arm is a config
reference (``NAME`` or ``NAME@VER``, written as the query record's ``variant``) with the ranking
it shows for each query text. Each session runs one to ``max_searches`` searches; for each
search the user:

1. looks at the results at all with probability ``attention`` (the arm's own; a user who does
   not look abandons the search with no event);
2. scans the hits top down (the cascade of Craswell et al., 2008): at position i a hit of grade
   g is clicked with probability ``attraction[g]``; after a click the user stops with
   probability ``stop_after_click``, after a skip goes on with probability ``patience``. Hits
   further down are seen less often: this is the log's position bias;
3. buys a clicked hit of grade g with probability ``purchase[g]`` (a ``purchase`` event).

Because step 1 is independent of the rest, the expected share of searches with a click of an
arm is exactly ``attention`` times the cascade's: two arms that show the same rankings with
attentions 1.0 and 0.9 differ by a planted 10 % relative drop of CTR. The same seed writes the
same log byte for byte.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evalplat.errors import InputError


@dataclass(frozen=True)
class CascadeModel:
    """How simulated users click: per-grade attraction and purchase, patience, stopping."""

    attraction: Mapping[int, float] = field(
        default_factory=lambda: {0: 0.05, 1: 0.25, 2: 0.55, 3: 0.8}
    )
    purchase: Mapping[int, float] = field(default_factory=lambda: {2: 0.1, 3: 0.25})
    patience: float = 0.75
    stop_after_click: float = 0.6

    def __post_init__(self) -> None:
        chances = [*self.attraction.values(), *self.purchase.values(), self.patience,
                   self.stop_after_click]  # fmt: skip
        if any(not 0.0 <= p <= 1.0 for p in chances):
            raise InputError("click model probabilities must be between 0 and 1")


@dataclass(frozen=True)
class Arm:
    """One arm of the test: the config that serves it, what it shows, how much users look."""

    config: str
    rankings: Mapping[str, Sequence[str]]  # query text -> hit ids shown, in order
    attention: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.attention <= 1.0:
            raise InputError(f"arm {self.config}: attention must be between 0 and 1")
        if not self.rankings:
            raise InputError(f"arm {self.config}: no rankings to show")


@dataclass(frozen=True)
class LogSummary:
    """What was written: records, and per arm the searches and those with a click."""

    path: Path
    searches: dict[str, int]
    clicked: dict[str, int]
    events: int


def ubi_records(
    arms: Sequence[Arm],
    grades: Mapping[str, Mapping[str, int]],
    *,
    sessions: int,
    seed: int,
    days: int = 1,
    start: datetime | None = None,
    model: CascadeModel | None = None,
    max_searches: int = 2,
) -> Iterator[dict[str, Any]]:
    """UBI query and event records: ``sessions`` sessions per arm and day, in time order per
    session. ``grades`` (query text -> doc id -> grade) decides clicks; ungraded hits are 0."""
    if sessions < 1 or days < 1 or max_searches < 1:
        raise InputError("sessions, days and max_searches must be 1 or more")
    model = model or CascadeModel()
    rnd = random.Random(seed)
    first = start or datetime(2026, 3, 1, 8, tzinfo=UTC)
    if first.tzinfo is None:
        raise InputError("the log's start needs a time zone")
    for day in range(days):
        for arm in arms:
            texts = sorted(arm.rankings)
            for n in range(sessions):
                when = first + timedelta(days=day, seconds=11 * n)
                session = f"{arm.config}-{when:%Y%m%d}-{n}"
                for k in range(rnd.randint(1, max_searches)):
                    text = rnd.choice(texts)
                    moment = when + timedelta(seconds=90 * k)
                    yield from _search(rnd, model, arm, f"{session}-{k}", session, text, moment,
                                       grades.get(text, {}))  # fmt: skip


def _search(
    rnd: random.Random,
    model: CascadeModel,
    arm: Arm,
    query_id: str,
    session: str,
    text: str,
    when: datetime,
    grades: Mapping[str, int],
) -> Iterator[dict[str, Any]]:
    hits = list(arm.rankings[text])
    client = f"c-{session}"
    yield {"query_id": query_id, "client_id": client, "user_query": text,
           "timestamp": when.isoformat(), "query_response_hit_ids": hits,
           "query_attributes": {"session_id": session, "variant": arm.config}}  # fmt: skip
    if rnd.random() >= arm.attention:
        return
    clock = when
    for position, doc in enumerate(hits, start=1):
        grade = grades.get(doc, 0)
        clock += timedelta(seconds=2)
        if rnd.random() < model.attraction.get(grade, 0.0):
            yield _event("click", query_id, session, client, clock, doc, position)
            if rnd.random() < model.purchase.get(grade, 0.0):
                clock += timedelta(seconds=20)
                yield _event("purchase", query_id, session, client, clock, doc, position)
            if rnd.random() < model.stop_after_click:
                return
        elif rnd.random() >= model.patience:
            return


def _event(action: str, query_id: str, session: str, client: str, when: datetime, doc: str,
           position: int) -> dict[str, Any]:  # fmt: skip
    return {"action_name": action, "query_id": query_id, "session_id": session,
            "client_id": client, "timestamp": when.isoformat(),
            "event_attributes": {"object": {"object_id": doc},
                                 "position": {"ordinal": position}}}  # fmt: skip


def write_ubi_log(path: Path, arms: Sequence[Arm], grades: Mapping[str, Mapping[str, int]],
                  **options: Any) -> LogSummary:  # fmt: skip
    """Write :func:`ubi_records` to ``path`` as JSON lines; say what was written."""
    searches = {arm.config: 0 for arm in arms}
    clicked = {arm.config: 0 for arm in arms}
    variant: dict[str, str] = {}
    seen: set[str] = set()
    events = 0
    lines = []
    for record in ubi_records(arms, grades, **options):
        lines.append(json.dumps(record, ensure_ascii=False))
        if "action_name" not in record:
            variant[record["query_id"]] = record["query_attributes"]["variant"]
            searches[variant[record["query_id"]]] += 1
            continue
        events += 1
        if record["action_name"] == "click" and record["query_id"] not in seen:
            seen.add(record["query_id"])
            clicked[variant[record["query_id"]]] += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return LogSummary(path=path, searches=searches, clicked=clicked, events=events)
