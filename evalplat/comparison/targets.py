"""Targets: absolute objectives for a metric, a verdict per run, and drift over a window.

A target says where a metric should be (``nDCG@10`` at least 0.85, ``Latency(p=95)`` at most
200). It works for any registered measure through the metric model: the run's figure is the
measure's own aggregate (:func:`evalplat.metrics.aggregate.aggregate`) and its uncertainty the
percentile bootstrap over queries of that aggregate, the resampling the comparison's bootstrap
uses.

**Verdict** of a run against ``min = t`` (``max = t`` mirrors it):

- ``missed``: the whole confidence interval lies below ``t`` (``ci_high < t``);
- ``at_risk``: the figure is below ``t`` but the interval still reaches it;
- ``met``: the figure is at or above ``t``;
- ``needs_judgments``: the run would be ``missed``, but not under its optimistic bound, its
  unjudged documents in the top ``k`` graded up to the highest grade the test set allows
  (:mod:`evalplat.comparison.target_bound`): the miss turns on documents nobody has judged, so
  it is not credible. It opens no alert and resolves none. A measure that reads no judgments
  (Coverage, ZeroResult, Latency) has no bound and is judged on its figure alone; a run whose
  ranked results were pruned keeps its ``missed``.

**Weights and segments.** Where the test set's queries carry weights, the figure of a mean
measure is the weighted mean ``sum(w v) / sum(w)`` (the run's stored mean) and each bootstrap
replicate draws queries with their weights, as the comparison's bootstrap does. A target naming
a ``segment`` (a query tag) is judged on that segment's queries only: its figure is their
(weighted) mean and the interval resamples them alone, so ``nDCG@10[tail]>=0.7`` can be missed
while the whole test set meets ``nDCG@10>=0.7``. Each (metric, segment) is a target of its own.

**Drift**: over the runs of a window (``30d``), the Theil-Sen slope of the figure against time
and the Mann-Kendall test (Kendall's tau between time and figure). A slide is flagged when the
trend is significant (``p < alpha``), points the wrong way, and the fitted change across the
window's runs exceeds ``max_slide``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from evalplat.alerts.confirmation import Confirmation
from evalplat.errors import InputError
from evalplat.inputs.validation import DECIMAL

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import ArrayLike, NDArray

    from evalplat.metrics.registry import Metric

TARGET_VERDICTS = ("met", "at_risk", "missed", "needs_judgments")
_EXPRESSION = re.compile(
    r"^(?P<metric>.+?)(?:\[(?P<segment>[^\[\]]*)\])?\s*(?P<op>>=|<=)\s*(?P<value>[^<>=\s]+)\s*$"
)
_WINDOW = re.compile(r"^(?P<n>[1-9][0-9]{0,3})(?P<unit>[dhw])$")
_UNIT_DAYS = {"h": 1 / 24, "d": 1.0, "w": 7.0}
_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class Target:
    """``metric`` (canonical name) at least ``value`` (``bound == "min"``) or at most it.

    ``config`` and ``test_set`` restrict where it applies (None: everywhere); ``segment``
    judges it on the queries carrying that tag (None: all queries); ``consecutive`` is the
    number of missed runs before an alert opens, in a row or ``within`` the last runs, and
    ``clear`` the met runs in a row that resolve it (``confirmation``); ``max_slide`` over
    ``window`` turns
    on drift detection. ``entry`` is the ``[[targets]]`` entry it was read from (0-based; None
    for ``--target``), so that a later check can name it."""

    metric: str
    bound: str
    value: float
    config: str | None = None
    test_set: str | None = None
    consecutive: int = 1
    max_slide: float | None = None
    window: str = "30d"
    segment: str | None = None
    within: int | None = None
    clear: int = 1
    entry: int | None = field(default=None, compare=False)

    @property
    def confirmation(self) -> Confirmation:
        """When its ``target`` alert opens and resolves (``evalplat.alerts.confirmation``)."""
        return Confirmation(self.consecutive, self.within or self.consecutive, self.clear)

    @property
    def label(self) -> str:
        """``nDCG@10>=0.85`` or ``nDCG@10[tail]>=0.7``: the expression that declares it on the
        command line."""
        return f"{self.measured}{'>=' if self.bound == 'min' else '<='}{self.value:g}"

    @property
    def measured(self) -> str:
        """What the figure is of: ``nDCG@10``, or ``nDCG@10[tail]`` for a segment."""
        return self.metric if self.segment is None else f"{self.metric}[{self.segment}]"

    def applies(self, config: str, test_set: str) -> bool:
        return self.config in (None, config) and self.test_set in (None, test_set)

    @property
    def specificity(self) -> int:
        return (self.config is not None) * 2 + (self.test_set is not None)


@dataclass(frozen=True)
class TargetVerdict:
    """One run against one target: its figure, the interval of the figure, and the verdict."""

    target: Target
    value: float
    ci_low: float
    ci_high: float
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.target.metric,
            "segment": self.target.segment,
            "target": self.target.label,
            "bound": self.target.bound,
            "target_value": self.target.value,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "target_verdict": self.verdict,
        }


@dataclass(frozen=True)
class Drift:
    """The trend of a target's metric over a window of runs."""

    target: Target
    runs: int
    slope_per_day: float
    change: float
    p_value: float
    drifting: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.target.metric,
            "segment": self.target.segment,
            "target": self.target.label,
            "window": self.target.window,
            "max_slide": self.target.max_slide,
            "runs": self.runs,
            "slope_per_day": self.slope_per_day,
            "change": self.change,
            "p_value": self.p_value,
            "drifting": self.drifting,
        }


def check_direction(metric: Metric, bound: str) -> None:
    """A target points the way the measure improves: ``min`` for higher-is-better."""
    wanted = "min" if metric.higher_is_better else "max"
    if bound != wanted:
        better = "higher" if metric.higher_is_better else "lower"
        ops = {"min": "min, >=", "max": "max, <="}
        raise InputError(
            f"{metric} is {better}-is-better: its target is a {wanted} ({ops[wanted]}), "
            f"not a {bound} ({ops[bound]})"
        )


def parse_target(expression: str) -> Target:
    """``nDCG@10>=0.85``, ``Latency(p=95)<=200``, or ``nDCG@10[tail]>=0.7`` for the queries
    tagged ``tail`` (the ``--target`` option's syntax)."""
    from evalplat.metrics.names import parse

    match = _EXPRESSION.match(expression.strip())
    if match is None:
        raise InputError(
            f"--target {expression!r}: expected METRIC>=VALUE or METRIC<=VALUE, "
            'e.g. "nDCG@10>=0.85"'
        )
    # ASCII digits only: float() also reads "1_0" and digits of other scripts
    value = float(match["value"]) if DECIMAL.fullmatch(match["value"]) else math.nan
    if not math.isfinite(value):
        raise InputError(
            f"--target {expression!r}: {match['value']!r} is not a finite number (ASCII digits)"
        )
    segment = match["segment"]
    if segment is not None and not segment.strip():
        raise InputError(f"--target {expression!r}: the segment in [...] is empty")
    try:
        metric = parse(match["metric"])
        bound = "min" if match["op"] == ">=" else "max"
        check_direction(metric, bound)
    except InputError as error:
        raise InputError(f"--target {expression!r}: {error}") from None
    return Target(
        metric=str(metric),
        bound=bound,
        value=value,
        segment=None if segment is None else segment.strip(),
    )


def window_days(window: str) -> float:
    """``30d`` → 30.0; ``12h``, ``2w`` also accepted."""
    match = _WINDOW.match(window.strip()) if isinstance(window, str) else None
    if match is None:
        raise InputError(f"window {window!r}: expected a number and a unit d, h or w, e.g. 30d")
    return int(match["n"]) * _UNIT_DAYS[match["unit"]]


def applicable(targets: Sequence[Target], config: str, test_set: str) -> list[Target]:
    """The targets in force for a config on a test set: per metric and segment, the most
    specific one (the first of equally specific ones)."""
    chosen: dict[tuple[str, str | None], Target] = {}
    for target in targets:
        if not target.applies(config, test_set):
            continue
        key = (target.metric, target.segment)
        held = chosen.get(key)
        if held is None or target.specificity > held.specificity:
            chosen[key] = target
    return list(chosen.values())


def interval(
    metric: Metric,
    values: ArrayLike,
    *,
    n: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    weights: ArrayLike | None = None,
) -> tuple[float, float, float]:
    """The run's figure and the percentile bootstrap interval of it: ``(value, low, high)``.

    The ``m`` per-query values are resampled with replacement ``n`` times and each replicate is
    aggregated as the measure declares (mean, sum or percentile; unknown values left out), so a
    target on ``Latency(p=95)`` gets the interval of the 95th percentile, not of a mean. With
    ``weights`` (one per value) a mean is the weighted mean, of the run and of each replicate
    (``sum(w v) / sum(w)`` over the queries drawn); sums and percentiles ignore weights.
    """
    from evalplat.metrics.aggregate import aggregate, aggregate_rows

    v = np.asarray(values, dtype=np.float64)
    w = None
    if weights is not None and metric.aggregate == "mean":
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != v.shape:
            raise InputError(f"weights: one per value expected ({v.size}), got {w.size}")
    if metric.spec.unknown_values:
        known = ~np.isnan(v)
        v = v[known]
        w = None if w is None else w[known]
    if w is not None and np.ptp(w) == 0.0:
        w = None  # equal weights: exactly the unweighted figures
    if v.size == 0:
        return math.nan, math.nan, math.nan
    value = aggregate(metric, v, w)
    if np.ptp(v) == 0.0:
        return value, value, value
    rng = np.random.default_rng(seed)
    m = v.size
    chunk = max(1, min(n, _CHUNK_CELLS // m))
    replicates = np.empty(n, dtype=np.float64)
    kth = _nearest_rank(metric, v)
    done = 0
    while done < n:
        rows = min(chunk, n - done)
        picks = rng.integers(0, m, size=(rows, m), dtype=np.int32)
        if w is not None:
            drawn = w[picks]
            replicates[done : done + rows] = (drawn * v[picks]).sum(axis=1) / drawn.sum(axis=1)
        else:
            replicates[done : done + rows] = aggregate_rows(metric, v[picks]) if kth is None else (
                kth(picks)
            )  # fmt: skip
        done += rows
    low, high = np.quantile(replicates, [(1 - level) / 2, (1 + level) / 2])
    return value, float(low), float(high)


def _nearest_rank(
    metric: Metric, v: NDArray[np.float64]
) -> Callable[[NDArray[np.int32]], NDArray[np.float64]] | None:
    """For a percentile: each replicate's nearest-rank percentile from the picks, as the k-th
    smallest rank among them (a partial sort of integers instead of a percentile of resampled
    floats; the same value :func:`aggregate` gives). None for other aggregates."""
    if metric.aggregate != "percentile":
        return None
    m = v.size
    k = max(1, math.ceil(float(metric.param("p")) / 100.0 * m)) - 1  # type: ignore[arg-type]
    order = np.argsort(v, kind="stable")
    rank = np.empty(m, dtype=np.int32)
    rank[order] = np.arange(m, dtype=np.int32)
    ordered = v[order]

    def replicate(picks: NDArray[np.int32]) -> NDArray[np.float64]:
        result: NDArray[np.float64] = ordered[np.partition(rank[picks], k, axis=1)[:, k]]
        return result

    return replicate


def decide(target: Target, value: float, low: float, high: float) -> str:
    """``met`` / ``at_risk`` / ``missed`` (see the module docstring). No figure: ``missed``."""
    if math.isnan(value):
        return "missed"
    if target.bound == "min":
        if high < target.value:
            return "missed"
        return "at_risk" if value < target.value else "met"
    if low > target.value:
        return "missed"
    return "at_risk" if value > target.value else "met"


def judged(pessimistic: TargetVerdict, optimistic: TargetVerdict | None) -> TargetVerdict:
    """The verdict given unjudged documents: a miss that the optimistic bound's figures do not
    confirm (``optimistic``, the same target over those figures) is ``needs_judgments``; the
    figures shown stay the stored (pessimistic) ones."""
    if pessimistic.verdict != "missed" or optimistic is None or optimistic.verdict == "missed":
        return pessimistic
    return replace(pessimistic, verdict="needs_judgments")


def verdict(
    target: Target,
    values: ArrayLike,
    *,
    n: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    weights: ArrayLike | None = None,
) -> TargetVerdict:
    """One run's per-query values of ``target.metric`` against the target (for a segment
    target, the values of the segment's queries only)."""
    from evalplat.metrics.names import parse

    metric = parse(target.metric)
    value, low, high = interval(metric, values, n=n, seed=seed, level=level, weights=weights)
    return TargetVerdict(target, value, low, high, decide(target, value, low, high))


def drift(
    target: Target,
    times: Sequence[datetime],
    values: Sequence[float],
    *,
    now: datetime | None = None,
    alpha: float = 0.05,
) -> Drift:
    """Theil-Sen slope and Mann-Kendall test of the figures of the runs inside the window.

    ``times`` and ``values`` are the runs' start times and figures, any order. The runs kept are
    those within ``window`` before ``now`` (default: the latest run). The change is the slope
    times the time between the first and last kept run; it is a slide when it points the wrong
    way for the measure, exceeds ``max_slide`` and the Mann-Kendall p-value is below ``alpha``.
    Fewer than 4 runs never drift (the test cannot reach significance on so few).
    """
    from scipy import stats

    from evalplat.metrics.names import parse

    end = now or (max(times) if times else datetime.min)
    start = end - timedelta(days=window_days(target.window))
    kept = sorted(
        (t, v) for t, v in zip(times, values, strict=True) if start <= t <= end and math.isfinite(v)
    )
    if len(kept) < 4 or target.max_slide is None:
        return Drift(target, len(kept), 0.0, 0.0, 1.0, False)
    days: NDArray[np.float64] = np.array(
        [(t - kept[0][0]).total_seconds() / 86400 for t, _ in kept], dtype=np.float64
    )
    figures = np.array([v for _, v in kept], dtype=np.float64)
    if np.ptp(figures) == 0.0 or np.ptp(days) == 0.0:
        return Drift(target, len(kept), 0.0, 0.0, 1.0, False)
    slope = float(stats.theilslopes(figures, days).slope)
    p_value = float(stats.kendalltau(days, figures).pvalue)
    change = slope * float(days[-1] - days[0])
    worse = -change if parse(target.metric).higher_is_better else change
    drifting = bool(p_value < alpha and worse > target.max_slide)
    return Drift(target, len(kept), slope, change, p_value, drifting)
