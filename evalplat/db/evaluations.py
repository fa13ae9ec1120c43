"""The tables of scoring and comparing: evaluations with their per-query scores and means,
comparisons with their per-metric and per-segment verdicts, and the pinned baselines.

    evaluation (run scored against a test_set_version) 1─* query_score, metric_mean, score_copy
    comparison (baseline evaluation x candidate evaluation) 1─* comparison_metric,
               comparison_segment
    baseline (config x test_set → run)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from evalplat.db.models import Run
from evalplat.db.schema import Base, ExternalId, Name
from evalplat.db.schema import created_column as _created
from evalplat.db.schema import id_column as _id

# ── evaluations ──────────────────────────────────────────────────────────────────────────────


class Evaluation(Base):
    """A run scored against one test set version's judgments (``rescore`` adds another)."""

    __tablename__ = "evaluation"

    id: Mapped[int] = _id()
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), index=True)
    test_set_version_id: Mapped[int] = mapped_column(ForeignKey("test_set_version.id"))
    # Engine options recorded with the numbers (missing-topic rule, exclusions, weighting).
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = _created()

    run: Mapped[Run] = relationship()


class ScoreCopy(Base):
    """An evaluation's per-query scores (``query_id, metric, value``, by metric then query id)
    as Arrow IPC streams, ``part`` 0, 1, ... in order, made in the transaction that stores the
    evaluation (``evalplat.store.copies``); ``query_score`` stays the record. Scores never
    change once stored, so neither does their copy."""

    __tablename__ = "score_copy"

    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluation.id", ondelete="CASCADE"), primary_key=True
    )
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class QueryScore(Base):
    __tablename__ = "query_score"
    # stored once, as the key's B-tree, on SQLite (migration 0022); ignored elsewhere
    __table_args__ = ({"sqlite_with_rowid": False},)

    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluation.id", ondelete="CASCADE"), primary_key=True
    )
    metric: Mapped[str] = mapped_column(String(80), primary_key=True)
    query_id: Mapped[str] = mapped_column(ExternalId, primary_key=True)
    value: Mapped[float] = mapped_column(Float)


class MetricMean(Base):
    __tablename__ = "metric_mean"

    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluation.id", ondelete="CASCADE"), primary_key=True
    )
    metric: Mapped[str] = mapped_column(String(80), primary_key=True)
    value: Mapped[float] = mapped_column(Float)
    topics: Mapped[int] = mapped_column(Integer)


# ── comparisons and baselines ───────────────────────────────────────────────────────────


class Comparison(Base):
    __tablename__ = "comparison"

    id: Mapped[int] = _id()
    baseline_evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluation.id"))
    candidate_evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluation.id"))
    # test, seed, alpha, thresholds, correction: everything needed to reproduce the verdicts
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    verdict: Mapped[str] = mapped_column(String(20))
    # rank overlap (Jaccard@k, RBO, Kendall tau) and other whole-run figures
    overlap: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = _created()


class ComparisonMetric(Base):
    __tablename__ = "comparison_metric"

    comparison_id: Mapped[int] = mapped_column(
        ForeignKey("comparison.id", ondelete="CASCADE"), primary_key=True
    )
    metric: Mapped[str] = mapped_column(String(80), primary_key=True)
    baseline: Mapped[float] = mapped_column(Float)
    candidate: Mapped[float] = mapped_column(Float)
    delta: Mapped[float] = mapped_column(Float)
    relative_delta: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    test: Mapped[str] = mapped_column(String(20))
    p_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    p_corrected: Mapped[float | None] = mapped_column(Float, nullable=True)
    effect_size: Mapped[float | None] = mapped_column(Float, nullable=True)
    wins: Mapped[int] = mapped_column(Integer)
    ties: Mapped[int] = mapped_column(Integer)
    losses: Mapped[int] = mapped_column(Integer)
    baseline_judged: Mapped[float | None] = mapped_column(Float, nullable=True)
    candidate_judged: Mapped[float | None] = mapped_column(Float, nullable=True)
    gated: Mapped[bool] = mapped_column(Boolean, default=False)
    verdict: Mapped[str] = mapped_column(String(20))


class ComparisonSegment(Base):
    """One metric over one segment (the queries carrying a tag) of a comparison."""

    __tablename__ = "comparison_segment"

    comparison_id: Mapped[int] = mapped_column(
        ForeignKey("comparison.id", ondelete="CASCADE"), primary_key=True
    )
    metric: Mapped[str] = mapped_column(String(80), primary_key=True)
    segment: Mapped[str] = mapped_column(Name, primary_key=True)
    queries: Mapped[int] = mapped_column(Integer)
    baseline: Mapped[float] = mapped_column(Float)
    candidate: Mapped[float] = mapped_column(Float)
    delta: Mapped[float] = mapped_column(Float)
    relative_delta: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    test: Mapped[str] = mapped_column(String(20))
    p_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    p_corrected: Mapped[float | None] = mapped_column(Float, nullable=True)
    gated: Mapped[bool] = mapped_column(Boolean, default=False)
    verdict: Mapped[str] = mapped_column(String(20))
    # why the segment is not gated (too few queries), None otherwise
    note: Mapped[str | None] = mapped_column(String(200), nullable=True)


class Baseline(Base):
    """The pinned ("production") run of a config on a test set; nightly compares with it."""

    __tablename__ = "baseline"
    __table_args__ = (UniqueConstraint("config_id", "test_set_id"),)

    id: Mapped[int] = _id()
    config_id: Mapped[int] = mapped_column(ForeignKey("config.id", ondelete="CASCADE"))
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_set.id", ondelete="CASCADE"))
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id"))
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    set_at: Mapped[datetime] = _created()
