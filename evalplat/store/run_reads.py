"""Reading a run's rows back, and dropping them: per-query outcomes, ranked results (kept per
store for the command, see ``load_results``), the latest evaluation's per-query scores, and the
retention policy that deletes old results while keeping their scores."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select, update

from evalplat.db.bulk import read_frame
from evalplat.db.evaluations import QueryScore
from evalplat.db.models import Result, Run, RunQuery
from evalplat.errors import InputError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.baseline_rows import baseline_rows
from evalplat.store.copies import drop_results, read_results, read_scores
from evalplat.store.evaluation_rows import latest_evaluations
from evalplat.store.run_rows import FINAL_STATUSES, run_row

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    import pandas as pd
    from sqlalchemy.orm import Session

RESULT_TYPES = {"query_id": "str", "doc_id": "str", "rank": "int64", "score": "float64"}
OUTCOME_TYPES = {"query_id": "str", "status": "str", "latency_ms": "float64",
                 "attempts": "int64", "results_count": "int64", "error": "str"}  # fmt: skip
SCORE_TYPES = {"query_id": "str", "metric": "str", "value": "float64"}


class RunReadsMixin(StoreBase):
    def run_outcomes(self, run_id: int) -> pd.DataFrame:
        """Per-query outcomes: ``query_id, status, latency_ms, attempts, results_count, error``."""
        types = OUTCOME_TYPES
        with self.session() as session:
            return read_frame(
                session,
                select(*(getattr(RunQuery, c) for c in types))
                .where(RunQuery.run_id == run_id)
                .order_by(RunQuery.query_id),
                list(types),
                types,
            )

    def load_results(
        self,
        run_id: int,
        columns: Sequence[str] | None = None,
        *,
        queries: Collection[str] | None = None,
    ) -> pd.DataFrame:
        """Ranked results: ``query_id, doc_id, rank, score`` (or only ``columns`` of these), by
        query then rank; with ``queries``, those queries' results only.

        A finished run's results are read once per store: the last two runs read whole are
        kept (a comparison and its report read the same two), and reused while the run's row
        shows it unchanged (same status and finish time, not pruned). A read of some queries
        takes them from a kept run, or else reads only them and keeps nothing (a comparison
        page shows twenty queries of a 10,000-query run). A running run's results read whole
        (to score it) are kept in waiting: ``finish_run`` keeps them as the finished run's
        unless a batch was stored or the run reopened since. The frame is shared: callers must
        not modify it in place.
        """
        wanted = list(columns) if columns is not None else list(RESULT_TYPES)
        with self.session() as session:
            run = run_row(session, run_id)
            if run.results_pruned_at is not None:
                raise InputError(
                    f"run {run_id}: results were pruned on {run.results_pruned_at:%Y-%m-%d} "
                    "by the retention policy; only its scores are kept"
                )
            stamp = (run.status, run.finished_at)
            cached = self._results_cache.get(run_id)
            if cached is not None and cached[0] == stamp and set(wanted) <= set(cached[1]):
                cached_frame: pd.DataFrame = cached[1]
                if queries is not None:
                    chosen = cached_frame["query_id"].isin(list(queries))
                    return cached_frame.loc[chosen, wanted].reset_index(drop=True)
                return cached_frame[wanted]
            if queries is not None:
                return _results_of(session, run_id, sorted(set(queries)), wanted)
            # a finished run is read whole (its report needs every column); a running one only
            # as asked, and never kept
            final = run.status in FINAL_STATUSES
            read = list(RESULT_TYPES) if final else wanted
            frame = read_results(session, run_id, RESULT_TYPES) if final else None
            if frame is None:
                frame = read_frame(
                    session,
                    select(*(getattr(Result, c) for c in read))
                    .where(Result.run_id == run_id)
                    .order_by(Result.query_id, Result.rank),
                    read,
                    {c: RESULT_TYPES[c] for c in read},
                )
        if final:
            self._keep_results(run_id, stamp, frame)
        elif read == list(RESULT_TYPES):
            self._scored_results = (run_id, frame)
        return frame[wanted]

    def _keep_results(self, run_id: int, stamp: Any, frame: pd.DataFrame) -> None:
        self._results_cache.pop(run_id, None)
        self._results_cache[run_id] = (stamp, frame)
        while len(self._results_cache) > 2:
            self._results_cache.pop(next(iter(self._results_cache)))

    def evaluation_scores(self, run_id: int) -> pd.DataFrame:
        """Per-query scores of the run's latest evaluation: ``query_id, metric, value``."""
        with self.session() as session:
            evaluation_id = latest_evaluations(session, [run_id]).get(run_id)
            return scores_of(session, evaluation_id, ordered=True)

    # ── retention ────────────────────────────────────────────────────────────────────────────

    def prune_results(self, keep_days: float, *, now: datetime | None = None) -> list[int]:
        """Delete the ranked results of finished runs older than ``keep_days``; keep scores.

        Baseline runs keep their results (reports show them side by side with candidates),
        a config's first complete run included while no baseline is pinned or stored.
        Returns the ids of the runs pruned; ``results_pruned_at`` records when.
        """
        if keep_days < 0:
            raise InputError(f"keep_results_days must be 0 or more, got {keep_days}")
        now = now or utcnow()
        cutoff = now - timedelta(days=keep_days)
        with self.session() as session:
            # every baseline, stored or computed (evalplat.store.baselines)
            baselines = [row.run_id for row in baseline_rows(session)]
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
                drop_results(session, run_ids)
                session.execute(
                    update(Run).where(Run.id.in_(run_ids)).values(results_pruned_at=now)
                )
            return run_ids


def scores_of(
    session: Session, evaluation_id: int | None, *, ordered: bool = False
) -> pd.DataFrame:
    """Per-query scores of one evaluation: ``query_id, metric, value`` (by metric and query
    when ``ordered``), from the evaluation's copy when it has one."""
    if evaluation_id is not None:
        copied = read_scores(session, evaluation_id, SCORE_TYPES)
        if copied is not None:
            return copied
    query = select(QueryScore.query_id, QueryScore.metric, QueryScore.value).where(
        QueryScore.evaluation_id == evaluation_id
    )
    if ordered:
        query = query.order_by(QueryScore.metric, QueryScore.query_id)
    return read_frame(session, query, ["query_id", "metric", "value"], SCORE_TYPES)


def _results_of(
    session: Session, run_id: int, queries: list[str], columns: list[str]
) -> pd.DataFrame:
    """The results of some queries of a run, by query then rank within each group of 500
    queries (under any driver's cap on parameters), read through the primary key's
    ``(run_id, query_id)`` prefix."""
    import pandas as pd

    parts = [
        read_frame(
            session,
            select(*(getattr(Result, c) for c in columns))
            .where(Result.run_id == run_id, Result.query_id.in_(queries[i : i + 500]))
            .order_by(Result.query_id, Result.rank),
            columns,
            {c: RESULT_TYPES[c] for c in columns},
        )
        for i in range(0, max(len(queries), 1), 500)
    ]
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
