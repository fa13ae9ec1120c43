"""Storing a comparison: its row, its metrics and its segments (``Store.compare_runs``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from evalplat.comparison.verdicts import BOUND_FIELDS
from evalplat.db.evaluations import Comparison, ComparisonMetric
from evalplat.store.segments import save_segments

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy.orm import Session

    from evalplat.comparison.changes import Changes
    from evalplat.comparison.verdicts import CompareOptions, ComparisonResult, OverlapSummary


def record_comparison(
    session: Session,
    result: ComparisonResult,
    evaluations: tuple[int, int],
    options: CompareOptions,
    changes: Changes,
    facts: Sequence[Any],
    overlap: OverlapSummary | None,
    *,
    segmented: bool,
    gating: bool,
    now: datetime,
) -> int:
    """Store a comparison with its metrics and segments; its id."""
    eval_a, eval_b = evaluations
    row = Comparison(
        baseline_evaluation_id=eval_a,
        candidate_evaluation_id=eval_b,
        options={
            "compare": asdict(options),
            "gates": [asdict(g) for g in result.gates],
            "metrics": [m.metric for m in result.metrics],
            "changes": changes.to_dict(),
            "bounds": {m.metric: m.bound_dict() for m in result.metrics},
            "weighted": result.weighted,
            "segmented": segmented,
            **({"gating": True} if gating else {}),
            "facts": [fact.to_dict() for fact in facts],
        },
        verdict=result.verdict,
        overlap=None if overlap is None else overlap.to_dict(),
        created_at=now,
    )
    session.add(row)
    session.flush()
    for metric in result.metrics:
        values = metric.to_dict()
        for key in ("higher_is_better", "max_drop", "max_relative_drop", "alpha"):
            values.pop(key)
        for key in BOUND_FIELDS:
            values.pop(key)
        session.add(ComparisonMetric(comparison_id=row.id, **values))
    save_segments(session, row.id, result.segments)
    return row.id
