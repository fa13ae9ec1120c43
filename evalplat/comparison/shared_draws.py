"""One random draw for every metric of a comparison.

``stats.randomization_test``, ``stats.bootstrap_ci`` and ``stats.bootstrap_difference`` each
start a fresh ``numpy.random.default_rng(seed)`` and draw in fixed-size blocks, so every metric
measured over the same ``m`` queries already sees the *same* sign vectors and the *same*
resamples. This module makes each of those draws once per comparison (per query count) and
applies it to every metric at the same time, which gives the same numbers as the one-metric
functions (up to floating-point summation order) at a fraction of the cost:

- **Randomization test.** A block of random bytes is expanded into its 0/1 bits ``U`` (rows =
  permutations, columns = queries) and multiplied by the matrix ``X`` of the metrics' (weighted)
  differences: ``U X`` holds ``u·x`` for every permutation and metric, and ``s·x = 2 u·x - Σx``.
  The p-value of each metric is ``(1 + #{|s·x| >= |Σx|}) / (1 + n)`` as in the one-metric test.
- **Bootstrap of a mean.** A block of resamples (query indices drawn with replacement) becomes a
  count matrix ``C`` (how often each query was drawn in each resample); every metric's resampled
  mean is a column of ``C (W ∘ D) / C W`` (``W`` the query weights, ones when unweighted), so the
  resampled means of all metrics cost one matrix product.
- **Bootstrap of a percentile.** With the same counts reordered by each side's sorted values,
  the nearest-rank order statistic of a resample is the first sorted position whose running
  count exceeds ``k`` — the value a partial sort of the resample would give.

Rows of a comparison register what they need (``randomization``, ``mean_interval``,
``percentile``); ``run`` computes everything and writes ``p_value``, ``ci_low`` and ``ci_high``
into the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalplat.comparison import stats
from evalplat.comparison.results import CompareOptions

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

FloatArray = stats.FloatArray

# Matrix products run on blocks of this many rows: small enough that the expanded bits stay in
# the processor's cache and that BLAS does not split the product across threads (which, on a
# busy machine, costs more than it saves at these sizes).
_BLOCK_ROWS = 8
# With dozens of columns (a leaderboard's runs) the products are wide enough that blocks of
# this many rows keep BLAS busy, where 8-row blocks leave it waiting (docs/performance.md).
WIDE_BLOCK_ROWS = 256


def _product(left: NDArray[Any], right: FloatArray, rows: int = _BLOCK_ROWS) -> FloatArray:
    """``left @ right`` (``left`` 0/1 bits or counts, converted to floats) in row blocks."""
    out = np.empty((left.shape[0], right.shape[1]), dtype=np.float64)
    for start in range(0, left.shape[0], rows):
        block = left[start : start + rows].astype(np.float64)
        out[start : start + rows] = block @ right
    return out


@dataclass
class _Percentile:
    row: dict[str, Any]
    left: FloatArray
    right: FloatArray
    metric: Metric


@dataclass
class _Group:
    """What the metrics measured over ``m`` queries need from the draws of that size."""

    tests: list[tuple[dict[str, Any], FloatArray]] = field(default_factory=list)
    means: list[tuple[dict[str, Any], FloatArray, FloatArray | None, float]] = field(
        default_factory=list
    )
    percentiles: list[_Percentile] = field(default_factory=list)


class SharedDraws:
    """Collects the randomized procedures of a comparison's rows and runs them together."""

    def __init__(self, options: CompareOptions, *, block_rows: int = _BLOCK_ROWS) -> None:
        self.options = options
        self.block_rows = block_rows
        self._groups: dict[int, _Group] = {}

    def _group(self, size: int) -> _Group:
        return self._groups.setdefault(size, _Group())

    def randomization(self, row: dict[str, Any], x: FloatArray) -> None:
        """The randomization test of ``mean(x) = 0`` (``x`` the weighted differences) into
        ``row["p_value"]``."""
        self._group(x.size).tests.append((row, x))

    def mean_interval(
        self, row: dict[str, Any], d: FloatArray, weights: FloatArray | None, scale: float
    ) -> None:
        """The bootstrap interval of the (weighted) mean of ``d``, times ``scale``, into
        ``row["ci_low"]`` and ``row["ci_high"]``."""
        self._group(d.size).means.append((row, d, weights, scale))

    def percentile(
        self, row: dict[str, Any], left: FloatArray, right: FloatArray, metric: Metric
    ) -> None:
        """``stats.bootstrap_difference`` of a percentile measure into the row's p-value and
        interval."""
        self._group(left.size).percentiles.append(_Percentile(row, left, right, metric))

    def run(self) -> None:
        options = self.options
        for size, group in self._groups.items():
            if group.tests:
                x = np.column_stack([values for _, values in group.tests])
                p_values = randomization_tests(
                    x, options.permutations, options.seed, block_rows=self.block_rows
                )
                for (row, _), p in zip(group.tests, p_values, strict=True):
                    row["p_value"] = float(p)
            fallback = [job for job in group.percentiles if not _ranked(job)]
            for job in fallback:
                p, (low, high) = stats.bootstrap_difference(
                    job.left, job.right, job.metric, n=options.bootstrap, seed=options.seed,
                    level=options.ci_level,
                )  # fmt: skip
                job.row.update(p_value=p, ci_low=low, ci_high=high)
            ranked = [job for job in group.percentiles if _ranked(job)]
            if group.means or ranked:
                _bootstrap(size, group.means, ranked, options, self.block_rows)
        self._groups.clear()


def randomization_tests(
    x: FloatArray, n: int, seed: int, *, block_rows: int = _BLOCK_ROWS
) -> FloatArray:
    """Two-sided paired randomization p-values of every column of ``x`` (queries by metrics),
    each exactly ``stats.randomization_test`` of that column (same seed, same sign vectors)."""
    m, width_k = x.shape
    p_values = np.ones(width_k, dtype=np.float64)
    live = x.any(axis=0) if m else np.zeros(width_k, dtype=bool)
    if not live.any():
        return p_values
    cols = x[:, live]
    total = cols.sum(axis=0)
    observed = np.abs(total)
    slack = 1e-9 * np.maximum(1.0, np.abs(cols).sum(axis=0))
    width = (m + 7) // 8
    padded = np.zeros((width * 8, cols.shape[1]), dtype=np.float64)
    padded[:m] = cols
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n, stats.CHUNK_CELLS // width))
    extreme = np.zeros(cols.shape[1], dtype=np.int64)
    done = 0
    while done < n:
        rows = min(chunk, n - done)
        packed = rng.integers(0, 256, size=(rows, width), dtype=np.uint8)
        flipped = 2.0 * _product(np.unpackbits(packed, axis=1), padded, block_rows) - total
        extreme += np.count_nonzero(np.abs(flipped) >= observed - slack, axis=0)
        done += rows
    p_values[live] = (1 + extreme) / (1 + n)
    return p_values


def _ranked(job: _Percentile) -> bool:
    """A nearest-rank percentile without unknown values: computed from the shared counts."""
    return (
        job.metric.aggregate == "percentile"
        and not np.isnan(job.left).any()
        and not np.isnan(job.right).any()
    )


class _OrderStatistic:
    """The k-th smallest value (0-based) of each resample of one side, from the resamples'
    counts: the first sorted position whose running count exceeds ``k``.

    Only a window of sorted positions on the near side of ``k`` is summed (``k + 1`` plus a
    margin of many standard deviations of the count that falls in it); a resample whose window
    holds too few draws — almost never — is summed over all positions."""

    def __init__(self, values: FloatArray, k: int) -> None:
        m = values.size
        self.order = np.argsort(values, kind="stable")
        self.sorted = values[self.order]
        self.from_top = k >= m / 2
        needed = m - k if self.from_top else k + 1
        span = min(m, needed + 8 * math.ceil(math.sqrt(needed)) + 64)
        # from the top, the k-th smallest is the (m - 1 - k)-th largest
        self.target = m - 1 - k if self.from_top else k
        self.window = self.order[::-1][:span] if self.from_top else self.order[:span]
        self.k = k

    def __call__(self, counts: NDArray[np.int64]) -> FloatArray:
        m = self.sorted.size
        running = np.cumsum(counts[:, self.window], axis=1)
        step = np.argmax(running > self.target, axis=1)
        position = m - 1 - step if self.from_top else step
        short = np.flatnonzero(running[:, -1] <= self.target)
        if short.size:
            full = np.cumsum(counts[short][:, self.order], axis=1)
            position[short] = np.argmax(full > self.k, axis=1)
        result: FloatArray = self.sorted[position]
        return result


def _bootstrap(
    m: int,
    means: list[tuple[dict[str, Any], FloatArray, FloatArray | None, float]],
    percentiles: list[_Percentile],
    options: CompareOptions,
    block_rows: int = _BLOCK_ROWS,
) -> None:
    """Every bootstrap of the queries of size ``m`` from one stream of resamples."""
    n, level = options.bootstrap, options.ci_level
    varying = [(row, d, w, s) for row, d, w, s in means if np.ptp(d) != 0.0]
    for row, d, _, scale in means:
        if np.ptp(d) == 0.0:  # stats.bootstrap_ci: a constant delta is its own interval
            row.update(ci_low=float(d[0]) * scale, ci_high=float(d[0]) * scale)
    # one product for every metric: the weighted sums, then the sums of the weights drawn
    # (one column per distinct weight vector; unweighted means divide by m)
    distinct = {id(w): w for _, _, w, _ in varying if w is not None}
    slot = {key: len(varying) + i for i, key in enumerate(distinct)}
    columns = [d if w is None else d * w for _, d, w, _ in varying] + list(distinct.values())
    values = np.column_stack(columns) if columns else None
    denominators = [None if w is None else slot[id(w)] for _, _, w, _ in varying]
    sides = []
    for job in percentiles:
        k = max(1, math.ceil(float(job.metric.param("p")) / 100.0 * m)) - 1  # type: ignore[arg-type]
        sides.append((_OrderStatistic(job.left, k), _OrderStatistic(job.right, k)))
    resampled = np.empty((n, len(varying)), dtype=np.float64)
    diffs = np.empty((n, len(percentiles)), dtype=np.float64)
    rng = np.random.default_rng(options.seed)
    chunk = max(1, min(n, stats.CHUNK_CELLS // m))
    if block_rows > _BLOCK_ROWS:  # wide products: resamples in blocks as large as the products'
        chunk = max(chunk, min(n, block_rows))
    done = 0
    while done < n:
        rows = min(chunk, n - done)
        picks = rng.integers(0, m, size=(rows, m), dtype=np.int32)
        flat = (picks + (np.arange(rows, dtype=np.int64) * m)[:, None]).ravel()
        counts = np.bincount(flat, minlength=rows * m).reshape(rows, m)
        if values is not None:
            sums = _product(counts, values, block_rows)
            for column, where in enumerate(denominators):
                drawn = float(m) if where is None else sums[:, where]
                resampled[done : done + rows, column] = sums[:, column] / drawn
        for column, (side_a, side_b) in enumerate(sides):
            diffs[done : done + rows, column] = side_b(counts) - side_a(counts)
        done += rows
    quantiles = [(1 - level) / 2, (1 + level) / 2]
    if varying:
        bounds = np.quantile(resampled, quantiles, axis=0)
        for column, (row, _, _, scale) in enumerate(varying):
            row.update(ci_low=float(bounds[0, column]) * scale,
                       ci_high=float(bounds[1, column]) * scale)  # fmt: skip
    for column, job in enumerate(percentiles):
        replicates = diffs[:, column]
        low, high = np.quantile(replicates, quantiles)
        far = min(int((replicates <= 0).sum()), int((replicates >= 0).sum()))
        job.row.update(
            p_value=min(1.0, 2.0 * (1 + far) / (1 + n)), ci_low=float(low), ci_high=float(high)
        )
