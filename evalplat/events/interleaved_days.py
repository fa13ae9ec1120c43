"""The preference of an interleaved experiment per UTC day: clicks credited, sessions counted.

Per interleaved search, its clicks (``click`` events with a position, 1-based as logged) are
credited to the configs that contributed the clicked hits (``evalplat.events.interleaving``:
team draft, or balanced with each config's ranks); the search is won by the config with more
credited clicks, a tie otherwise (a search without clicks is a tie).

The unit is the **session**, as for every online measure: a session is won by the config that
won more of its searches that day, a tie otherwise, so a session with ten searches weighs what a
session with one does, and the bootstrap resamples sessions, not searches. The candidate's
preference over N sessions is (wins + ties/2) / N - 0.5, positive when the candidate's results
drew more clicks; each session's value is +0.5 (won), 0 (tie) or -0.5 (lost), whose mean it is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from evalplat.events.interleaving import (
    Outcome,
    Preference,
    combine,
    credit,
    credit_balanced,
    preference,
)

CANDIDATE, BASELINE = "a", "b"  # the candidate takes side "a": ΔAB is its preference
_VALUE = {"a": 0.5, "tie": 0.0, "b": -0.5}


@dataclass(frozen=True)
class Search:
    """One interleaved search, its teams as ``"candidate"`` or ``"baseline"`` per hit."""

    query_id: str
    session_id: str
    timestamp: datetime
    method: str
    teams: tuple[str, ...]
    ranks_candidate: tuple[int | None, ...] | None = None
    ranks_baseline: tuple[int | None, ...] | None = None


@dataclass(frozen=True)
class Day:
    """One UTC day of an experiment: the preference over its sessions and each session's value."""

    start: datetime
    searches: int
    preference: Preference
    per_session: tuple[tuple[str, float], ...]

    @property
    def end(self) -> datetime:
        return self.start + timedelta(days=1)


def search_outcome(search: Search, clicked: Iterable[int]) -> Outcome:
    """Who won one search: ``a`` (the candidate), ``b`` (the baseline) or ``tie``."""
    places = [p - 1 for p in clicked if p >= 1]
    if search.method == "balanced":
        ranks_a = search.ranks_candidate or (None,) * len(search.teams)
        ranks_b = search.ranks_baseline or (None,) * len(search.teams)
        return credit_balanced(ranks_a, ranks_b, places)
    teams = ["a" if t == "candidate" else "b" for t in search.teams]
    return credit(teams, places, a=CANDIDATE, b=BASELINE)


def days(
    searches: Sequence[Search],
    clicks: Mapping[str, Sequence[int]],
    *,
    seed: int = 0,
    draws: int = 10_000,
) -> list[Day]:
    """The experiment's preference per UTC day of its searches, oldest first (module doc)."""
    by_day: dict[datetime, dict[str, list[Outcome]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[datetime, int] = defaultdict(int)
    for search in searches:
        stamp = search.timestamp
        start = stamp.replace(hour=0, minute=0, second=0, microsecond=0)
        by_day[start][search.session_id].append(
            search_outcome(search, clicks.get(search.query_id, ()))
        )
        counts[start] += 1
    result = []
    for start in sorted(by_day):
        sessions = sorted(by_day[start].items())
        outcomes = [combine(found) for _, found in sessions]  # a session: who won more searches
        result.append(
            Day(
                start=start,
                searches=counts[start],
                preference=preference(outcomes, draws=draws, seed=seed),
                per_session=tuple(
                    (session, _VALUE[outcome])
                    for (session, _), outcome in zip(sessions, outcomes, strict=True)
                ),
            )
        )
    return result
