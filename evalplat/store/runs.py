"""Runs in the store: the run's life cycle, its results and outcomes, its evaluations.

Life cycle of a run row (``status``):

    running ──(all queries ok)──────────────► complete
            ├─(some queries failed)─────────► partial
            ├─(backend unusable / all failed)► failed
            └─(Ctrl-C, or the process died)─► interrupted

Only ``finish_run`` sets a final status, in the same transaction that stores the evaluation, so a
process killed at any moment leaves a ``running`` run (never one that looks complete). A
``running`` run whose heartbeat is older than ``stale_after`` seconds, or whose pid is gone on
this host, belongs to a dead process: listing or showing it persists it as ``interrupted``.
Query outcomes and their ranked results are committed in batches as queries finish, which is
what lets ``resume`` send only the queries that have no ``ok`` outcome yet.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from evalplat import __version__
from evalplat.configs import content_hash
from evalplat.db.bulk import bulk_insert
from evalplat.db.models import (
    Baseline,
    Config,
    ConfigVersion,
    Evaluation,
    MetricMean,
    QueryScore,
    Result,
    Run,
    RunQuery,
    TestSet,
    TestSetVersion,
)
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.configs import resolve_config_version
from evalplat.store.refs import VersionRef, check_name, parse_version_ref
from evalplat.store.testsets import resolve_test_set_version

if TYPE_CHECKING:
    import pandas as pd

FINAL_STATUSES = ("complete", "partial", "failed", "interrupted")
# A live runner refreshes its heartbeat every few seconds; two minutes of silence means it died
# (or its machine did) even when we cannot check its pid from here.
STALE_AFTER_SECONDS = 120.0
# Searcher kind recorded for config versions that only exist through ``import-run``.
IMPORT_KIND = "import"


@dataclass(frozen=True)
class QueryOutcome:
    """One query's result in a run: ``ok`` with its hits in rank order, or ``failed``."""

    query_id: str
    status: str  # ok | failed
    hits: Sequence[tuple[str, float | None]] = ()
    latency_ms: float | None = None
    attempts: int = 1
    error: str | None = None


@dataclass(frozen=True)
class EvaluationRecord:
    """Scores of a run against one test set version, ready to store.

    ``per_query`` rows are ``(metric, query_id, value)``; ``means`` maps metric → (value,
    topics).
    """

    test_set_version_id: int
    per_query: Iterable[tuple[str, str, float]]
    means: Mapping[str, tuple[float, int]]
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunInfo:
    """What ``runs list`` / ``runs show`` and ``--json`` tell about a run."""

    id: int
    status: str
    config: str
    config_version: int
    config_version_id: int
    searcher: str
    test_set: str
    test_set_version: int
    test_set_version_id: int
    trigger: str
    depth: int
    queries_total: int
    queries_done: int
    queries_failed: int
    started_at: datetime
    finished_at: datetime | None
    heartbeat_at: datetime | None
    host: str | None
    pid: int | None
    error: str | None
    results_pruned_at: datetime | None
    evalplat_version: str
    options: dict[str, Any]
    # means of the latest evaluation, and the test set version it was scored against
    means: dict[str, float]
    scored_against_version: int | None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("started_at", "finished_at", "heartbeat_at", "results_pruned_at"):
            value = getattr(self, key)
            data[key] = None if value is None else value.isoformat()
        return data


class RunsMixin(StoreBase):
    # ── writing a run ────────────────────────────────────────────────────────────────────────

    def create_run(
        self,
        config_version_id: int,
        test_set_version_id: int,
        *,
        depth: int,
        trigger: str = "manual",
        queries_total: int,
        options: dict[str, Any] | None = None,
    ) -> int:
        """Insert a ``running`` run owned by this process; return its id."""
        now = utcnow()
        with self.session() as session:
            run = Run(
                config_version_id=config_version_id,
                test_set_version_id=test_set_version_id,
                status="running",
                trigger=trigger,
                depth=depth,
                evalplat_version=__version__,
                host=socket.gethostname(),
                pid=os.getpid(),
                heartbeat_at=now,
                started_at=now,
                queries_total=queries_total,
                queries_failed=0,
                options=options or {},
            )
            session.add(run)
            session.flush()
            return run.id

    def record_outcomes(self, run_id: int, outcomes: Sequence[QueryOutcome]) -> None:
        """Store a batch of finished queries (outcome rows + ranked results) in one transaction.

        Ranks are the hits' positions, from 1. Also refreshes the heartbeat.
        """
        if not outcomes:
            return
        outcome_rows = [
            (run_id, o.query_id, o.status, o.latency_ms, o.attempts, len(o.hits), o.error)
            for o in outcomes
        ]
        result_rows = (
            (run_id, o.query_id, rank, doc_id, score)
            for o in outcomes
            for rank, (doc_id, score) in enumerate(o.hits, start=1)
        )
        with self.session() as session:
            bulk_insert(
                session,
                RunQuery,
                [
                    "run_id",
                    "query_id",
                    "status",
                    "latency_ms",
                    "attempts",
                    "results_count",
                    "error",
                ],
                outcome_rows,
            )
            bulk_insert(
                session, Result, ["run_id", "query_id", "rank", "doc_id", "score"], result_rows
            )
            failed = sum(1 for o in outcomes if o.status != "ok")
            if failed:
                session.execute(
                    update(Run)
                    .where(Run.id == run_id)
                    .values(queries_failed=Run.queries_failed + failed)
                )
            _touch(session, run_id)

    def heartbeat(self, run_id: int) -> None:
        """Tell readers this process still works on the run.

        The owner (same host and pid) also takes back a run that a reader declared interrupted
        during a long pause (a suspended laptop): it is evidently alive.
        """
        with self.session() as session:
            _touch(session, run_id)

    def reopen_run(self, run_id: int) -> RunInfo:
        """Take over a partial, interrupted or failed run to finish it (``run --resume``).

        Failed query outcomes are deleted so they are searched again; ``ok`` ones are kept.
        """
        with self.session() as session:
            run = _run(session, run_id)
            _observe_liveness(session, [run])
            if run.status == "complete":
                raise InputError(f"run {run_id} is already complete; nothing to resume")
            if run.status == "running":
                raise InputError(
                    f"run {run_id} is still running (pid {run.pid} on {run.host}); "
                    "wait for it or stop it first"
                )
            if run.results_pruned_at is not None:
                raise InputError(f"run {run_id} had its results pruned; start a new run")
            session.execute(
                delete(RunQuery).where(RunQuery.run_id == run_id, RunQuery.status != "ok")
            )
            run.status = "running"
            run.host = socket.gethostname()
            run.pid = os.getpid()
            run.heartbeat_at = utcnow()
            run.finished_at = None
            run.error = None
            run.queries_failed = 0
            session.flush()
            return _infos(session, [run])[0]

    def finish_run(
        self,
        run_id: int,
        status: str,
        *,
        error: str | None = None,
        evaluation: EvaluationRecord | None = None,
    ) -> RunInfo:
        """Set the final ``status`` and store the evaluation, atomically."""
        if status not in FINAL_STATUSES:
            raise ValueError(f"not a final run status: {status!r}")
        with self.session() as session:
            run = _run(session, run_id)
            if evaluation is not None:
                _insert_evaluation(session, run_id, evaluation)
            run.status = status
            run.error = error
            run.finished_at = utcnow()
            run.heartbeat_at = run.finished_at
            run.queries_failed = _count_outcomes(session, run_id, "failed")
            session.flush()
            return _infos(session, [run])[0]

    def add_evaluation(self, run_id: int, evaluation: EvaluationRecord) -> RunInfo:
        """Store another evaluation of a finished run (``rescore``); it becomes the shown one."""
        with self.session() as session:
            run = _run(session, run_id)
            _insert_evaluation(session, run_id, evaluation)
            return _infos(session, [run])[0]

    def config_version_id(self, ref: str | VersionRef) -> int:
        """Database id of the config version ``NAME`` (latest) or ``NAME@VER``."""
        with self.session() as session:
            return resolve_config_version(session, ref)[1].id

    def test_set_version_id(self, ref: str | VersionRef) -> int:
        """Database id of the test set version ``NAME`` (latest) or ``NAME@VER``."""
        with self.session() as session:
            return resolve_test_set_version(session, ref)[1].id

    def import_config_version(self, name: str, label: str | None = None) -> int:
        """The config version an imported run file belongs to; returns its id.

        ``NAME@VER`` names an existing version. Otherwise the latest version of ``NAME`` with
        ``label`` (or simply the latest, without a label) is used; when there is none, a version
        of kind ``import`` is added: the results came from elsewhere and cannot be re-run.
        """
        parsed = parse_version_ref(name, "config reference")
        with self.session() as session:
            config = session.scalar(select(Config).where(Config.name == parsed.name))
            if parsed.version is not None:
                return resolve_config_version(session, parsed)[1].id
            if config is not None and config.versions:
                if label is None:
                    return config.versions[-1].id
                for version in reversed(config.versions):
                    if version.label == label:
                        return version.id
            check_name(parsed.name, "config")
            if config is None:
                config = Config(name=parsed.name, created_at=utcnow())
                session.add(config)
                session.flush()
            version = ConfigVersion(
                config_id=config.id,
                version=len(config.versions) + 1,
                content_hash=content_hash(IMPORT_KIND, {}, label),
                searcher=IMPORT_KIND,
                params={},
                label=label,
                created_at=utcnow(),
            )
            session.add(version)
            session.flush()
            return version.id

    # ── reading runs ─────────────────────────────────────────────────────────────────────────

    def list_runs(
        self, config: str | None = None, *, stale_after: float = STALE_AFTER_SECONDS
    ) -> list[RunInfo]:
        """Runs, newest first, optionally of one config; dead ``running`` runs become
        ``interrupted`` (persisted)."""
        with self.session() as session:
            statement = select(Run).order_by(Run.id.desc())
            if config is not None:
                config_id = session.scalar(select(Config.id).where(Config.name == config))
                if config_id is None:
                    raise NotFoundError(f"no config named '{config}'")
                statement = statement.join(ConfigVersion).where(
                    ConfigVersion.config_id == config_id
                )
            runs = list(session.scalars(statement))
            _observe_liveness(session, runs, stale_after)
            return _infos(session, runs)

    def run_info(self, ref: str | int, *, stale_after: float = STALE_AFTER_SECONDS) -> RunInfo:
        """One run by reference: an id, ``CONFIG@latest`` or ``CONFIG@baseline``."""
        with self.session() as session:
            run = _run(session, resolve_run(session, ref))
            _observe_liveness(session, [run], stale_after)
            return _infos(session, [run])[0]

    def resolve_run(self, ref: str | int) -> int:
        with self.session() as session:
            return resolve_run(session, ref)

    def run_failures(self, run_id: int) -> list[dict[str, Any]]:
        """The failed queries of a run with the error that stuck, by query id."""
        with self.session() as session:
            rows = session.execute(
                select(RunQuery.query_id, RunQuery.attempts, RunQuery.error)
                .where(RunQuery.run_id == run_id, RunQuery.status == "failed")
                .order_by(RunQuery.query_id)
            ).all()
            return [{"query_id": q, "attempts": a, "error": e} for q, a, e in rows]

    def run_outcomes(self, run_id: int) -> pd.DataFrame:
        """Per-query outcomes: ``query_id, status, latency_ms, attempts, results_count, error``."""
        import pandas as pd

        columns = ["query_id", "status", "latency_ms", "attempts", "results_count", "error"]
        with self.session() as session:
            rows = session.execute(
                select(*(getattr(RunQuery, c) for c in columns))
                .where(RunQuery.run_id == run_id)
                .order_by(RunQuery.query_id)
            ).all()
        return pd.DataFrame([tuple(r) for r in rows], columns=columns)

    def load_results(self, run_id: int) -> pd.DataFrame:
        """Ranked results: ``query_id, doc_id, rank, score``, by query then rank."""
        import pandas as pd

        with self.session() as session:
            run = _run(session, run_id)
            if run.results_pruned_at is not None:
                raise InputError(
                    f"run {run_id}: results were pruned on {run.results_pruned_at:%Y-%m-%d} "
                    "by the retention policy; only its scores are kept"
                )
            rows = session.execute(
                select(Result.query_id, Result.doc_id, Result.rank, Result.score)
                .where(Result.run_id == run_id)
                .order_by(Result.query_id, Result.rank)
            ).all()
        frame = pd.DataFrame(
            [tuple(r) for r in rows], columns=["query_id", "doc_id", "rank", "score"]
        )
        frame["rank"] = frame["rank"].astype("int64")
        frame["score"] = pd.to_numeric(frame["score"]).astype("float64")
        return frame

    def evaluation_scores(self, run_id: int) -> pd.DataFrame:
        """Per-query scores of the run's latest evaluation: ``query_id, metric, value``."""
        import pandas as pd

        with self.session() as session:
            evaluation_id = _latest_evaluations(session, [run_id]).get(run_id)
            rows = session.execute(
                select(QueryScore.query_id, QueryScore.metric, QueryScore.value)
                .where(QueryScore.evaluation_id == evaluation_id)
                .order_by(QueryScore.metric, QueryScore.query_id)
            ).all()
        return pd.DataFrame([tuple(r) for r in rows], columns=["query_id", "metric", "value"])

    # ── retention ────────────────────────────────────────────────────────────────────────────

    def prune_results(self, keep_days: float, *, now: datetime | None = None) -> list[int]:
        """Delete the ranked results of finished runs older than ``keep_days``; keep scores.

        Baseline runs keep their results (reports show them side by side with candidates).
        Returns the ids of the runs pruned; ``results_pruned_at`` records when.
        """
        if keep_days < 0:
            raise InputError(f"keep_results_days must be 0 or more, got {keep_days}")
        now = now or utcnow()
        cutoff = now - timedelta(days=keep_days)
        with self.session() as session:
            baselines = select(Baseline.run_id)
            run_ids = list(
                session.scalars(
                    select(Run.id).where(
                        Run.status.in_(FINAL_STATUSES),
                        Run.results_pruned_at.is_(None),
                        Run.finished_at.is_not(None),
                        Run.finished_at < cutoff,
                        Run.id.not_in(baselines),
                    )
                )
            )
            if run_ids:
                session.execute(delete(Result).where(Result.run_id.in_(run_ids)))
                session.execute(
                    update(Run).where(Run.id.in_(run_ids)).values(results_pruned_at=now)
                )
            return run_ids


# ── helpers (session level) ──────────────────────────────────────────────────────────────────


def resolve_run(session: Session, ref: str | int) -> int:
    """``12`` → run 12; ``CONFIG@latest`` → its latest complete run; ``CONFIG@baseline`` →
    its baseline run (the only one, or the most recently set when several test sets have one)."""
    text = str(ref).strip()
    if text.isdigit():
        if session.get(Run, int(text)) is None:
            raise NotFoundError(f"no run with id {text}")
        return int(text)
    name, sep, which = text.rpartition("@")
    if not sep or which not in ("latest", "baseline") or not name:
        raise InputError(f"invalid run reference {text!r}: expected an id, CONFIG@latest or "
                         "CONFIG@baseline")  # fmt: skip
    config_id = session.scalar(select(Config.id).where(Config.name == name))
    if config_id is None:
        raise NotFoundError(f"no config named '{name}'")
    if which == "latest":
        latest = session.scalar(
            select(Run.id)
            .join(ConfigVersion)
            .where(ConfigVersion.config_id == config_id, Run.status == "complete")
            .order_by(Run.id.desc())
            .limit(1)
        )
        if latest is None:
            raise NotFoundError(f"config '{name}' has no complete run yet")
        return latest
    baseline = session.scalar(
        select(Baseline.run_id)
        .where(Baseline.config_id == config_id)
        .order_by(Baseline.set_at.desc(), Baseline.id.desc())
        .limit(1)
    )
    if baseline is None:
        raise NotFoundError(
            f"config '{name}' has no baseline; set one with `evalplat baseline set {name} RUN`"
        )
    return baseline


def _run(session: Session, run_id: int) -> Run:
    run = session.get(Run, run_id)
    if run is None:
        raise NotFoundError(f"no run with id {run_id}")
    return run


def _touch(session: Session, run_id: int) -> None:
    session.execute(
        update(Run)
        .where(
            Run.id == run_id,
            Run.status.in_(("running", "interrupted")),
            Run.host == socket.gethostname(),
            Run.pid == os.getpid(),
        )
        .values(heartbeat_at=utcnow(), status="running", finished_at=None)
    )


def _observe_liveness(
    session: Session, runs: Sequence[Run], stale_after: float = STALE_AFTER_SECONDS
) -> None:
    """Persist as ``interrupted`` every ``running`` run whose process is evidently gone."""
    now = utcnow()
    here = socket.gethostname()
    for run in runs:
        if run.status != "running":
            continue
        beat = _aware(run.heartbeat_at or run.started_at)
        dead_here = run.host == here and run.pid is not None and not _pid_alive(run.pid)
        if dead_here or (now - beat).total_seconds() > stale_after:
            run.status = "interrupted"
            run.finished_at = beat
            run.queries_failed = _count_outcomes(session, run.id, "failed")
            run.error = (
                f"process {run.pid} on {run.host} stopped"
                if dead_here
                else f"no heartbeat since {beat:%Y-%m-%d %H:%M:%S} UTC"
            )
    session.flush()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process with that pid exists
    except OSError:
        return True  # cannot tell (e.g. Windows semantics): rely on the heartbeat
    return True


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything evalplat writes is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _count_outcomes(session: Session, run_id: int, status: str) -> int:
    count = session.scalar(
        select(func.count())
        .select_from(RunQuery)
        .where(RunQuery.run_id == run_id, RunQuery.status == status)
    )
    return int(count or 0)


def _insert_evaluation(session: Session, run_id: int, record: EvaluationRecord) -> None:
    evaluation = Evaluation(
        run_id=run_id,
        test_set_version_id=record.test_set_version_id,
        options=json.loads(json.dumps(record.options, default=str)),
        created_at=utcnow(),
    )
    session.add(evaluation)
    session.flush()
    eid = evaluation.id
    bulk_insert(
        session,
        QueryScore,
        ["evaluation_id", "metric", "query_id", "value"],
        ((eid, metric, query_id, float(value)) for metric, query_id, value in record.per_query),
    )
    bulk_insert(
        session,
        MetricMean,
        ["evaluation_id", "metric", "value", "topics"],
        [(eid, m, float(v), int(t)) for m, (v, t) in record.means.items()],
    )


def _latest_evaluations(session: Session, run_ids: Sequence[int]) -> dict[int, int]:
    rows = session.execute(
        select(Evaluation.run_id, func.max(Evaluation.id))
        .where(Evaluation.run_id.in_(run_ids))
        .group_by(Evaluation.run_id)
    ).all()
    return {run_id: evaluation_id for run_id, evaluation_id in rows}


def _infos(session: Session, runs: Sequence[Run]) -> list[RunInfo]:
    if not runs:
        return []
    ids = [run.id for run in runs]
    latest = _latest_evaluations(session, ids)
    means: dict[int, dict[str, float]] = {}
    scored_version: dict[int, int] = {}
    if latest:
        by_evaluation = {e: r for r, e in latest.items()}
        for evaluation_id, metric, value in session.execute(
            select(MetricMean.evaluation_id, MetricMean.metric, MetricMean.value)
            .where(MetricMean.evaluation_id.in_(list(by_evaluation)))
            .order_by(MetricMean.evaluation_id)
        ):
            means.setdefault(by_evaluation[evaluation_id], {})[metric] = value
        for evaluation_id, version in session.execute(
            select(Evaluation.id, TestSetVersion.version)
            .join(TestSetVersion, Evaluation.test_set_version_id == TestSetVersion.id)
            .where(Evaluation.id.in_(list(by_evaluation)))
        ):
            scored_version[by_evaluation[evaluation_id]] = version
    done = dict(
        session.execute(
            select(RunQuery.run_id, func.count())
            .where(RunQuery.run_id.in_(ids))
            .group_by(RunQuery.run_id)
        ).all()
    )
    names = {
        row[0]: row[1:]
        for row in session.execute(
            select(Run.id, Config.name, ConfigVersion.version, ConfigVersion.searcher)
            .add_columns(TestSet.name, TestSetVersion.version)
            .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
            .join(Config, ConfigVersion.config_id == Config.id)
            .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
            .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
            .where(Run.id.in_(ids))
        )
    }
    infos = []
    for run in runs:
        config, config_version, searcher, test_set, test_set_version = names[run.id]
        infos.append(
            RunInfo(
                id=run.id,
                status=run.status,
                config=config,
                config_version=config_version,
                config_version_id=run.config_version_id,
                searcher=searcher,
                test_set=test_set,
                test_set_version=test_set_version,
                test_set_version_id=run.test_set_version_id,
                trigger=run.trigger,
                depth=run.depth,
                queries_total=run.queries_total,
                queries_done=int(done.get(run.id, 0)),
                queries_failed=run.queries_failed,
                started_at=_aware(run.started_at),
                finished_at=None if run.finished_at is None else _aware(run.finished_at),
                heartbeat_at=None if run.heartbeat_at is None else _aware(run.heartbeat_at),
                host=run.host,
                pid=run.pid,
                error=run.error,
                results_pruned_at=(
                    None if run.results_pruned_at is None else _aware(run.results_pruned_at)
                ),
                evalplat_version=run.evalplat_version,
                options=run.options or {},
                means=means.get(run.id, {}),
                scored_against_version=scored_version.get(run.id),
            )
        )
    return infos
