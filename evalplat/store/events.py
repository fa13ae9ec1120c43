"""Online events in the store: importing logs, and scoring online measures as runs.

**Import.** Every record is validated first (``evalplat.events.records``); then each search is
attributed to a config version by its ``config``/``variant`` attribute (``NAME``: the latest
version, ``NAME@VER``: that one), or by the ``config`` given for the whole import. Searches of
an unknown config, or with none, are not stored and are counted by name in the outcome; events
are stored whatever their search, and those whose search is not known (yet) are counted. An
interleaved search is attributed by its teams instead (``evalplat.store.interleaving``). Record
ids already stored are skipped and counted, so importing a log twice changes nothing. With
``max_invalid``, bad lines up to that many are set aside in a rejects file next to their input
and the rest is stored in one transaction; one more refuses the import as a whole.

**Scores.** Online measures are stored as the evaluation of an *online run*: a run of the
config version (trigger ``online``) over the reserved test set ``online``, one per config
version and window (a UTC day), started at the window's start. Per-session values are its
per-unit scores and the means its figures, so ``history CONFIG --testset online``, baselines,
``compare``, gates, alerts and report pages read them as they read any run. Scoring a window
again adds a new evaluation to the same run (the newest is shown), as ``rescore`` does.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select

from evalplat import __version__
from evalplat.db.events import OnlineEvent, OnlineInterleaved, OnlineQuery
from evalplat.db.models import Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.events.records import ParsedLog, SearchRecord, read_logs
from evalplat.events.rejects import check_rejects_path, write_rejects
from evalplat.inputs.validation import check_number
from evalplat.store.base import utcnow
from evalplat.store.configs import resolve_config_version
from evalplat.store.evaluation_rows import EvaluationRecord, insert_evaluation
from evalplat.store.event_sources import EventSourcesMixin
from evalplat.store.interleaving import interleaved_rows, store_interleaved
from evalplat.store.run_rows import RunInfo, run_infos
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.orm import Session

    from evalplat.events.sessions import WindowScores
    from evalplat.events.warehouse import Warehouse
    from evalplat.metrics.registry import Metric

ONLINE_TRIGGER = "online"
_CHUNK = 500


@dataclass(frozen=True)
class EventImport:
    """What an import stored and what it left out, with counts."""

    searches: int
    events: int
    duplicates: int
    unknown_configs: dict[str, int] = field(default_factory=dict)
    unattributed: int = 0
    events_without_search: int = 0
    lines: int = 0  # lines (Parquet rows) read as records
    rejected: int = 0  # bad lines set aside (``max_invalid``)
    rejects_files: list[str] = field(default_factory=list)
    interleaved: int = 0  # interleaved searches stored (also counted in ``searches``)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EventsMixin(EventSourcesMixin):
    def import_events(
        self,
        paths: Sequence[Path],
        *,
        format: str | None = None,
        mapping: dict[str, str] | None = None,
        config: str | None = None,
        max_invalid: int = 0,
    ) -> EventImport:
        """Validate and store interaction logs (module doc); nothing is written on bad input.

        With ``max_invalid`` up to that many bad lines are set aside, written to a rejects file
        next to their input (``evalplat.events.rejects``), and the rest is stored."""
        check_number(max_invalid, "--max-invalid", minimum=0)
        paths = [Path(p) for p in paths]
        if max_invalid:
            for path in paths:
                check_rejects_path(path)
        log = read_logs(paths, format=format, mapping=mapping, max_invalid=max_invalid)
        with self.session(write=True) as session:
            versions, unknown = _attribute(session, log, config)
            merged, unknown_teams = interleaved_rows(session, log)
            unknown.update(unknown_teams)
            plain = [s for s in log.searches.values() if s.interleaved is None]
            unattributed = sum(1 for s in plain if (s.config or config) is None)
            new_searches = _new(session, OnlineQuery.query_id, list(versions))
            new_events = _new(session, OnlineEvent.event_id, list(log.events))
            searches = [log.searches[q] for q in new_searches]
            if searches:
                session.execute(
                    insert(OnlineQuery),
                    [
                        {"query_id": s.query_id, "config_version_id": versions[s.query_id],
                         "session_id": s.session_id, "client_id": s.client_id,
                         "user_query": s.user_query, "timestamp": s.timestamp,
                         "hit_ids": list(s.hit_ids), "hits": len(s.hit_ids)}
                        for s in searches
                    ],
                )  # fmt: skip
            interleaved = store_interleaved(session, merged)
            events = [log.events[k] for k in new_events]
            if events:
                session.execute(
                    insert(OnlineEvent),
                    [
                        {"event_id": e.event_id, "query_id": e.query_id, "action": e.action,
                         "session_id": e.session_id, "client_id": e.client_id,
                         "timestamp": e.timestamp, "object_id": e.object_id,
                         "position": e.position, "value": e.value}
                        for e in events
                    ],
                )  # fmt: skip
            placed = _known(session, {e.query_id for e in log.events.values()})
        stored_already = (len(versions) - len(new_searches) + len(merged) - interleaved
                          + len(log.events) - len(new_events))  # fmt: skip
        written = write_rejects(paths, log.rejects) if max_invalid else []
        return EventImport(
            searches=len(new_searches) + interleaved,
            events=len(new_events),
            interleaved=interleaved,
            duplicates=log.duplicates + stored_already,
            unknown_configs=dict(sorted(unknown.items())),
            unattributed=unattributed,
            events_without_search=sum(1 for e in log.events.values() if e.query_id not in placed),
            lines=log.lines,
            rejected=len(log.rejects),
            rejects_files=[str(p) for p in written],
        )

    def score_online(
        self,
        configs: Sequence[str] | None = None,
        *,
        window: str = "day",
        metrics: Sequence[str] | None = None,
        since: datetime | None = None,
        engine: str = "sql",
        warehouse: Warehouse | None = None,
    ) -> list[RunInfo]:
        """Score the online measures of each config version (of ``configs``, or every one with
        searches) per window, and store them as online runs (module doc); oldest first. With
        ``since``, only the windows that start at or after it. ``engine`` and ``warehouse``: see
        :meth:`online_scores`."""
        scored = self.online_scores(configs, window=window, metrics=metrics, since=since,
                                    engine=engine, warehouse=warehouse)  # fmt: skip
        run_ids = [self._store_window(version_id, window, scores) for version_id, scores in scored]
        with self.session() as session:
            runs = [session.get(Run, run_id) for run_id in run_ids]
            return run_infos(session, [r for r in runs if r is not None])

    def online_scores(
        self,
        configs: Sequence[str] | None = None,
        *,
        window: str = "day",
        metrics: Sequence[str] | None = None,
        since: datetime | None = None,
        engine: str = "sql",
        warehouse: Warehouse | None = None,
    ) -> list[tuple[int, WindowScores]]:
        """(config version id, its scores over one window), by version then time, unstored.

        ``engine="sql"`` (the default) runs the online statement where the log is
        (``evalplat.store.event_sources``: DuckDB, PostgreSQL or ``warehouse``);
        ``engine="pandas"`` scores the stored events with the NumPy kernels, one version and
        window at a time (attached files and warehouses are not read)."""
        from evalplat.events.sessions import DEFAULT_ONLINE_METRICS, WINDOWS
        from evalplat.metrics import parse_all

        if window not in WINDOWS:
            raise InputError(f"window must be one of {', '.join(WINDOWS)}, got {window!r}")
        chosen = parse_all(list(metrics or DEFAULT_ONLINE_METRICS))
        for metric in chosen:
            if metric.spec.unit != "session":
                raise InputError(f"{metric} is not an online measure (online:...)")
            if metric.spec.compute == "online:preference":
                raise InputError(f"{metric} is scored from interleaved searches: evalplat "
                                 "online preference CANDIDATE BASELINE")  # fmt: skip
        if engine == "pandas":
            return self._pandas_scores(configs, window, chosen, since)
        if engine != "sql":
            raise InputError(f"engine must be sql or pandas, got {engine!r}")
        from evalplat.events.engine import window_scores

        with self.session() as session:
            wanted = _chosen_versions(session, configs)
        rows = self._online_rows(chosen, window=window, since=since, version_ids=wanted,
                                 warehouse=warehouse)  # fmt: skip
        return [
            (version_id, scores)
            for version_id, scores in window_scores(rows, chosen, window)
            if since is None or scores.window.start >= since
        ]

    def _pandas_scores(
        self,
        configs: Sequence[str] | None,
        window: str,
        chosen: Sequence[Metric],
        since: datetime | None,
    ) -> list[tuple[int, WindowScores]]:
        from evalplat.events.sessions import online_log, score_window, windows

        with self.session() as session:
            version_ids = _versions_with_searches(session, configs)
        scored = []
        for version_id in version_ids:
            searches, events = self._online_frames(version_id)
            for span, part in windows(searches, window):
                if since is not None and span.start < since:
                    continue
                scored.append((version_id, score_window(span, online_log(part, events), chosen)))
        return scored

    def _online_frames(self, version_id: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        import pandas as pd

        with self.session() as session:
            searches = session.execute(
                select(OnlineQuery.query_id, OnlineQuery.session_id, OnlineQuery.timestamp,
                       OnlineQuery.hits).where(OnlineQuery.config_version_id == version_id)
                .order_by(OnlineQuery.timestamp, OnlineQuery.query_id)
            ).all()  # fmt: skip
            events = session.execute(
                select(OnlineEvent.query_id, OnlineEvent.action, OnlineEvent.timestamp,
                       OnlineEvent.position, OnlineEvent.value)
                .join(OnlineQuery, OnlineQuery.query_id == OnlineEvent.query_id)
                .where(OnlineQuery.config_version_id == version_id)
            ).all()  # fmt: skip
        search_frame = pd.DataFrame(searches, columns=["query_id", "session_id", "timestamp",
                                                       "hits"])  # fmt: skip
        event_frame = pd.DataFrame(events, columns=["query_id", "action", "timestamp",
                                                    "position", "value"])  # fmt: skip
        for frame in (search_frame, event_frame):
            frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
        event_frame["position"] = event_frame["position"].astype("float64")
        event_frame["value"] = event_frame["value"].astype("float64")
        return search_frame, event_frame

    def _store_window(self, version_id: int, window: str, scores: Any) -> int:
        """The online run of the version and window (created once), with a new evaluation."""
        span = {"window": window, "start": scores.window.start.isoformat(),
                "end": scores.window.end.isoformat(), "sessions": scores.sessions,
                "searches": scores.searches, "events": scores.events}  # fmt: skip
        with self.session(write=True) as session:
            test_set_version = _online_test_set_version(session)
            run = _online_run(session, version_id, test_set_version, scores.window.start, window)
            if run is None:
                run = Run(
                    config_version_id=version_id,
                    test_set_version_id=test_set_version,
                    status="complete",
                    trigger=ONLINE_TRIGGER,
                    depth=0,
                    evalplat_version=__version__,
                    started_at=scores.window.start,
                    finished_at=scores.window.end,
                    queries_total=scores.sessions,
                    queries_failed=0,
                    options={"online": span},
                )
                session.add(run)
                session.flush()
            run.queries_total = scores.sessions
            # the measures in the order asked: the first is the one pages lead with
            run.options = {"online": span, "metrics": list(scores.means)}
            means = {m: v for m, v in scores.means.items() if v[1] > 0}
            insert_evaluation(
                session,
                run.id,
                EvaluationRecord(
                    test_set_version_id=test_set_version,
                    per_query=_kept(scores.per_session, means),
                    means=means,
                    options={"online": span},
                ),
            )
            return run.id


def _attribute(
    session: Session, log: ParsedLog, default: str | None
) -> tuple[dict[str, int], Counter[str]]:
    """{search record id: config version id} for the searches whose config is known, and the
    count of searches per unknown config reference."""
    if default is not None:
        try:
            resolve_config_version(session, default)
        except InputError as error:  # NotFoundError included
            raise type(error)(f"--config: {error.problem}") from None
    first: dict[str, SearchRecord] = {}
    for search in log.searches.values():
        if search.interleaved is not None:
            continue  # attributed by its teams (evalplat.store.interleaving)
        first.setdefault(search.config or default or "", search)
    first.pop("", None)
    resolved: dict[str, int] = {}
    for ref, search in sorted(first.items()):
        try:
            resolved[ref] = resolve_config_version(session, ref)[1].id
        except NotFoundError:
            continue
        except InputError as error:
            raise InputError(f"config: {error.problem}", path=search.path,
                             line=search.line) from None  # fmt: skip
    unknown: Counter[str] = Counter()
    versions: dict[str, int] = {}
    for search in log.searches.values():
        wanted = search.config or default
        if wanted is None or search.interleaved is not None:
            continue
        if wanted in resolved:
            versions[search.query_id] = resolved[wanted]
        else:
            unknown[wanted] += 1
    return versions, unknown


def _new(session: Session, column: Any, keys: list[str]) -> list[str]:
    """``keys`` that the column does not hold yet, in their order."""
    stored: set[str] = set()
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        stored.update(session.scalars(select(column).where(column.in_(chunk))))
    return [key for key in keys if key not in stored]


def _known(session: Session, query_ids: set[str]) -> set[str]:
    ordered = sorted(query_ids)
    known: set[str] = set()
    for start in range(0, len(ordered), _CHUNK):
        chunk = ordered[start : start + _CHUNK]
        for table in (OnlineQuery, OnlineInterleaved):
            known.update(session.scalars(select(table.query_id).where(table.query_id.in_(chunk))))
    return known


def _kept(per_session: Any, means: dict[str, Any]) -> Any:
    """The per-session rows of the measures that have a figure (rows or a frame)."""
    if hasattr(per_session, "columns"):
        return per_session[per_session["metric"].isin(list(means))]
    return ((m, s, v) for m, s, v in per_session if m in means)


def _chosen_versions(session: Session, configs: Sequence[str] | None) -> list[int] | None:
    """The config versions ``configs`` name (every version of a bare NAME); None: all."""
    if not configs:
        return None
    wanted: list[int] = []
    for ref in configs:
        try:
            config, version = resolve_config_version(session, ref)
        except InputError as error:
            raise InputError(f"CONFIG {error.problem}") from None
        if "@" in ref:
            wanted.append(version.id)
        else:
            wanted.extend(v.id for v in config.versions)
    return wanted


def _versions_with_searches(session: Session, configs: Sequence[str] | None) -> list[int]:
    statement = select(OnlineQuery.config_version_id).distinct()
    wanted = _chosen_versions(session, configs)
    if wanted is not None:
        statement = statement.where(OnlineQuery.config_version_id.in_(wanted))
    return sorted(session.scalars(statement))


def _online_test_set_version(session: Session) -> int:
    """The reserved test set every online run is scored on (created on first use)."""
    test_set = session.scalar(select(TestSet).where(TestSet.name == ONLINE_TEST_SET))
    if test_set is None:
        test_set = TestSet(name=ONLINE_TEST_SET, created_at=utcnow())
        session.add(test_set)
        session.flush()
    version = session.scalar(
        select(TestSetVersion).where(TestSetVersion.test_set_id == test_set.id)
        .order_by(TestSetVersion.version)
    )  # fmt: skip
    if version is None:
        version = TestSetVersion(
            test_set_id=test_set.id,
            version=1,
            content_hash=hashlib.sha256(b"evalplat online events").hexdigest(),
            queries_count=0,
            judgments_count=0,
            source={"kind": "online"},
            created_at=utcnow(),
        )
        session.add(version)
        session.flush()
    return version.id


def _online_run(
    session: Session, version_id: int, test_set_version: int, start: datetime, window: str
) -> Run | None:
    for run in session.scalars(
        select(Run).where(
            Run.config_version_id == version_id,
            Run.test_set_version_id == test_set_version,
            Run.trigger == ONLINE_TRIGGER,
            Run.started_at == start,
        )
    ):
        if (run.options or {}).get("online", {}).get("window") == window:
            return run
    return None
