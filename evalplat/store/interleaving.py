"""Interleaved experiments in the store: their searches, and ``online:Preference`` as runs.

**Import** (called by ``events import``): an interleaved search (``evalplat.events.teams``) is
stored in ``online_interleaved`` with the two config versions its teams name, each team
reference attributed as a search's ``config`` is (``NAME``: the latest version); a search
naming an unknown config is counted by that name and not stored, as any search of an unknown
config. Two references of one search that resolve to the same version are refused.

**Scores**: for a pair (candidate, baseline) the preference of each UTC day
(``evalplat.events.interleaved_days``) is stored as an online run of the candidate version: its
per-unit scores are the sessions' values (+0.5, 0, -0.5) and its figure ``online:Preference``,
with the wins, ties, losses and the bootstrap interval over sessions in the evaluation's
options. The run's ``online`` options have ``window = "interleaved"`` and ``against`` (the
baseline version), so the A/B comparison of the day's arms never takes it for an arm.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, or_, select

from evalplat import __version__
from evalplat.db.evaluations import Evaluation, MetricMean
from evalplat.db.events import OnlineEvent, OnlineInterleaved
from evalplat.db.models import ConfigVersion, Run
from evalplat.errors import InputError, NotFoundError
from evalplat.store.configs import resolve_config_version
from evalplat.store.evaluation_rows import EvaluationRecord, insert_evaluation

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from evalplat.events.interleaved_days import Day
    from evalplat.events.records import ParsedLog, SearchRecord

PREFERENCE = "online:Preference"
WINDOW = "interleaved"
_CHUNK = 500  # ids per IN (...): well under SQLite's and PostgreSQL's parameter limits


@dataclass(frozen=True)
class PreferenceDay:
    """One stored day of an interleaved experiment, from the candidate's side."""

    run_id: int
    candidate: str
    baseline: str
    day: str
    searches: int
    sessions: int
    wins: int
    ties: int
    losses: int
    preference: float
    low: float
    high: float
    p_value: float
    verdict: str | None = None  # the night's gate: regression, unchanged, improvement

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def interleaved_rows(session: Session, log: ParsedLog) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The rows of the log's interleaved searches whose configs are known, and the count of
    searches per unknown config reference."""
    resolved: dict[str, int | None] = {}
    rows: list[dict[str, Any]] = []
    unknown: Counter[str] = Counter()
    for search in log.searches.values():
        found = search.interleaved
        if found is None:
            continue
        versions = {ref: _resolve(session, ref, resolved, search) for ref in found.pair}
        missing = [ref for ref, version in versions.items() if version is None]
        if missing:
            unknown.update(missing)
            continue
        a, b = sorted(v for v in versions.values() if v is not None)
        if a == b:
            raise InputError(f"teams {' and '.join(found.pair)} are one config version",
                             path=search.path, line=search.line)  # fmt: skip
        side = {ref: ("a" if version == a else "b") for ref, version in versions.items()}
        ranks = None
        if found.ranks is not None:
            ranks = {side[ref]: list(values) for ref, values in found.ranks.items()}
        rows.append({"query_id": search.query_id, "version_a": a, "version_b": b,
                     "method": found.method, "session_id": search.session_id,
                     "client_id": search.client_id, "user_query": search.user_query,
                     "timestamp": search.timestamp, "hit_ids": list(search.hit_ids),
                     "teams": [versions[t] for t in found.teams], "ranks": ranks})  # fmt: skip
    return rows, unknown


def _resolve(
    session: Session, ref: str, resolved: dict[str, int | None], search: SearchRecord
) -> int | None:
    if ref not in resolved:
        try:
            resolved[ref] = resolve_config_version(session, ref)[1].id
        except NotFoundError:
            resolved[ref] = None
        except InputError as error:
            raise InputError(f"team: {error.problem}", path=search.path,
                             line=search.line) from None  # fmt: skip
    return resolved[ref]


def store_interleaved(session: Session, rows: list[dict[str, Any]]) -> int:
    """Insert the rows whose search id is new; how many were new."""
    if not rows:
        return 0
    ids = [row["query_id"] for row in rows]
    stored: set[str] = set()
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        stored.update(
            session.scalars(
                select(OnlineInterleaved.query_id).where(OnlineInterleaved.query_id.in_(chunk))
            )
        )
    new = [row for row in rows if row["query_id"] not in stored]
    if new:
        session.execute(insert(OnlineInterleaved), new)
    return len(new)


class InterleavingMixin:
    def score_preference(
        self, candidate: str, baseline: str, *, since: datetime | None = None, seed: int = 0
    ) -> list[PreferenceDay]:
        """Score and store the candidate's preference against the baseline per UTC day (module
        doc), from ``since`` (a day's start) on; oldest first. ``NAME`` means every version."""
        from evalplat.events.interleaved_days import days

        with self.session() as session:  # type: ignore[attr-defined]
            mine = _versions(session, candidate, "candidate")
            theirs = _versions(session, baseline, "baseline")
            searches = _searches(session, mine, theirs, since)
        scored = []
        for (version, against), found in sorted(searches.items()):
            clicks = self._clicks([s.query_id for s in found])
            for day in days(found, clicks, seed=seed):
                scored.append(self._store_day(version, against, day))
        return sorted(scored, key=lambda d: (d.day, d.candidate, d.baseline))

    def preference_days(self, candidate: str | None = None) -> list[PreferenceDay]:
        """Every stored day of the interleaved experiments (of ``candidate``'s config, a NAME,
        or all), from each run's newest evaluation; by day, then candidate."""
        from evalplat.store.evaluation_rows import latest_evaluations

        with self.session() as session:  # type: ignore[attr-defined]
            runs = [
                run for run in session.scalars(select(Run).where(Run.trigger == "online"))
                if ((run.options or {}).get("online") or {}).get("window") == WINDOW
            ]  # fmt: skip
            newest = latest_evaluations(session, [run.id for run in runs])
            names = {v.id: (v.config.name, f"{v.config.name}@{v.version}")
                     for v in session.scalars(select(ConfigVersion))}  # fmt: skip
            found = []
            for run in runs:
                evaluation = session.get(Evaluation, newest.get(run.id))
                if evaluation is None:
                    continue
                span, figures = run.options["online"], (evaluation.options or {}).get("preference")
                config, ref = names[run.config_version_id]
                if (candidate is not None and config != candidate) or not figures:
                    continue
                mean = _mean(session, evaluation.id)
                found.append(PreferenceDay(
                    run_id=run.id, candidate=ref, baseline=names[span["against"]][1],
                    day=str(span["start"])[:10], searches=int(span["searches"]),
                    sessions=int(span["sessions"]), wins=figures["wins"], ties=figures["ties"],
                    losses=figures["losses"], preference=float(mean), low=figures["low"],
                    high=figures["high"], p_value=figures["p_value"],
                    verdict=figures.get("verdict"),
                ))  # fmt: skip
        return sorted(found, key=lambda d: (d.day, d.candidate, d.baseline))

    def record_preference_verdict(self, run_id: int, verdict: str) -> None:
        """Keep a night's gate verdict on the run's latest evaluation (history and the index
        read it, as they read a comparison's verdict for other runs)."""
        with self.session(write=True) as session:  # type: ignore[attr-defined]
            evaluation = session.scalars(
                select(Evaluation).where(Evaluation.run_id == run_id).order_by(Evaluation.id.desc())
            ).first()  # fmt: skip
            if evaluation is None:
                raise NotFoundError(f"run {run_id} has no evaluation")
            options = dict(evaluation.options or {})
            options["preference"] = {**options.get("preference", {}), "verdict": verdict}
            evaluation.options = options

    def _clicks(self, query_ids: list[str]) -> dict[str, list[int]]:
        clicks: dict[str, list[int]] = defaultdict(list)
        with self.session() as session:  # type: ignore[attr-defined]
            for start in range(0, len(query_ids), _CHUNK):
                chunk = query_ids[start : start + _CHUNK]
                for query_id, position in session.execute(
                    select(OnlineEvent.query_id, OnlineEvent.position).where(
                        OnlineEvent.query_id.in_(chunk), OnlineEvent.action == "click",
                        OnlineEvent.position.is_not(None),
                    )
                ):  # fmt: skip
                    clicks[query_id].append(int(position))
        return clicks

    def _store_day(self, version: int, against: int, day: Day) -> PreferenceDay:
        from evalplat.store.events import ONLINE_TRIGGER, _online_test_set_version

        found = day.preference
        sessions = len(day.per_session)
        span = {"window": WINDOW, "against": against, "start": day.start.isoformat(),
                "end": day.end.isoformat(), "sessions": sessions,
                "searches": day.searches}  # fmt: skip
        figures = {"wins": found.wins_a, "ties": found.ties, "losses": found.wins_b,
                   "low": found.low, "high": found.high, "p_value": found.p_value}  # fmt: skip
        with self.session(write=True) as session:  # type: ignore[attr-defined]
            test_set_version = _online_test_set_version(session)
            run = _preference_run(session, version, against, test_set_version, day.start)
            if run is None:
                run = Run(config_version_id=version, test_set_version_id=test_set_version,
                          status="complete", trigger=ONLINE_TRIGGER, depth=0,
                          evalplat_version=__version__, started_at=day.start,
                          finished_at=day.end, queries_failed=0)  # fmt: skip
                session.add(run)
            run.queries_total = sessions
            run.options = {"online": span}
            session.flush()
            previous = session.scalars(
                select(Evaluation.options).where(Evaluation.run_id == run.id)
                .order_by(Evaluation.id.desc())
            ).first()  # fmt: skip
            verdict = ((previous or {}).get("preference") or {}).get("verdict")
            if verdict is not None:  # the night's gate verdict stands until a night gates again
                figures["verdict"] = verdict
            insert_evaluation(
                session,
                run.id,
                EvaluationRecord(
                    test_set_version_id=test_set_version,
                    per_query=[(PREFERENCE, s, v) for s, v in day.per_session],
                    means={PREFERENCE: (found.delta, sessions)},
                    options={"online": span, "preference": figures},
                ),
            )
            names = {v.id: f"{v.config.name}@{v.version}" for v in session.scalars(
                select(ConfigVersion).where(ConfigVersion.id.in_([version, against])))}  # fmt: skip
            return PreferenceDay(
                run_id=run.id, candidate=names[version], baseline=names[against],
                day=day.start.date().isoformat(), searches=day.searches, sessions=sessions,
                wins=found.wins_a, ties=found.ties, losses=found.wins_b,
                preference=found.delta, low=found.low, high=found.high, p_value=found.p_value,
            )  # fmt: skip


def _mean(session: Session, evaluation_id: int) -> float:
    value = session.scalar(
        select(MetricMean.value).where(MetricMean.evaluation_id == evaluation_id,
                                       MetricMean.metric == PREFERENCE)
    )  # fmt: skip
    return float(value or 0.0)


def _versions(session: Session, ref: str, what: str) -> set[int]:
    try:
        config, version = resolve_config_version(session, ref)
    except InputError as error:
        raise InputError(f"{what}: {error.problem}") from None
    return {version.id} if "@" in ref else {v.id for v in config.versions}


def _searches(
    session: Session, mine: set[int], theirs: set[int], since: datetime | None
) -> dict[tuple[int, int], list[Any]]:
    """The pair's interleaved searches by (candidate version, baseline version)."""
    from evalplat.events.interleaved_days import Search

    both = sorted(mine | theirs)
    statement = select(OnlineInterleaved).where(
        OnlineInterleaved.version_a.in_(both), OnlineInterleaved.version_b.in_(both),
        or_(OnlineInterleaved.version_a.in_(sorted(mine)),
            OnlineInterleaved.version_b.in_(sorted(mine))),
    ).order_by(OnlineInterleaved.timestamp, OnlineInterleaved.query_id)  # fmt: skip
    if since is not None:
        statement = statement.where(OnlineInterleaved.timestamp >= since)
    found: dict[tuple[int, int], list[Any]] = defaultdict(list)
    for row in session.scalars(statement):
        if row.version_a in mine and row.version_b in theirs:
            version, against, own = row.version_a, row.version_b, "a"
        elif row.version_b in mine and row.version_a in theirs:
            version, against, own = row.version_b, row.version_a, "b"
        else:
            continue
        ranks = row.ranks or {}
        found[(version, against)].append(
            Search(
                query_id=row.query_id,
                session_id=row.session_id,
                timestamp=row.timestamp,
                method=row.method,
                teams=tuple("candidate" if t == version else "baseline" for t in row.teams),
                ranks_candidate=_ranks(ranks.get(own)),
                ranks_baseline=_ranks(ranks.get("b" if own == "a" else "a")),
            )
        )
    return found


def _ranks(values: list[Any] | None) -> tuple[int | None, ...] | None:
    return None if values is None else tuple(values)


def _preference_run(
    session: Session, version: int, against: int, test_set_version: int, start: datetime
) -> Run | None:
    for run in session.scalars(
        select(Run).where(Run.config_version_id == version, Run.started_at == start,
                          Run.test_set_version_id == test_set_version)
    ):  # fmt: skip
        online = (run.options or {}).get("online", {})
        if online.get("window") == WINDOW and online.get("against") == against:
            return run
    return None
