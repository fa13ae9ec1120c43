"""Query weights and segments of a comparison in the store.

A comparison reads its queries' weights and tags from the test set version both runs were
scored on (``query.weight``, ``query.tags``; part of the version's content hash, so they cannot
change under a stored comparison). Weights are in force when any query has one; segments when
any query has a tag. Each (metric, segment) row is kept in ``comparison_segment`` and read back
verbatim, as the metric rows are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalplat.comparison.results import SegmentComparison
from evalplat.db.evaluations import ComparisonSegment, Evaluation
from evalplat.db.models import Query

__all__ = ["QueryFacts", "load_segments", "query_facts", "save_segments"]

QueryFacts = tuple[dict[str, float] | None, dict[str, list[str]] | None]


def query_facts(session: Session, evaluation_id: int) -> QueryFacts:
    """Weights (query id -> weight, the queries that have one) and tags (query id -> tags) of
    the evaluation's test set version; each None when no query has any."""
    version_id = session.scalar(
        select(Evaluation.test_set_version_id).where(Evaluation.id == evaluation_id)
    )
    rows = session.execute(
        select(Query.query_id, Query.weight, Query.tags).where(
            Query.test_set_version_id == version_id
        )
    ).all()
    weights = {str(q): float(w) for q, w, _ in rows if w is not None}
    tags = {str(q): [str(t) for t in t_list] for q, _, t_list in rows if t_list}
    return weights or None, tags or None


def save_segments(
    session: Session, comparison_id: int, segments: Sequence[SegmentComparison]
) -> None:
    for segment in segments:
        values = segment.to_dict()
        values.pop("higher_is_better")
        session.add(ComparisonSegment(comparison_id=comparison_id, **values))


def load_segments(
    session: Session, comparison_id: int, computed: Sequence[SegmentComparison]
) -> tuple[SegmentComparison, ...]:
    """The stored rows, in the order of ``computed`` (the same comparison recomputed), which
    supplies what is not stored (each metric's direction)."""
    stored = {
        (row.metric, row.segment): row
        for row in session.scalars(
            select(ComparisonSegment).where(ComparisonSegment.comparison_id == comparison_id)
        )
    }
    kept = []
    names = [f.name for f in fields(SegmentComparison) if f.name != "higher_is_better"]
    for fresh in computed:
        row = stored.get((fresh.metric, fresh.segment))
        if row is None:
            continue
        values = {name: getattr(row, name) for name in names}
        kept.append(SegmentComparison(higher_is_better=fresh.higher_is_better, **values))
    return tuple(kept)
