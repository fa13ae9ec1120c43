"""Runs in the store: the run's life cycle, writing its results and outcomes, its evaluations
(reading them back: :mod:`evalplat.store.run_reads`).

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

import os
import socket
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select, update

from evalplat import __version__
from evalplat.db.bulk import bulk_insert, insert_columns
from evalplat.db.evaluations import Evaluation, MetricMean
from evalplat.db.models import Config, ConfigVersion, Result, Run, RunQuery, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.searchers.configs import content_hash
from evalplat.store.base import claim_name, utcnow
from evalplat.store.configs import make_current, new_config_version, resolve_config_version
from evalplat.store.copies import RESULT_COLUMNS, drop_results, keep_result_table, keep_results
from evalplat.store.evaluation_rows import EvaluationRecord, evaluation_on, insert_evaluation
from evalplat.store.refs import VersionRef, check_label, check_name, parse_version_ref
from evalplat.store.run_reads import RunReadsMixin
from evalplat.store.run_rows import (
    FINAL_STATUSES,
    IMPORT_KIND,
    STALE_AFTER_SECONDS,
    QueryOutcome,
    RunInfo,
    count_outcomes,
    forget_liveness,
    observe_liveness,
    resolve_run,
    result_columns_of,
    run_infos,
    run_row,
    touch,
)
from evalplat.store.testsets import resolve_test_set_version

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from numpy.typing import NDArray
    from sqlalchemy.orm import Session

__all__ = [
    "FINAL_STATUSES",
    "IMPORT_KIND",
    "STALE_AFTER_SECONDS",
    "EvaluationRecord",
    "QueryOutcome",
    "RunInfo",
    "RunsMixin",
    "resolve_run",
]


def lock_run(session: Session, run_id: int) -> None:
    """Check that the run exists and hold its row until the transaction ends (PostgreSQL's
    ``FOR KEY SHARE``: no one deletes it meanwhile): what a foreign key on ``result.run_id``
    did for every row, once for the write of all of them."""
    found = session.scalar(
        select(Run.id).where(Run.id == run_id).with_for_update(read=True, key_share=True)
    )
    if found is None:
        raise NotFoundError(f"no run with id {run_id}")


class RunsMixin(RunReadsMixin):
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

    def record_outcomes(
        self,
        run_id: int,
        outcomes: Sequence[QueryOutcome],
        *,
        results: Mapping[str, Any] | None = None,
    ) -> None:
        """Store a batch of finished queries (outcome rows + ranked results) in one transaction.

        Ranks are the hits' positions, from 1. ``results``: the batch's result columns when the
        caller made them already (``result_columns_of``: Arrow arrays or lists, in its key
        order). Also refreshes the heartbeat.
        """
        if not outcomes:
            return
        self._scored_results = None  # read before this batch: no longer the run's results
        outcome_rows = [
            (run_id, o.query_id, o.status, o.latency_ms, o.attempts, len(o.hits), o.error)
            for o in outcomes
        ]
        result_columns = results if results is not None else result_columns_of(run_id, outcomes)
        with self.session() as session:
            lock_run(session, run_id)
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
            if result_columns is not None:
                drop_results(session, [run_id])  # a resumed run: its results change
                insert_columns(session, Result, result_columns, key_sorted=True)
            failed = sum(1 for o in outcomes if o.status != "ok")
            if failed:
                session.execute(
                    update(Run)
                    .where(Run.id == run_id)
                    .values(queries_failed=Run.queries_failed + failed)
                )
            touch(session, run_id)

    def record_ranked(
        self,
        run_id: int,
        query_ids: Sequence[str],
        counts: Sequence[int] | NDArray[np.int64],
        results: pa.Table,
    ) -> None:
        """Store a whole ranked run in one transaction (``import-run``): an ``ok`` outcome for
        each of ``query_ids`` with its number of results (``counts``), and ``results`` (Arrow
        columns ``query_id, doc_id, rank, score`` in the table's key order: by query id in byte
        order, then rank), written as they are. Also refreshes the heartbeat."""
        self._scored_results = None
        outcomes = {"run_id": run_id, "query_id": list(query_ids), "status": "ok",
                    "attempts": 1, "results_count": counts}  # fmt: skip
        columns = {name: results.column(name) for name in RESULT_COLUMNS}
        with self.session() as session:
            lock_run(session, run_id)
            insert_columns(session, RunQuery, outcomes, key_sorted=True)
            insert_columns(session, Result, {"run_id": run_id, **columns}, key_sorted=True)
            touch(session, run_id)

    def heartbeat(self, run_id: int) -> None:
        """Tell readers this process still works on the run.

        The owner (same host and pid) also takes back a run that a reader declared interrupted
        during a long pause (a suspended laptop): it is evidently alive.
        """
        with self.session() as session:
            touch(session, run_id)

    def reopen_run(self, run_id: int) -> RunInfo:
        """Take over a partial, interrupted or failed run to finish it (``run --resume``).

        Failed query outcomes are deleted so they are searched again; ``ok`` ones are kept.
        """
        self._scored_results = None
        with self.session() as session:
            run = run_row(session, run_id)
            observe_liveness(session, [run])
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
            drop_results(session, [run_id])
            run.status = "running"
            run.host = socket.gethostname()
            run.pid = os.getpid()
            run.heartbeat_at = utcnow()
            run.finished_at = None
            run.error = None
            run.queries_failed = 0
            session.flush()
            return run_infos(session, [run])[0]

    def finish_run(
        self,
        run_id: int,
        status: str,
        *,
        error: str | None = None,
        evaluation: EvaluationRecord | None = None,
        results: pd.DataFrame | None = None,
        result_table: pa.Table | None = None,
    ) -> RunInfo:
        """Set the final ``status`` and store the evaluation, atomically.

        The run's whole results as scored become the finished run's kept results
        (``load_results``): its comparison does not read them again, and they are stored as the
        run's copy (``evalplat.store.copies``) for later reads. They are ``results`` when given
        (the searching process held them, typed and ordered as ``load_results`` reads them),
        else those this store read whole to score the run, with no batch stored since.
        ``result_table``: the run's whole results as Arrow columns (stored by
        ``record_ranked``, or the same rows as ``results``), written as its copy.
        """
        if status not in FINAL_STATUSES:
            raise ValueError(f"not a final run status: {status!r}")
        scored, self._scored_results = self._scored_results, None
        if results is not None:
            scored = (run_id, results)
        if scored is not None and scored[0] != run_id:
            scored = None
        with self.session() as session:
            run = run_row(session, run_id)
            if evaluation is not None:
                insert_evaluation(session, run_id, evaluation)
            run.status = status
            run.error = error
            run.finished_at = utcnow()
            run.heartbeat_at = run.finished_at
            run.queries_failed = count_outcomes(session, run_id, "failed")
            if result_table is not None:
                keep_result_table(session, run_id, result_table)
            elif scored is not None:
                keep_results(session, run_id, scored[1])
            session.flush()
            info = run_infos(session, [run])[0]
            stamp = (run.status, run.finished_at)
        if scored is not None:
            self._keep_results(run_id, stamp, scored[1])
        return info

    def add_evaluation(self, run_id: int, evaluation: EvaluationRecord) -> RunInfo:
        """Store another evaluation of a finished run (``rescore``); it becomes the shown one."""
        with self.session() as session:
            run = run_row(session, run_id)
            insert_evaluation(session, run_id, evaluation)
            return run_infos(session, [run])[0]

    def scored_versions(self, run_id: int) -> list[int]:
        """The test set version numbers the run has scores against, oldest first."""
        with self.session() as session:
            rows = session.scalars(
                select(TestSetVersion.version)
                .join(Evaluation, Evaluation.test_set_version_id == TestSetVersion.id)
                .where(Evaluation.run_id == run_id)
                .distinct()
            ).all()
        return sorted(rows)

    def scored_metrics(self, run_id: int, test_set_ref: str | VersionRef) -> set[str]:
        """The metrics of the run's latest scores against that test set version (none when it
        has no scores there)."""
        with self.session() as session:
            version = resolve_test_set_version(session, test_set_ref)[1]
            evaluation = evaluation_on(session, run_id, version.id)
            if evaluation is None:
                return set()
            rows = session.scalars(
                select(MetricMean.metric).where(MetricMean.evaluation_id == evaluation)
            ).all()
        return set(rows)

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

        ``NAME@VER`` names an existing version. Otherwise the current version of ``NAME``
        (without a label), or its latest version with ``label``, which becomes current: the
        results are the config's as it is now. When there is none, a version of kind
        ``import`` is added and made current: the results came from elsewhere and cannot be
        re-run.
        """
        parsed = parse_version_ref(name, "config reference")
        if label is not None:
            check_label(label)
        with self.session(write=True) as session:
            config = session.scalar(select(Config).where(Config.name == parsed.name))
            if parsed.version is not None or (config is not None and config.versions
                                              and label is None):  # fmt: skip
                return resolve_config_version(session, parsed)[1].id
            if config is not None:
                for version in reversed(config.versions):
                    if version.label == label:
                        make_current(config, version)
                        return version.id
            check_name(parsed.name, "config")
            if config is None:
                config = claim_name(session, Config, parsed.name)
            digest = content_hash(IMPORT_KIND, {}, label)
            version = new_config_version(session, config, digest, IMPORT_KIND, {}, label)
            make_current(config, version)
            return version.id

    # ── reading runs ─────────────────────────────────────────────────────────────────────────

    def list_runs(
        self, config: str | None = None, *, stale_after: float = STALE_AFTER_SECONDS
    ) -> list[RunInfo]:
        """Runs, newest first, optionally of one config; dead ``running`` runs read as
        ``interrupted`` (persisted unless the store is read-only)."""
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
            return self._live_infos(session, runs, stale_after)

    def run_info(self, ref: str | int, *, stale_after: float = STALE_AFTER_SECONDS) -> RunInfo:
        """One run by reference: an id, ``CONFIG@latest``, ``CONFIG@baseline`` or ``CONFIG@VER``."""
        with self.session() as session:
            run = run_row(session, resolve_run(session, ref))
            return self._live_infos(session, [run], stale_after)[0]

    def _live_infos(self, session: Session, runs: list[Run], stale_after: float) -> list[RunInfo]:
        """``run_infos`` of ``runs`` with dead processes seen as interrupted: recorded when the
        store can write, only read on a read-only one."""
        record = not self.read_only
        observe_liveness(session, runs, stale_after, record=record)
        with session.no_autoflush:
            infos = run_infos(session, runs)
        if not record:
            forget_liveness(session, runs)
        return infos

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
