"""The attribution of an interleaved search: which config contributed each hit.

An interleaved search shows one list merged from two configs' rankings. Its record carries:

- ``teams``: one config reference (``NAME`` or ``NAME@VER``) per hit, aligned with the hits, the
  config whose turn placed it (a list, or a text list as ``hit_ids`` reads it);
- ``interleaving``: the method, ``team_draft`` (the default when ``teams`` is given) or
  ``balanced``;
- ``rankers``: the two configs that took part (``evalplat.interleave`` writes them), so that a
  search where one ranker returned nothing (all hits from one team, or no hits at all) still
  names its experiment and counts, credited as the method credits it (no click on the empty
  team's side: a tie or the other team's win). Without ``rankers`` (older logs), the teams must
  name the two configs;
- for ``balanced``, ``ranks``: for each of the two configs, the 1-based rank of each hit in that
  config's own list (``null`` where it did not rank the hit).

Refused, naming the file and line: ``interleaving`` or ``ranks`` without ``teams``; teams of
another length than the hits; more or fewer than two distinct configs (``rankers``: other than
two, or teams naming a config outside them); an unknown method;
balanced without ranks, ranks naming other configs, of another length than the hits, with a
rank shown twice in one list, or leaving a hit without a rank in its own team's list; a
``config`` that is not one of the two teams. A session's interleaved searches must all name the
same two configs with the same method (:class:`SessionExperiments`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.events.values import hit_ids
from evalplat.inputs.validation import check_name, shown

METHODS = ("team_draft", "balanced")
TEAM_MAX_LENGTH = 220  # as a config reference: a name of 200 characters, "@", a version

Where = Path | str | None


@dataclass(frozen=True)
class Attribution:
    """An interleaved search's method, per-hit teams and (balanced) per-config ranks."""

    method: str
    teams: tuple[str, ...]
    ranks: dict[str, tuple[int | None, ...]] | None = None
    rankers: tuple[str, str] | None = None  # as logged; the teams' two configs without it

    @property
    def pair(self) -> tuple[str, str]:
        """The two configs, sorted."""
        first, second = sorted(self.rankers or set(self.teams))
        return first, second


def attribution(
    raw_teams: Any,
    method: Any,
    raw_ranks: Any,
    hits: tuple[str, ...],
    config: str | None,
    path: Where,
    line: int | None,
    raw_rankers: Any = None,
) -> Attribution | None:
    """The search's attribution (module doc), or None for a search that is not interleaved."""

    def fail(problem: str) -> InputError:
        return InputError(problem, path=path, line=line)

    if (raw_teams is None or raw_teams == "") and (hits or raw_rankers in (None, "")):
        if method not in (None, "") or raw_ranks not in (None, "") or raw_rankers not in (None, ""):
            raise fail("interleaved search without teams (one config per hit)")
        return None
    if method in (None, ""):
        method = "team_draft"
    if not isinstance(method, str) or method not in METHODS:
        got = shown(method) if isinstance(method, str) else type(method).__name__
        raise fail(f"unknown interleaving method {got} (methods: {', '.join(METHODS)})")
    try:
        teams = hit_ids(raw_teams, path, line)  # ids in order, as a hit list reads
    except InputError as error:
        if "shown twice" not in error.problem:
            raise fail(error.problem.replace("hit id", "team")) from None
        teams = _repeating(raw_teams)
    for team in teams:
        check_name(team, "team", max_length=TEAM_MAX_LENGTH, path=path, line=line)
    if len(teams) != len(hits):
        raise fail(f"teams lists {len(teams)} configs for {len(hits)} hits (one per hit)")
    rankers = _rankers(raw_rankers, path, line)
    distinct = sorted(set(teams))
    if rankers is not None:
        outside = [team for team in distinct if team not in rankers]
        if outside:
            raise fail(f"team {shown(outside[0])} is not one of the search's rankers "
                       f"({', '.join(rankers)})")  # fmt: skip
        distinct = sorted(rankers)
    elif len(distinct) != 2:
        names = ", ".join(distinct) or "none"
        raise fail(f"an interleaved search needs two configs in its teams, got {len(distinct)}"
                   f" ({names}); a log naming its two rankers may show one team")  # fmt: skip
    if config is not None and config not in distinct:
        raise fail(
            f"config {shown(config)} is not one of the search's teams ({', '.join(distinct)})"
        )
    ranks = _ranks(raw_ranks, teams, distinct, fail) if method == "balanced" else None
    return Attribution(method, teams, ranks, rankers)


def _rankers(raw: Any, path: Where, line: int | None) -> tuple[str, str] | None:
    """The two configs a search names as its rankers, or None when it names none."""
    if raw is None or raw == "":
        return None
    try:
        names = hit_ids(raw, path, line)  # a list, or a text list, as teams read
    except InputError as error:
        raise InputError(error.problem.replace("hit id", "ranker"), path=path,
                         line=line) from None  # fmt: skip
    if len(names) != 2:
        raise InputError(f"rankers must name two configs, got {len(names)}",
                         path=path, line=line)  # fmt: skip
    for name in names:
        check_name(name, "ranker", max_length=TEAM_MAX_LENGTH, path=path, line=line)
    return names[0], names[1]


def _repeating(raw: Any) -> tuple[str, ...]:
    """Teams repeat by nature: read them as a hit list without the once-only rule."""
    if isinstance(raw, str):
        text = raw.strip()
        items = json.loads(text) if text.startswith("[") else text.replace("|", " ").split()
    else:
        items = raw
    return tuple(str(item) for item in items)


def _ranks(
    raw: Any, teams: tuple[str, ...], pair: list[str], fail: Any
) -> dict[str, tuple[int | None, ...]]:
    if isinstance(raw, str) and raw.strip().startswith("{"):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            raise fail("ranks: not a valid JSON object") from None
    if raw is None or raw == "":
        raise fail("balanced interleaving without ranks (each config's rank of each hit)")
    if not isinstance(raw, dict) or sorted(raw) != pair:
        raise fail(f"ranks must be an object with one list per team ({', '.join(pair)})")
    ranks: dict[str, tuple[int | None, ...]] = {}
    for name in pair:
        values = raw[name]
        if not isinstance(values, list) or len(values) != len(teams):
            raise fail(f"ranks of {name} must list one rank (or null) per hit ({len(teams)})")
        if not all(v is None or (type(v) is int and 1 <= v <= 10**6) for v in values):
            raise fail(f"ranks of {name} must be integers from 1 or null")
        known = [v for v in values if v is not None]
        if len(set(known)) != len(known):
            raise fail(f"ranks of {name} give one rank to two hits")
        ranks[name] = tuple(values)
    for position, team in enumerate(teams, start=1):
        if ranks[team][position - 1] is None:
            raise fail(f"hit at position {position} comes from {team} but has no rank in its list")
    return ranks


@dataclass
class SessionExperiments:
    """The experiment (two configs and a method) each session's interleaved searches name."""

    seen: dict[str, tuple[tuple[str, str], str, str]] = field(default_factory=dict)

    def check(self, session: str, found: Attribution, path: Where, line: int | None) -> None:
        """``InputError`` when the session named another pair or method before."""
        here = f"{Path(path or '').name} line {line}"
        first = self.seen.setdefault(session, (found.pair, found.method, here))
        if first[:2] != (found.pair, found.method):
            (a, b), method, at = first
            raise InputError(f"session {shown(session)} names {' and '.join(found.pair)} "
                             f"({found.method}) but {a} and {b} ({method}) at {at}: one "
                             "session belongs to one experiment", path=path,
                             line=line)  # fmt: skip
