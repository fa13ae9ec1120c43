"""Latency verdicts on paired timings: the baseline's config version and the candidate's timed
in the same night, query by query, so that whatever load the machine carries weighs on both.

Two runs timed on different nights differ by the machine's load as much as by the engines,
and a floor of absolute milliseconds that kept such nights quiet also hid a fast engine's real
slowdown (docs/performance.md). Timings taken together cancel the load instead.

The rule, for ``n`` pairs ``(b_i, c_i)`` of one query searched by the baseline and by the
candidate, one right after the other:

- ``r_i = log(c_i / b_i)``: the per-query log ratio, so that a slowdown of every query by a
  factor is one shift whatever each query's own cost.
- ``m = log(1 + slowdown)``: the gate's relative threshold (20 % by default) as a shift.
- ``p``: the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, exact for small ``n``
  without ties, else the normal approximation), the paired test that needs no normality of
  timings, of the shift *beyond the threshold*: ``p = 2 min(p_slower, p_faster)``, with
  ``p_slower`` the one-sided test of ``r_i - m`` above 0 and ``p_faster`` that of ``r_i + m``
  below 0 (with no threshold, the two-sided test about 0). A latency verdict thus says "slower
  by more than the threshold" only on that evidence: timings of a fast engine vary by a large
  factor between the two searches of a pair, enough for a test about 0 to call unchanged runs
  regressions where the test beyond the threshold does not (docs/performance.md).
- ``ratio = exp(HL)``, with ``HL`` the Hodges-Lehmann estimate of the shift: the median of the
  Walsh averages ``(r_i + r_j) / 2`` over ``i <= j`` (Hodges & Lehmann 1963), the estimator that
  goes with the signed-rank test. It is the typical factor by which the candidate is slower.
- **regression** when ``p < alpha`` and ``ratio >= 1 + slowdown``; **improvement** when
  ``p < alpha`` and ``ratio <= 1 / (1 + slowdown)``; else **unchanged**. A gate's ``max_drop``
  (ms), when set, must be exceeded as well by the typical slowdown of the paired baseline's
  figure.

A comparison without paired timings gives no latency verdict at all: the row is shown, marked
not gated with the reason (:data:`UNPAIRED`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

# why a latency row has no verdict: no timings of the baseline taken beside the candidate's
UNPAIRED = "unpaired"
# fewer pairs than this cannot reach p < 0.05 with the signed-rank test (2 / 2^5 = 0.0625)
MIN_PAIRS = 6


def not_gated_text(reason: str) -> str:
    """Why a latency row is not gated, in words."""
    if reason == UNPAIRED:
        return f"{UNPAIRED}: no timings of both config versions taken together"
    return reason


@dataclass(frozen=True)
class PairedTimings:
    """Milliseconds of the same queries searched by two config versions one after the other.

    ``baseline_version`` and ``candidate_version`` are the config versions' ids; ``seed`` drew
    the sample of ``query_ids`` from the test set's queries; ``queries`` is how many it had."""

    baseline_version: int
    candidate_version: int
    query_ids: tuple[str, ...]
    baseline_ms: tuple[float, ...]
    candidate_ms: tuple[float, ...]
    seed: int = 0
    queries: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline_version": self.baseline_version,
            "candidate_version": self.candidate_version,
            "query_ids": list(self.query_ids),
            "baseline_ms": [round(v, 4) for v in self.baseline_ms],
            "candidate_ms": [round(v, 4) for v in self.candidate_ms],
            "seed": self.seed,
            "queries": self.queries,
        }

    def of_queries(self, query_ids: set[str]) -> PairedTimings:
        """The pairs of ``query_ids`` alone (a segment's)."""
        keep = [i for i, qid in enumerate(self.query_ids) if qid in query_ids]
        return replace(
            self,
            query_ids=tuple(self.query_ids[i] for i in keep),
            baseline_ms=tuple(self.baseline_ms[i] for i in keep),
            candidate_ms=tuple(self.candidate_ms[i] for i in keep),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PairedTimings:
        return cls(
            baseline_version=int(data["baseline_version"]),
            candidate_version=int(data["candidate_version"]),
            query_ids=tuple(str(q) for q in data["query_ids"]),
            baseline_ms=tuple(float(v) for v in data["baseline_ms"]),
            candidate_ms=tuple(float(v) for v in data["candidate_ms"]),
            seed=int(data.get("seed", 0)),
            queries=int(data.get("queries", 0)),
        )


@dataclass(frozen=True)
class PairedLatency:
    """What the paired rule found: ``p_value`` of the signed-rank test, ``ratio`` the typical
    candidate/baseline factor (Hodges-Lehmann), ``pairs`` the pairs used, and each side's
    figure of the metric over the paired timings."""

    p_value: float
    ratio: float
    pairs: int
    baseline: float
    candidate: float


def log_ratios(baseline_ms: NDArray[np.float64], candidate_ms: NDArray[np.float64]) -> Any:
    """``log(c / b)`` for the pairs where both timings are known and positive."""
    import numpy as np

    b = np.asarray(baseline_ms, dtype=np.float64)
    c = np.asarray(candidate_ms, dtype=np.float64)
    known = np.isfinite(b) & np.isfinite(c) & (b > 0) & (c > 0)
    return np.log(c[known] / b[known]), known


def hodges_lehmann(values: NDArray[np.float64]) -> float:
    """The median of the Walsh averages ``(x_i + x_j) / 2``, ``i <= j`` (0 for no values)."""
    import numpy as np

    x = np.asarray(values, dtype=np.float64)
    if not x.size:
        return 0.0
    i, j = np.triu_indices(x.size)
    return float(np.median((x[i] + x[j]) / 2.0))


def signed_rank_p(values: NDArray[np.float64], margin: float = 0.0) -> float:
    """Wilcoxon signed-rank p-value that ``values`` are shifted beyond ``margin`` either way:
    twice the smaller of the one-sided p-values of ``values - margin`` above 0 and of
    ``values + margin`` below 0, at most 1 (with ``margin`` 0, the two-sided test about 0)."""
    import numpy as np

    x = np.asarray(values, dtype=np.float64)
    if not x.size:
        return 1.0
    p = 2.0 * min(_one_sided(x - margin, "greater"), _one_sided(x + margin, "less"))
    return min(1.0, p)


def _one_sided(x: NDArray[np.float64], alternative: str) -> float:
    import numpy as np
    from scipy import stats

    if not np.any(x != 0):
        return 1.0
    return float(stats.wilcoxon(x, zero_method="wilcox", alternative=alternative).pvalue)


def measure_pairs(timings: PairedTimings, figure: Any, slowdown: float = 0.0) -> PairedLatency:
    """The test (beyond a relative ``slowdown`` either way) and the estimate over
    ``timings``; ``figure`` aggregates one side's timings as the metric does (a percentile for
    ``Latency(p=95)``, the mean for ``Latency``)."""
    import numpy as np

    b = np.asarray(timings.baseline_ms, dtype=np.float64)
    c = np.asarray(timings.candidate_ms, dtype=np.float64)
    r, known = log_ratios(b, c)
    margin = math.log1p(slowdown)
    return PairedLatency(
        p_value=signed_rank_p(r, margin) if r.size >= MIN_PAIRS else 1.0,
        ratio=math.exp(hodges_lehmann(r)),
        pairs=int(r.size),
        baseline=float(figure(b[known])) if r.size else math.nan,
        candidate=float(figure(c[known])) if r.size else math.nan,
    )


def paired_verdict(
    found: PairedLatency, alpha: float, slowdown: float, max_drop: float | None = None
) -> str:
    """``regression``, ``improvement`` or ``unchanged`` under the rule of the module."""
    if not found.p_value < alpha:
        return "unchanged"
    factor = 1.0 + slowdown
    if found.ratio >= factor and _beyond_ms(found, max_drop):
        return "regression"
    if found.ratio <= 1.0 / factor and _beyond_ms(found, max_drop):
        return "improvement"
    return "unchanged"


def _beyond_ms(found: PairedLatency, max_drop: float | None) -> bool:
    if not max_drop or not math.isfinite(found.baseline):
        return True
    return abs(found.ratio - 1.0) * found.baseline > max_drop


def timed_row(row: dict[str, Any], metric: Metric, timings: PairedTimings | None) -> None:
    """Fill a comparison row of a timing measure (``Measure.paired_timings``) from the paired
    timings: their test and estimate (``paired``, decided by :func:`row_verdict` once Holm has
    corrected its p-value), or, without timings, no test: a gated row is then not gated, and
    says why (``not_gated``); an ungated one stays shown only."""
    from evalplat.metrics.aggregate import aggregate

    if not metric.spec.paired_timings:
        return
    if timings is None:
        reason = UNPAIRED if row["gated"] else None
        row.update(gated=False, not_gated=reason, p_value=None, ci_low=None, ci_high=None)
        return
    slowdown = row.get("max_relative_drop") or 0.0
    found = measure_pairs(timings, lambda values: aggregate(metric, values, None), slowdown)
    if found.pairs < MIN_PAIRS:
        reason = f"{found.pairs} paired timings, fewer than {MIN_PAIRS}"
        row.update(gated=False, not_gated=reason, p_value=None, ci_low=None, ci_high=None)
        return
    row.update(
        test="wilcoxon",
        p_value=found.p_value,
        ci_low=None,
        ci_high=None,
        timing_ratio=found.ratio,
        timing_pairs=found.pairs,
        paired=found,
    )


def row_verdict(row: dict[str, Any], found: PairedLatency) -> str:
    """The verdict of a row :func:`timed_row` filled, on its Holm-corrected p-value."""
    p = row.get("p_corrected")
    if p is None:
        return "unchanged"
    corrected = PairedLatency(p, found.ratio, found.pairs, found.baseline, found.candidate)
    slowdown = row.get("max_relative_drop")
    return paired_verdict(corrected, row["alpha"], 0.0 if slowdown is None else slowdown,
                          row.get("max_drop"))  # fmt: skip
