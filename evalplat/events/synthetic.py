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

Interleaved searches (:func:`interleaved_records`) show the same users one list merged from two
rankers (``evalplat.events.interleaving``), with the attribution an interleaved log carries.
For measuring how many sessions a test needs, :func:`session_ctr` and
:func:`interleaved_outcomes` run the same cascade on NumPy arrays, many searches at a time.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.events.interleaving import (
    credit_balanced_many,
    credit_many,
    interleave,
    rounds,
)
from evalplat.events.population import Population

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


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


# The cascade whose logs look like published ones (docs/online.md), with users of
# ``Population.published()`` on the demo's production ranking of Cranfield: fitted, on a grid,
# to 0.95 clicks per search and 23 % of searches with two clicks or more (Yandex logs) and
# 49.6 % of clicks on position 1 (the MSN Search 2006 log); the demo's attraction times 6,
# capped at 1, then patience and stopping after a click. Fitted to those figures, never to the
# number of sessions a test needs.
PUBLISHED_MODEL = CascadeModel(
    attraction={0: 0.24, 1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0},
    purchase={3: 0.1, 4: 0.25},
    patience=0.35,
    stop_after_click=0.4,
)


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
    yield from _user(rnd, model, hits, grades, query_id, session, client, when)


def _user(
    rnd: random.Random,
    model: CascadeModel,
    hits: Sequence[str],
    grades: Mapping[str, int],
    query_id: str,
    session: str,
    client: str,
    when: datetime,
) -> Iterator[dict[str, Any]]:
    """The events of one user scanning ``hits`` top down (the cascade, module doc)."""
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


def interleaved_records(
    rankings_a: Mapping[str, Sequence[str]],
    rankings_b: Mapping[str, Sequence[str]],
    grades: Mapping[str, Mapping[str, int]],
    *,
    names: tuple[str, str],
    sessions: int,
    seed: int,
    method: str = "team_draft",
    depth: int = 10,
    start: datetime | None = None,
    model: CascadeModel | None = None,
    max_searches: int = 2,
) -> Iterator[dict[str, Any]]:
    """UBI records of ``sessions`` sessions whose searches interleave ranker ``names[0]``'s
    ``rankings_a`` with ``names[1]``'s ``rankings_b`` (query text -> hit ids; both name the same
    texts): each query record carries ``Interleaving.as_ubi()``'s fields and the session, and
    its users click as the cascade says (module doc; every user looks at the results)."""
    if sorted(rankings_a) != sorted(rankings_b) or not rankings_a:
        raise InputError("both rankers need rankings for the same, non-empty set of query texts")
    if sessions < 1 or max_searches < 1:
        raise InputError("sessions and max_searches must be 1 or more")
    model = model or CascadeModel()
    rnd = random.Random(seed)
    first = start or datetime(2026, 3, 1, 8, tzinfo=UTC)
    texts = sorted(rankings_a)
    for n in range(sessions):
        when = first + timedelta(seconds=11 * n)
        session = f"interleaved-{when:%Y%m%d}-{n}"
        for k in range(rnd.randint(1, max_searches)):
            text = rnd.choice(texts)
            merged = interleave(rankings_a[text], rankings_b[text], method=method, depth=depth,
                                seed=rnd.getrandbits(32), names=names)  # fmt: skip
            fields = merged.as_ubi()
            query_id, moment = f"{session}-{k}", when + timedelta(seconds=90 * k)
            yield {"query_id": query_id, "client_id": f"c-{session}", "user_query": text,
                   "timestamp": moment.isoformat(),
                   "query_response_hit_ids": fields["query_response_hit_ids"],
                   "query_attributes": {"session_id": session,
                                        **fields["query_attributes"]}}  # fmt: skip
            yield from _user(rnd, model, merged.hit_ids, grades.get(text, {}), query_id,
                             session, f"c-{session}", moment)  # fmt: skip


def attraction_rows(
    rankings: Sequence[Sequence[str]], grades: Sequence[Mapping[str, int]],
    model: CascadeModel, depth: int,
) -> NDArray[np.float64]:  # fmt: skip
    """Per query (row) the click probability of the hit at each position up to ``depth``
    (``model.attraction`` of its grade; 0 where the list has no hit)."""
    import numpy as np

    rows = np.zeros((len(rankings), depth))
    for i, (ranking, graded) in enumerate(zip(rankings, grades, strict=True)):
        for j, doc in enumerate(ranking[:depth]):
            rows[i, j] = model.attraction.get(graded.get(doc, 0), 0.0)
    return rows


def cascade_clicks(
    attraction: NDArray[np.float64], model: CascadeModel, rng: np.random.Generator
) -> NDArray[np.bool_]:
    """The clicks (searches by positions) of one user per row of ``attraction`` (the click
    probability of each position's hit), scanning top down as :func:`ubi_records`' users do:
    after a click they stop with ``stop_after_click``, after a skip go on with ``patience``."""
    import numpy as np

    searches, depth = attraction.shape
    clicks = np.zeros((searches, depth), dtype=bool)
    scanning = np.ones(searches, dtype=bool)
    for j in range(depth):
        clicked = scanning & (rng.random(searches) < attraction[:, j])
        clicks[:, j] = clicked
        leave = rng.random(searches)
        scanning &= np.where(clicked, leave >= model.stop_after_click, leave < model.patience)
    return clicks


def _searches(sessions: int, queries: int, max_searches: int, rng: np.random.Generator
              ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:  # fmt: skip
    """(session of each search, query of each search): 1 to ``max_searches`` per session."""
    import numpy as np

    if sessions < 1 or max_searches < 1 or queries < 1:
        raise InputError("sessions, queries and max_searches must be 1 or more")
    counts = rng.integers(1, max_searches + 1, sessions)
    session = np.repeat(np.arange(sessions), counts)
    return session, rng.integers(0, queries, session.size)


def _shown(
    attraction: NDArray[np.float64], sessions: int, max_searches: int,
    rng: np.random.Generator, population: Population | None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:  # fmt: skip
    """(the click chances of each search's hits, the session of each search)."""
    if population is None:
        session, query = _searches(sessions, attraction.shape[0], max_searches, rng)
        return attraction[query], session
    session, query, factor = population.searches(sessions, attraction.shape[0], max_searches,
                                                 rng)  # fmt: skip
    return population.attraction(attraction[query], factor), session


def session_ctr(
    attraction: NDArray[np.float64], sessions: int, model: CascadeModel,
    rng: np.random.Generator, *, max_searches: int = 2, population: Population | None = None,
) -> NDArray[np.float64]:  # fmt: skip
    """Per simulated session of one A/B arm (``attraction``: :func:`attraction_rows` of the
    arm's rankings), its share of searches with a click: ``online:CTR``'s per-session value.
    With a ``population`` its users and queries differ (``evalplat.events.population``)."""
    import numpy as np

    shown, session = _shown(attraction, sessions, max_searches, rng, population)
    clicked = cascade_clicks(shown, model, rng).any(axis=1)
    return np.bincount(session, weights=clicked, minlength=sessions) / np.bincount(
        session, minlength=sessions
    )


def click_profile(
    attraction: NDArray[np.float64], sessions: int, model: CascadeModel,
    rng: np.random.Generator, *, max_searches: int = 2, population: Population | None = None,
) -> dict[str, float]:  # fmt: skip
    """What a log of one arm looks like, to set beside published logs: searches per session,
    the share of searches with no click and with two clicks or more, and the share of all
    clicks that land on position 1."""
    import numpy as np

    shown, session = _shown(attraction, sessions, max_searches, rng, population)
    clicks = cascade_clicks(shown, model, rng)
    per_search = clicks.sum(axis=1)
    return {
        "searches_per_session": session.size / sessions,
        "no_click": float(np.mean(per_search == 0)),
        "two_clicks_or_more": float(np.mean(per_search >= 2)),
        "clicks_per_search": float(per_search.mean()),
        "clicks_at_position_1": float(clicks[:, 0].sum() / max(1, clicks.sum())),
    }


@dataclass(frozen=True)
class InterleavedQueries:
    """Every interleaving of each query's two rankings (:func:`interleaved_queries`), as arrays
    indexed [query, coins, position]: the team (0 for A, 1 for B, -1 for no hit), the hit's
    click probability, and its rank in A and in B (``inf`` where absent)."""

    method: str
    sides: NDArray[np.int8]
    attraction: NDArray[np.float64]
    ranks_a: NDArray[np.float64]
    ranks_b: NDArray[np.float64]


def interleaved_queries(
    rankings_a: Sequence[Sequence[str]], rankings_b: Sequence[Sequence[str]],
    grades: Sequence[Mapping[str, int]], model: CascadeModel, *, method: str = "team_draft",
    depth: int = 10,
) -> InterleavedQueries:  # fmt: skip
    """Query i interleaves ``rankings_a[i]`` with ``rankings_b[i]``, judged by ``grades[i]``;
    each of its interleavings is built once, by ``interleave(coins=...)``."""
    import numpy as np

    flips = rounds(method, depth)
    shapes = (len(rankings_a), 2**flips, depth)
    sides, attraction = np.full(shapes, -1, dtype=np.int8), np.zeros(shapes)
    ranks = np.full((2, *shapes), np.inf)
    for q, (a, b, graded) in enumerate(zip(rankings_a, rankings_b, grades, strict=True)):
        for coins in range(2**flips):
            one = interleave(a, b, method=method, depth=depth, coins=coins)
            shown = len(one.hit_ids)
            sides[q, coins, :shown] = [0 if team == "a" else 1 for team in one.teams]
            attraction[q, coins, :shown] = [model.attraction.get(graded.get(d, 0), 0.0)
                                            for d in one.hit_ids]  # fmt: skip
            for side in (0, 1):
                ranks[side, q, coins, :shown] = [np.inf if r is None else r
                                                 for r in one.ranks[side]]  # fmt: skip
    return InterleavedQueries(method, sides, attraction, ranks[0], ranks[1])


def interleaved_outcomes(
    queries: InterleavedQueries, sessions: int, model: CascadeModel, rng: np.random.Generator,
    *, max_searches: int = 2, population: Population | None = None,
) -> NDArray[np.int8]:  # fmt: skip
    """Per simulated session of an interleaved test, +1 when ranker A won more of its
    searches, -1 when B did, 0 for a tie (``interleaving.combine``). Each search draws its
    query and its coin flips from ``rng``, which picks one of the query's interleavings: the
    same lists, as likely, as ``interleave`` with a fresh seed gives. With a ``population`` its
    users and queries differ (``evalplat.events.population``)."""
    import numpy as np

    if population is None:
        session, query = _searches(sessions, queries.sides.shape[0], max_searches, rng)
        factor = None
    else:
        session, query, factor = population.searches(sessions, queries.sides.shape[0],
                                                     max_searches, rng)  # fmt: skip
    coin = rng.integers(0, queries.sides.shape[1], query.size)
    shown = queries.attraction[query, coin]
    if population is not None and factor is not None:
        shown = population.attraction(shown, factor)
    clicks = cascade_clicks(shown, model, rng)
    if queries.method == "team_draft":
        won = credit_many(queries.sides[query, coin], clicks)
    else:
        won = credit_balanced_many(queries.ranks_a[query, coin], queries.ranks_b[query, coin],
                                   clicks)  # fmt: skip
    return np.sign(np.bincount(session, weights=won, minlength=sessions)).astype(np.int8)
