"""The records a comparison's operational facts are read from (``evalplat.comparison.facts``):
each run's per-query outcomes (status, result count), the queries of the test set version it
searched whose text is blank, and Judged@k from the scores the comparison read.

A run without records (imported from a file, or online) has no outcome facts; its texts are
read only for the queries it has records of.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.comparison.facts import Fact, RunRecords, comparison_facts
from evalplat.db.bulk import read_frame
from evalplat.db.models import Query, Run, RunQuery

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_facts", "run_records", "stored_facts"]


def judged_metric(*scores: pd.DataFrame) -> tuple[str, int] | None:
    """The Judged@k every frame has: Judged@10 when there, else the smallest k; None without."""
    from evalplat.metrics.names import parse

    common: set[str] | None = None
    for frame in scores:
        names = {str(m) for m in frame["metric"].unique() if str(m).startswith("Judged@")}
        common = names if common is None else common & names
    cutoffs = {}
    for name in common or ():
        parsed = parse(name)
        if parsed.cutoff is not None and not parsed.params:
            cutoffs[parsed.cutoff] = name
    if not cutoffs:
        return None
    k = 10 if 10 in cutoffs else min(cutoffs)
    return cutoffs[k], k


def run_records(
    session: Session, run_id: int, scores: pd.DataFrame, judged: tuple[str, int] | None
) -> RunRecords:
    """One run's records: outcomes, the searched queries whose text is blank, Judged@k from
    ``scores``. Only blank texts are read (trimmed in SQL): the others make no fact."""
    outcomes = read_frame(
        session,
        select(RunQuery.query_id, RunQuery.status, RunQuery.results_count).where(
            RunQuery.run_id == run_id
        ),
        ["query_id", "status", "results_count"],
        {"query_id": "str", "status": "str", "results_count": "int64"},
    )
    ids = outcomes["query_id"].tolist()
    status = dict(zip(ids, outcomes["status"].tolist(), strict=True))
    results = dict(zip(ids, outcomes["results_count"].tolist(), strict=True))
    run = session.get(Run, run_id)
    texts: dict[str, str] = {}
    if run is not None and status:
        blank = session.scalars(
            select(Query.query_id).where(
                Query.test_set_version_id == run.test_set_version_id,
                func.trim(func.coalesce(Query.text, "")) == "",
            )
        )
        texts = {str(q): "" for q in blank if str(q) in status}
    values: dict[str, float] = {}
    if judged is not None:
        picked = scores[scores["metric"] == judged[0]]
        values = dict(zip(picked["query_id"].tolist(), picked["value"].tolist(), strict=True))
    return RunRecords(run_id, status, results, texts, values, 10 if judged is None else judged[1])


def read_facts(
    session: Session, run_ids: Sequence[int], scores: Sequence[pd.DataFrame]
) -> list[Fact]:
    """The facts of a comparison of ``run_ids`` (baseline, candidate) scored as ``scores``."""
    judged = judged_metric(*scores)
    baseline, candidate = (
        run_records(session, run_id, frame, judged)
        for run_id, frame in zip(run_ids, scores, strict=True)
    )
    return comparison_facts(baseline, candidate)


def stored_facts(
    saved: list[dict[str, Any]] | None,
    run_ids: Sequence[int],
    scores: Callable[[], Sequence[pd.DataFrame]],
    session: Callable[[], AbstractContextManager[Session]],
) -> list[Fact]:
    """The facts a stored comparison kept, or (stored before facts were kept) read again from
    the runs' records and the ``scores`` of its evaluations, which have not changed since."""
    if saved is not None:
        return [Fact.from_dict(item) for item in saved]
    frames = scores()
    with session() as opened:
        return read_facts(opened, run_ids, frames)
