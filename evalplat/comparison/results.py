"""What a comparison says: per-metric rows, segments, movers, overlap and the result (what
it is asked, its gates and options, is ``evalplat.comparison.options``).

Frozen dataclasses with ``to_dict`` for JSON; NaN and infinities become null. The computation
that fills them is ``evalplat.comparison.verdicts.compare_scores``; the store keeps them,
reports render them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

# what a comparison is asked lives in its own module; its names are read from here too
from evalplat.comparison.options import (
    MODEL_MODES,
    TESTS,
    UNJUDGED_MODES,
    VERDICTS,
    CompareOptions,
    Gate,
    TestName,
    Verdict,
)
from evalplat.metrics.numbers import counted

__all__ = [
    "BOUND_FIELDS",
    "MODEL_MODES",
    "TESTS",
    "UNJUDGED_MODES",
    "VERDICTS",
    "CompareOptions",
    "ComparisonResult",
    "Gate",
    "MetricComparison",
    "Movers",
    "OverlapSummary",
    "QueryMove",
    "SegmentComparison",
    "TestName",
    "Verdict",
]  # fmt: skip

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.changes import Changes
    from evalplat.comparison.facts import Fact


@dataclass(frozen=True)
class MetricComparison:
    """One metric of a comparison: means, delta with CI, test, verdict, wins/ties/losses.

    ``delta = candidate - baseline`` (raw, whatever the direction); ``relative_delta = delta /
    |baseline|`` (None when the baseline mean is 0). ``wins`` counts queries where the candidate
    is better in the metric's direction. ``*_judged`` are mean Judged@k of each side (k = the
    metric's cutoff) when known.

    The ``bound_*`` fields describe the optimistic bound (``evalplat.comparison.guard``): both runs
    scored as if every unjudged document in either top ``bound_depth`` were relevant (the candidate
    shows ``unjudged`` of them, in ``unjudged_queries`` queries): their means, Holm-corrected
    p-value and the verdict there; ``baseline_unjudged`` counts the baseline's unjudged top-k
    documents. None when the bound was not computed (results pruned, or no ranked results).
    ``unjudged_mode`` is the rule that decided (``Gate.unjudged``).

    The ``human_*`` and ``model_*`` fields put the two views side by side when the test set
    version holds a judge's grades (``judge``): the means and delta on the people's grades
    alone, and with the judge's grades counted. ``model_share`` is the judge's share of the
    grades of both runs' top ``bound_depth`` documents; ``model_decided`` is true when the
    verdict rests on model grades (``evalplat.comparison.model_views``).
    """

    metric: str
    higher_is_better: bool
    baseline: float
    candidate: float
    delta: float
    relative_delta: float | None
    ci_low: float | None
    ci_high: float | None
    test: str
    p_value: float | None
    p_corrected: float | None
    effect_size: float | None
    wins: int
    ties: int
    losses: int
    baseline_judged: float | None
    candidate_judged: float | None
    gated: bool
    verdict: str
    max_drop: float | None = None
    max_relative_drop: float | None = None
    alpha: float = 0.05
    unjudged_mode: str = "bound"
    bound_depth: int | None = None
    unjudged: int | None = None
    unjudged_queries: int | None = None
    baseline_unjudged: int | None = None
    bound_baseline: float | None = None
    bound_candidate: float | None = None
    bound_p_corrected: float | None = None
    bound_verdict: str | None = None
    judge: str | None = None
    model_share: float | None = None
    model_decided: bool = False
    human_baseline: float | None = None
    human_candidate: float | None = None
    human_delta: float | None = None
    human_verdict: str | None = None
    model_baseline: float | None = None
    model_candidate: float | None = None
    model_delta: float | None = None
    model_verdict: str | None = None
    timing_ratio: float | None = None
    timing_pairs: int | None = None
    not_gated: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {key: _plain(value) for key, value in asdict(self).items()}

    def bound_dict(self) -> dict[str, Any]:
        """The fields a stored comparison keeps beside its metric row (in its options)."""
        return {key: _plain(getattr(self, key)) for key in BOUND_FIELDS}

    def model_note(self) -> str | None:
        """ "model grades: 23% of top-10 grades, judge gpt" when the verdict rests on them."""
        if not self.model_decided or self.judge is None:
            return None
        share = "an unknown share" if self.model_share is None else f"{self.model_share:.0%}"
        return f"model grades: {share} of top-{self.bound_depth or 10} grades, judge {self.judge}"


BOUND_FIELDS = (
    "unjudged_mode",
    "bound_depth",
    "unjudged",
    "unjudged_queries",
    "baseline_unjudged",
    "bound_baseline",
    "bound_candidate",
    "bound_p_corrected",
    "bound_verdict",
    "judge",
    "model_share",
    "model_decided",
    "human_baseline",
    "human_candidate",
    "human_delta",
    "human_verdict",
    "model_baseline",
    "model_candidate",
    "model_delta",
    "model_verdict",
    # latency decided on paired timings (evalplat.comparison.paired_latency), or why not
    "timing_ratio",
    "timing_pairs",
    "not_gated",
)


@dataclass(frozen=True)
class SegmentComparison:
    """One metric over one segment: the queries whose tags include ``segment``.

    Means are over the segment's ``queries`` (weighted when the comparison is), the CI and the
    test likewise; ``p_corrected`` is Holm's over the gated family when ``gated`` (metrics and
    segments together), else over the ungated segment rows (display only). ``note`` is set when
    the segment is too small to gate (fewer than ``CompareOptions.min_segment_queries``
    queries), e.g. ``"12 queries, fewer than 20: not gated"``.
    """

    metric: str
    segment: str
    queries: int
    higher_is_better: bool
    baseline: float
    candidate: float
    delta: float
    relative_delta: float | None
    ci_low: float | None
    ci_high: float | None
    test: str
    p_value: float | None
    p_corrected: float | None
    gated: bool
    verdict: str
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {key: _plain(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class QueryMove:
    """One query's change on one metric (``delta = candidate - baseline``)."""

    query_id: str
    baseline: float
    candidate: float
    delta: float


@dataclass(frozen=True)
class Movers:
    """The queries that moved most on one metric: ``worse`` first by size of the loss (in the
    metric's direction), ``better`` by size of the gain. Unmoved queries are never listed."""

    metric: str
    worse: tuple[QueryMove, ...]
    better: tuple[QueryMove, ...]


@dataclass(frozen=True)
class OverlapSummary:
    """How much the rankings changed, averaged over the queries both runs answered.

    ``jaccard`` is Jaccard@k of the top-k sets, ``rbo`` rank-biased overlap (extrapolated,
    persistence ``p``), ``kendall_tau`` Kendall's τ-b over the union of both top-k lists
    (``evalplat.comparison.overlap``; None when no query has two documents in that union).
    """

    k: int
    p: float
    jaccard: float
    rbo: float
    kendall_tau: float | None
    queries: int

    def to_dict(self) -> dict[str, Any]:
        return {key: _plain(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class ComparisonResult:
    """A candidate compared with a baseline, metric by metric, with the overall verdict.

    ``verdict`` is the worst over gated metrics: ``regression`` > ``needs_judgments`` >
    ``improvement`` > ``unchanged``. ``per_query`` is a tidy frame (``metric, query_id,
    baseline, candidate, delta``) for reports; it is not part of ``to_dict``. ``changes`` says
    what differs between the two runs' config versions and test set versions (set by the store).
    ``weighted``: means and tests use the test set's query weights. ``segments`` has a row per
    (metric, tag) when queries carry tags, and its gated rows count in ``verdict``;
    ``query_tags`` maps each tagged query to its tags (for reports; not in ``to_dict``).
    ``facts`` are the operational facts of both runs (``evalplat.comparison.facts``; set by
    the store): queries that returned nothing, failed or had no text, a judged share that fell.
    ``sessions`` is set for online comparisons: the (baseline, candidate) sessions with a
    score, whose units are sessions rather than queries (``queries`` then counts nothing a
    reader is shown); ``days`` the UTC day of each arm's online run (set by the store).
    """

    metrics: tuple[MetricComparison, ...]
    movers: dict[str, Movers]
    overlap: OverlapSummary | None
    options: CompareOptions
    gates: tuple[Gate, ...]
    verdict: str
    queries: int
    per_query: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    id: int | None = None
    baseline_run_id: int | None = None
    candidate_run_id: int | None = None
    baseline_label: str = "baseline"
    candidate_label: str = "candidate"
    test_set: str | None = None
    created_at: str | None = None  # ISO 8601, set when stored
    changes: Changes | None = None
    weighted: bool = False
    segments: tuple[SegmentComparison, ...] = ()
    query_tags: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)
    facts: tuple[Fact, ...] = ()
    sessions: tuple[int, int] | None = None
    days: tuple[str | None, str | None] | None = None
    searches: tuple[int | None, int | None] | None = None  # of two online runs, when recorded

    @property
    def online(self) -> bool:
        """Whether the units compared are sessions of two A/B arms (no query pairs)."""
        return self.sessions is not None

    def size_text(self) -> str:
        """``225 queries``, or ``600 sessions (1020 searches) against 580 (990 searches)`` for
        two A/B arms (searches when recorded, with the days)."""
        if self.sessions is None:
            return counted(self.queries, "query")
        days = ""
        if self.days is not None and any(self.days):
            first, second = self.days
            days = f" on {first}" if first == second else f", days {first} and {second}"
        searches = self.searches or (None, None)
        a, b = (
            "" if count is None else f" ({counted(count, 'search')})" for count in searches
        )  # fmt: skip
        return f"{counted(self.sessions[0], 'session')}{a} against {self.sessions[1]}{b}{days}"

    def metric(self, name: str) -> MetricComparison:
        for item in self.metrics:
            if item.metric == name:
                return item
        raise KeyError(name)

    @property
    def scored_on(self) -> str | None:
        """What the figures were scored on, as every surface says it (``evalplat.store
        .run_figures``): ``topics@3, people's grades``, naming the judge whose grades a gate let
        count as grades (``unjudged = "grade"``); the version alone for online arms, which read
        no grades. None before the store names the version."""
        from evalplat.testsets.raters import grades_text

        if self.test_set is None or self.online:
            return self.test_set
        judges = {m.judge for m in self.metrics if m.gated and m.unjudged_mode == "grade"}
        judge = next(iter(sorted(j for j in judges if j)), None)
        return f"{self.test_set}, {grades_text('people', judge)}"

    @property
    def regressions(self) -> list[MetricComparison]:
        """Gated metrics whose verdict is ``regression``."""
        return [m for m in self.metrics if m.gated and m.verdict == "regression"]

    @property
    def needing_judgments(self) -> list[MetricComparison]:
        """Gated metrics whose verdict is ``needs_judgments``."""
        return [m for m in self.metrics if m.gated and m.verdict == "needs_judgments"]

    @property
    def model_notes(self) -> list[str]:
        """One line per gated metric whose verdict rests on model grades."""
        return [f"{m.metric}: {note}" for m in self.metrics if m.gated and (note := m.model_note())]

    @property
    def segment_regressions(self) -> list[SegmentComparison]:
        """Gated (metric, segment) rows whose verdict is ``regression``."""
        return [s for s in self.segments if s.gated and s.verdict == "regression"]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``metrics[]`` carries PRODUCT.md's fields (``metric``, ``baseline``,
        ``candidate``, ``delta``, ``p_value``, ``verdict``) and the rest of each row, with why
        it got its verdict (``reason``, ``why``); ``gating`` says what was gated and how
        (``evalplat.comparison.explain``)."""
        from evalplat.comparison import explain

        family = explain.gating(self)
        return {
            "id": self.id,
            "baseline_run_id": self.baseline_run_id,
            "candidate_run_id": self.candidate_run_id,
            "baseline_label": self.baseline_label,
            "candidate_label": self.candidate_label,
            "test_set": self.test_set,
            "scored_on": self.scored_on,
            "created_at": self.created_at,
            "verdict": self.verdict,
            **self._size(),
            "weighted": self.weighted,
            "gating": family,
            "metrics": [
                {
                    **m.to_dict(),
                    "reason": explain.reason(m),
                    "why": explain.why(m, family["family"]),
                }
                for m in self.metrics
            ],
            "model_grades": self.model_notes,
            "segments": [s.to_dict() for s in self.segments],
            "movers": {
                name: {
                    "worse": [asdict(q) for q in movers.worse],
                    "better": [asdict(q) for q in movers.better],
                }
                for name, movers in self.movers.items()
            },
            "overlap": None if self.overlap is None else self.overlap.to_dict(),
            "options": asdict(self.options),
            "gates": [asdict(g) for g in self.gates],
            "changes": None if self.changes is None else self.changes.to_dict(),
            "facts": [fact.to_dict() for fact in self.facts],
        }

    def _size(self) -> dict[str, Any]:
        if self.sessions is None:
            return {"unit": "query", "queries": self.queries}
        days = self.days or (None, None)
        searches = self.searches or (None, None)
        return {
            "unit": "session",
            "sessions": {"baseline": self.sessions[0], "candidate": self.sessions[1]},
            "days": {"baseline": days[0], "candidate": days[1]},
            "searches": {"baseline": searches[0], "candidate": searches[1]},
        }


def _plain(value: object) -> object:
    """NaN and infinities are not JSON: report them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
