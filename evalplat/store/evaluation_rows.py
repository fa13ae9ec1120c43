"""An evaluation's rows: storing a run's scores against a test set version (per-query scores,
their columnar copy and the means, in one transaction) and finding a run's evaluations.

A run may be scored again (``rescore``, new judgments): each scoring is a new evaluation, and
"the run's scores" means its latest one, overall (``latest_evaluations``) or on one test set
version (``evaluation_on``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.db.bulk import bulk_insert, insert_columns
from evalplat.db.evaluations import Evaluation, MetricMean, QueryScore
from evalplat.store.base import utcnow
from evalplat.store.copies import keep_scores, score_table

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class EvaluationRecord:
    """Scores of a run against one test set version, ready to store.

    ``per_query`` rows are ``(metric, query_id, value)`` (or a DataFrame with those columns,
    the columnar form the runner hands over); ``means`` maps metric → (value, topics).
    """

    test_set_version_id: int
    per_query: Iterable[tuple[str, str, float]] | pd.DataFrame
    means: Mapping[str, tuple[float, int]]
    options: dict[str, Any] = field(default_factory=dict)


def insert_evaluation(session: Session, run_id: int, record: EvaluationRecord) -> None:
    evaluation = Evaluation(
        run_id=run_id,
        test_set_version_id=record.test_set_version_id,
        options=json.loads(json.dumps(record.options, default=str)),
        created_at=utcnow(),
    )
    session.add(evaluation)
    session.flush()
    eid = evaluation.id
    # the scores and their copy (``evalplat.store.copies``) from one table, sorted once
    table = score_table(*_score_columns(record.per_query))
    columns: dict[str, Any] = {"evaluation_id": eid}
    columns.update((name, table.column(name)) for name in table.column_names)
    insert_columns(session, QueryScore, columns, key_sorted=True)
    keep_scores(session, eid, table)
    bulk_insert(
        session,
        MetricMean,
        ["evaluation_id", "metric", "value", "topics"],
        [(eid, m, float(v), int(t)) for m, (v, t) in record.means.items()],
    )


def _score_columns(
    per_query: Iterable[tuple[str, str, float]] | pd.DataFrame,
) -> tuple[Any, Any, Any]:
    """``(metric, query_id, value)`` rows, or a frame with those columns, as three columns."""
    if hasattr(per_query, "columns"):  # a DataFrame: already columnar
        frame: Any = per_query
        return frame["metric"], frame["query_id"], frame["value"].astype("float64")
    rows = list(per_query)
    if not rows:
        return [], [], []
    metrics, query_ids, values = zip(*rows, strict=True)
    return list(metrics), list(query_ids), [float(v) for v in values]


def latest_evaluations(session: Session, run_ids: Sequence[int]) -> dict[int, int]:
    rows = session.execute(
        select(Evaluation.run_id, func.max(Evaluation.id))
        .where(Evaluation.run_id.in_(run_ids))
        .group_by(Evaluation.run_id)
    ).all()
    return {run_id: evaluation_id for run_id, evaluation_id in rows}


def evaluation_on(session: Session, run_id: int, test_set_version_id: int) -> int | None:
    """The run's latest evaluation against that test set version, if it was ever scored so."""
    return session.scalar(
        select(func.max(Evaluation.id)).where(
            Evaluation.run_id == run_id, Evaluation.test_set_version_id == test_set_version_id
        )
    )
