"""Paired statistics over queries: significance tests, bootstrap CI, Holm, effect size.

Every function takes per-query values of two systems in the same query order (``a`` the
baseline, ``b`` the candidate) or their differences ``d = b - a``. Randomised procedures take a
``seed`` and draw from ``numpy.random.default_rng(seed)`` in a fixed order, so the same inputs
and seed give the same numbers on every machine.

Identical inputs are a fixed point everywhere: ``d = 0`` gives ``p = 1`` from every test, a
``[0, 0]`` interval and an effect size of 0 — two identical runs can never look different.

**Query weights.** The tests, the bootstrap and the effect size take optional per-query
``weights`` (finite, > 0). The weighted mean delta is ``sum(w d) / sum(w)``; the paired tests
run on the *weighted differences* ``x_i = w_i d_i / mean(w)``, whose arithmetic mean is exactly
that weighted mean, so "the weighted mean delta is 0" is "the mean of x is 0": the
randomization test flips the signs of the ``x_i``, the t-test and Wilcoxon test the ``x_i``
against 0, Cohen's d_z is ``mean(x) / sd(x)``. The bootstrap resamples queries with their
weights and takes the weighted mean of each resample. Equal weights (any value) change
nothing: every function then runs its unweighted code path and returns exactly the unweighted
numbers. Wins, ties and losses stay counts of queries.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalplat.errors import InputError

if TYPE_CHECKING:
    from evalplat.metrics.registry import Metric

FloatArray = NDArray[np.float64]

# Permutations are drawn in blocks of this many rows so that memory stays near
# ``_CHUNK * n_queries`` bytes whatever the number of permutations.
CHUNK_CELLS = 250_000


@dataclass(frozen=True)
class WinsTiesLosses:
    """Queries where ``b`` is better / within the tolerance / worse, in the metric's direction."""

    wins: int
    ties: int
    losses: int


def paired(a: ArrayLike, b: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Both vectors as float arrays, checked to be paired (same length, finite, 1-d)."""
    left = np.asarray(a, dtype=np.float64)
    right = np.asarray(b, dtype=np.float64)
    if left.ndim != 1 or left.shape != right.shape:
        raise InputError(
            f"paired values need two vectors of the same length, got {left.shape} and {right.shape}"
        )
    if not (np.isfinite(left).all() and np.isfinite(right).all()):
        raise InputError("paired values must be finite numbers (no NaN or infinity)")
    return left, right


def query_weights(weights: ArrayLike | None, size: int) -> FloatArray | None:
    """Checked weights, or None when they make no difference (None, or all equal): callers
    then take the unweighted path, so equal weights give bit-for-bit the unweighted results."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size != size:
        raise InputError(f"query weights need one number per query ({size}), got {w.shape}")
    if not np.isfinite(w).all() or (w <= 0).any():
        raise InputError("query weights must be finite numbers greater than 0")
    if w.size == 0 or (w == w[0]).all():
        return None
    return w


def weighted_mean(values: ArrayLike, weights: ArrayLike | None = None) -> float:
    """``sum(w v) / sum(w)``; the arithmetic mean without weights or with equal ones (0 for no
    values). The same formula as ``evalplat.evaluate(weights=...)``'s means."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return 0.0
    w = query_weights(weights, v.size)
    if w is None:
        return float(v.mean())
    return float(np.dot(v, w) / w.sum())


def weighted_differences(d: FloatArray, weights: ArrayLike | None) -> FloatArray:
    """The weighted differences ``w d / mean(w)`` (module doc); ``d`` itself when unweighted
    (or equally weighted)."""
    w = query_weights(weights, d.size)
    if w is None:
        return d
    x: FloatArray = d * (w / w.mean())
    return x


def randomization_test(
    a: ArrayLike,
    b: ArrayLike,
    n: int = 10_000,
    seed: int = 0,
    *,
    weights: ArrayLike | None = None,
) -> float:
    """Two-sided paired randomization (sign-flip permutation) test of ``mean(b - a) = 0``.

    Under the null hypothesis each query's difference ``d_i`` is as likely to have the opposite
    sign, so the statistic ``T = |mean(d)|`` is compared with ``T* = |mean(s * d)|`` for ``n``
    random sign vectors ``s ∈ {-1, +1}^m``::

        p = (1 + #{T* >= T}) / (1 + n)

    (the +1 counts the observed labelling, which keeps ``p > 0`` and makes the test exact at
    level alpha). ``d = 0`` gives ``p = 1``. With ``weights`` the signs flip the weighted
    differences ``x_i = w_i d_i / mean(w)`` and ``T = |mean(x)|`` is the weighted mean delta.
    Vectorised: with random bits ``u ∈ {0, 1}``, ``s·d = 2 u·d - Σd``; ``u·d`` is summed a byte
    at a time from a table of the 256 possible partial sums of each group of 8 queries, so a
    permutation costs ``m / 8`` lookups.
    """
    left, right = paired(a, b)
    if n < 1:
        raise InputError(f"the number of permutations must be 1 or more, got {n}")
    d = weighted_differences(right - left, weights)
    m = d.size
    if m == 0 or not d.any():
        return 1.0
    total = float(d.sum())
    observed = abs(total)
    # Sums equal to the observed one up to rounding must count as "at least as extreme".
    slack = 1e-9 * max(1.0, float(np.abs(d).sum()))
    table = _byte_sums(d)
    width = table.shape[1]
    offsets = np.arange(width, dtype=np.intp) * 256
    flat = table.T.ravel()
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n, CHUNK_CELLS // width))
    extreme = 0
    done = 0
    while done < n:
        rows = min(chunk, n - done)
        packed = rng.integers(0, 256, size=(rows, width), dtype=np.uint8)
        # u·d for every row: one table lookup per byte of random bits instead of 8 products.
        sums = flat[packed.astype(np.intp) + offsets].sum(axis=1)
        flipped = 2.0 * sums - total
        extreme += int(np.count_nonzero(np.abs(flipped) >= observed - slack))
        done += rows
    return (1 + extreme) / (1 + n)


def _byte_sums(d: FloatArray) -> FloatArray:
    """``table[v, g]`` = sum of ``d[8g + j]`` over the bits ``j`` set in byte ``v`` (most
    significant bit first, as ``numpy.unpackbits``); ``d`` is padded with zeros to whole bytes."""
    width = (d.size + 7) // 8
    padded = np.zeros(width * 8, dtype=np.float64)
    padded[: d.size] = d
    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)
    table: FloatArray = bits @ padded.reshape(width, 8).T
    return table


def _constant(d: FloatArray) -> bool:
    """All differences equal up to floating-point rounding (``b = a + c`` computed in floats)."""
    return float(np.ptp(d)) <= 1e-12 * max(1.0, float(np.abs(d).max()))


def t_test(a: ArrayLike, b: ArrayLike, *, weights: ArrayLike | None = None) -> float:
    """Two-sided paired Student t-test: ``t = mean(d) / (sd(d) / sqrt(m))``, ``m - 1`` dof;
    with ``weights``, the same on the weighted differences ``x`` (module doc).

    Degenerate cases, where SciPy would return NaN: ``d = 0`` gives 1; a constant non-zero
    ``d`` (zero variance) gives 0 — every query moved by the same amount.
    """
    from scipy import stats

    left, right = paired(a, b)
    d = right - left
    x = weighted_differences(d, weights)
    if x.size < 2 or not x.any():
        return 1.0
    if _constant(x):
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_rel(right, left) if x is d else stats.ttest_1samp(x, 0.0)
    p = float(result.pvalue)
    return 1.0 if math.isnan(p) else p


def wilcoxon(a: ArrayLike, b: ArrayLike, *, weights: ArrayLike | None = None) -> float:
    """Two-sided Wilcoxon signed-rank test on ``d = b - a`` (zero differences dropped, as
    Wilcoxon's original; exact distribution for small samples, normal approximation otherwise);
    with ``weights``, on the weighted differences ``x`` (module doc).

    ``d = 0`` gives 1.
    """
    from scipy import stats

    left, right = paired(a, b)
    d = weighted_differences(right - left, weights)
    if not d.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (RuntimeWarning, UserWarning))
        result = stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided")
    p = float(result.pvalue)
    return 1.0 if math.isnan(p) else p


def bootstrap_ci(
    delta: ArrayLike,
    n: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    *,
    weights: ArrayLike | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of ``mean(delta)`` (weighted mean with
    ``weights``).

    ``n`` resamples of the ``m`` queries with replacement; the interval is the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled means. Resampling
    queries (not documents) treats the query set as a sample of the query population, which is
    the uncertainty a regression verdict is about. With weights each query is drawn with its
    weight and a resample's mean is ``sum(w d) / sum(w)`` over the queries drawn.
    """
    d = np.asarray(delta, dtype=np.float64)
    if d.ndim != 1 or d.size == 0:
        raise InputError("the bootstrap needs a non-empty vector of per-query deltas")
    if not 0.0 < level < 1.0:
        raise InputError(f"confidence level must be in (0, 1), got {level}")
    if n < 1:
        raise InputError(f"the number of bootstrap resamples must be 1 or more, got {n}")
    w = query_weights(weights, d.size)
    if np.ptp(d) == 0.0:
        return float(d[0]), float(d[0])
    rng = np.random.default_rng(seed)
    m = d.size
    chunk = max(1, min(n, CHUNK_CELLS // m))
    means = np.empty(n, dtype=np.float64)
    done = 0
    while done < n:
        rows = min(chunk, n - done)
        picks = rng.integers(0, m, size=(rows, m), dtype=np.int32)
        if w is None:
            means[done : done + rows] = d[picks].mean(axis=1)
        else:
            drawn = w[picks]
            means[done : done + rows] = (drawn * d[picks]).sum(axis=1) / drawn.sum(axis=1)
        done += rows
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def bootstrap_difference(
    a: ArrayLike, b: ArrayLike, metric: Metric, n: int = 10_000, seed: int = 0,
    level: float = 0.95,
) -> tuple[float, tuple[float, float]]:  # fmt: skip
    """Paired bootstrap test of the difference of a measure's aggregates (e.g. a percentile).

    The ``m`` queries are resampled with replacement ``n`` times, the same picks for both
    systems; each replicate is ``aggregate(b*) - aggregate(a*)`` as the measure declares it. The
    interval is the percentile interval of the replicates; the two-sided p-value is twice the
    share of replicates on the far side of 0 (``p = min(1, 2 (1 + k) / (1 + n))``), so p < alpha
    exactly when the ``1 - alpha`` interval leaves 0 out. Used where a mean test does not fit
    the aggregate (``Measure.test == "bootstrap"``).
    """
    from evalplat.metrics.aggregate import aggregate_rows

    left, right = paired(a, b) if _finite(a, b) else _as_pair(a, b)
    if left.size == 0:
        raise InputError("the bootstrap needs at least one query")
    if not 0.0 < level < 1.0:
        raise InputError(f"confidence level must be in (0, 1), got {level}")
    if np.array_equal(left, right, equal_nan=True):
        return 1.0, (0.0, 0.0)
    rng = np.random.default_rng(seed)
    m = left.size
    chunk = max(1, min(n, CHUNK_CELLS // m))
    diffs = np.empty(n, dtype=np.float64)
    order_stat = _order_statistic(left, right, metric)
    done = 0
    while done < n:
        rows = min(chunk, n - done)
        picks = rng.integers(0, m, size=(rows, m), dtype=np.int32)
        if order_stat is not None:
            diffs[done : done + rows] = order_stat(picks)
        else:
            diffs[done : done + rows] = aggregate_rows(metric, right[picks]) - aggregate_rows(
                metric, left[picks]
            )
        done += rows
    diffs = diffs[~np.isnan(diffs)]
    if not diffs.size:
        return 1.0, (0.0, 0.0)
    low, high = np.quantile(diffs, [(1 - level) / 2, (1 + level) / 2])
    far = min(int((diffs <= 0).sum()), int((diffs >= 0).sum()))
    p_value = min(1.0, 2.0 * (1 + far) / (1 + diffs.size))
    return p_value, (float(low), float(high))


def _order_statistic(
    left: FloatArray, right: FloatArray, metric: Metric
) -> Callable[[NDArray[np.int32]], FloatArray] | None:
    """For a nearest-rank percentile without unknown values: the replicates' differences from
    the picks, as the k-th smallest sorted position of each side (a partial sort of integers,
    several times faster than a percentile of the resampled values). None otherwise."""
    if metric.aggregate != "percentile" or np.isnan(left).any() or np.isnan(right).any():
        return None
    m = left.size
    k = max(1, math.ceil(float(metric.param("p")) / 100.0 * m)) - 1  # type: ignore[arg-type]
    order_a, order_b = np.argsort(left, kind="stable"), np.argsort(right, kind="stable")
    rank_a = np.empty(m, dtype=np.int32)
    rank_a[order_a] = np.arange(m, dtype=np.int32)
    rank_b = np.empty(m, dtype=np.int32)
    rank_b[order_b] = np.arange(m, dtype=np.int32)
    sorted_a, sorted_b = left[order_a], right[order_b]

    def differences(picks: NDArray[np.int32]) -> FloatArray:
        kth_a = np.partition(rank_a[picks], k, axis=1)[:, k]
        kth_b = np.partition(rank_b[picks], k, axis=1)[:, k]
        result: FloatArray = sorted_b[kth_b] - sorted_a[kth_a]
        return result

    return differences


def _finite(a: ArrayLike, b: ArrayLike) -> bool:
    return bool(np.isfinite(np.asarray(a, dtype=np.float64)).all()
                and np.isfinite(np.asarray(b, dtype=np.float64)).all())  # fmt: skip


def _as_pair(a: ArrayLike, b: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Paired vectors that may hold NaN (an unknown value, e.g. latency of a failed query)."""
    left = np.asarray(a, dtype=np.float64)
    right = np.asarray(b, dtype=np.float64)
    if left.ndim != 1 or left.shape != right.shape:
        raise InputError("paired values need two vectors of the same length")
    if np.isinf(left).any() or np.isinf(right).any():
        raise InputError("paired values must not be infinite")
    return left, right


def holm(p_values: Sequence[float] | ArrayLike) -> FloatArray:
    """Holm-Bonferroni adjusted p-values, in the input order.

    With the ``m`` p-values sorted ascending ``p_(1) <= ... <= p_(m)``::

        p~_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j))

    Rejecting every hypothesis with ``p~ < alpha`` controls the family-wise error rate at alpha
    under any dependence between the tests (the metrics of one run are strongly dependent).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise InputError("holm() takes a flat list of p-values")
    if p.size == 0:
        return p.copy()
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise InputError("p-values must be numbers between 0 and 1")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled))
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = adjusted_sorted
    return adjusted


def effect_size(a: ArrayLike, b: ArrayLike, *, weights: ArrayLike | None = None) -> float | None:
    """Paired standardised mean difference (Cohen's d_z): ``mean(d) / sd(d)``, ``sd`` with
    ``m - 1`` degrees of freedom (of the weighted differences ``x`` with ``weights``).

    0 for ``d = 0``; None when undefined (fewer than two queries, or a constant non-zero ``d``,
    whose standardised size is infinite).
    """
    left, right = paired(a, b)
    d = weighted_differences(right - left, weights)
    if not d.any():
        return 0.0
    if d.size < 2:
        return None
    if _constant(d):
        return None
    sd = float(d.std(ddof=1))
    return float(d.mean()) / sd


def wins_ties_losses(
    a: ArrayLike, b: ArrayLike, *, tolerance: float = 1e-9, higher_is_better: bool = True
) -> WinsTiesLosses:
    """Count queries where ``b`` beats ``a`` by more than ``tolerance`` in the metric's
    direction (wins), loses by more than it (losses), or neither (ties)."""
    left, right = paired(a, b)
    if tolerance < 0:
        raise InputError(f"tie tolerance must be 0 or more, got {tolerance}")
    d = right - left
    if not higher_is_better:
        d = -d
    wins = int(np.count_nonzero(d > tolerance))
    losses = int(np.count_nonzero(d < -tolerance))
    return WinsTiesLosses(wins, d.size - wins - losses, losses)
