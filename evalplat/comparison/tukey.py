"""All-pairs differences between many runs: the randomized Tukey HSD and the compact letter
display of its result.

**Randomized Tukey HSD** (Carterette 2012, "Multiple testing in statistical analysis of
systems-based information retrieval experiments", TOIS 30(1); Sakai's randomised Tukey HSD).
``x`` holds one row per query and one column per run. Under the null hypothesis that the runs
do not differ, each query's scores are exchangeable across the runs, so a draw permutes every
row independently and uniformly; the statistic of a draw is the range of the column means::

    R* = max_j mean_i x[i, π_i(j)] - min_j mean_i x[i, π_i(j)]

and the p-value of the pair (j, l), family-wise over all pairs of the metric, is the share of
draws whose range reaches the pair's observed difference::

    p_jl = (1 + #{R* >= |mean(x_j) - mean(x_l)|}) / (1 + n)

(the +1 counts the observed assignment, as ``evalplat.comparison.stats.randomization_test``
does). A pair differs when ``p_jl <= alpha``: the largest range of ``n`` equivalent runs would
reach such a difference in fewer than an ``alpha`` share of draws, whatever the number of pairs.

Vectorised: a block of draws is one matrix of random integer keys, each holding the run's
index in its low bits, sorted along the runs (a uniform permutation per query and draw: 57
random bits tie with probability about k^2 / 2^58), shared by every metric of the
leaderboard; each metric's column sums are one weighted ``bincount`` of the scattered values.
Queries whose runs all score the same add the same amount to every column and are dropped
first (the ranges do not change).

**Compact letter display** (Piepho 2004, "An algorithm for a letter-based representation of
all-pairwise comparisons", J. Comput. Graph. Stat. 13(2)): start with one letter shared by
every run; for each pair that differs, every letter held by both is split in two (one without
each run of the pair), and a letter whose runs are all held by another letter is absorbed. Runs
that share a letter are not shown to differ. Letters are then named a, b, c, ... in the order of
the best run holding them.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from evalplat.comparison.stats import CHUNK_CELLS, FloatArray
from evalplat.errors import InputError

__all__ = ["hsd_p_values", "letters"]


def hsd_p_values(matrices: Sequence[FloatArray], n: int, seed: int) -> list[FloatArray]:
    """The randomized Tukey HSD p-value of every pair of runs, for each ``(queries, runs)``
    matrix of ``matrices`` (one per metric, the same queries and runs): a symmetric ``runs x
    runs`` matrix per metric, 1 on the diagonal. Every metric sees the same permutations (the
    same ``seed``, the same queries)."""
    if n < 1:
        raise InputError(f"the number of permutations must be 1 or more, got {n}")
    if not matrices:
        return []
    m, k = matrices[0].shape
    if any(x.shape != (m, k) for x in matrices):
        raise InputError("every metric of a leaderboard needs the same queries and runs")
    means = [x.mean(axis=0) if m else np.zeros(k) for x in matrices]
    gaps = [np.abs(mu[:, None] - mu[None, :]) for mu in means]
    # rows where the runs differ: a constant row adds the same to every column sum
    varying = np.zeros(m, dtype=bool)
    for x in matrices:
        varying |= np.ptp(x, axis=1) > 0 if m else varying
    kept = [x[varying] for x in matrices]
    rows = int(varying.sum())
    result = [np.ones((k, k), dtype=np.float64) for _ in matrices]
    if rows == 0 or k < 2:
        return result
    ranges = _ranges(kept, n, seed, m)
    for gap, ranged, p in zip(gaps, ranges, result, strict=True):
        # a range equal to the observed gap up to rounding counts as reaching it
        slack = 1e-9 * max(1.0, float(gap.max()))
        ordered = np.sort(ranged)
        reached = n - np.searchsorted(ordered, gap - slack, side="left")
        p[:] = (1 + reached) / (1 + n)
        np.fill_diagonal(p, 1.0)
        p[gap == 0] = 1.0
    return result


def _ranges(kept: list[FloatArray], n: int, seed: int, m: int) -> list[FloatArray]:
    """The range of the column means of ``n`` row-permuted copies of each matrix."""
    rows, k = kept[0].shape
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n, CHUNK_CELLS * 4 // (rows * k)))
    tiled = [np.tile(x.ravel(), chunk) for x in kept]
    ranges = [np.empty(n, dtype=np.float64) for _ in kept]
    # sort keys: 57 random bits above the run's index (6 bits; more runs take more), so that one
    # in-place sort of integers gives each row a uniform random order of its runs
    shift = max(6, int(k - 1).bit_length())
    index = np.arange(k, dtype=np.uint64)
    done = 0
    while done < n:
        block = min(chunk, n - done)
        keys = rng.integers(0, 2 ** (63 - shift), size=(block, rows, k), dtype=np.uint64)
        keys <<= np.uint64(shift)
        keys |= index
        keys.sort(axis=2)
        # the scatter form: value x[i, c] goes to column order[c] of its draw, where ``order``
        # is a uniform random permutation, as is its inverse
        order = (keys & np.uint64((1 << shift) - 1)).astype(np.intp)
        order += (np.arange(block, dtype=np.intp) * k)[:, None, None]
        where = order.ravel()
        for flat, out in zip(tiled, ranges, strict=True):
            weights = flat if block == chunk else flat[: block * rows * k]
            sums = np.bincount(where, weights=weights, minlength=block * k)
            means = sums.reshape(block, k) / m
            out[done : done + block] = means.max(axis=1) - means.min(axis=1)
        done += block
    return ranges


def letters(ranked: Sequence[int], differ: NDArray[np.bool_]) -> list[str]:
    """The compact letter display of runs ``0..k-1`` (module doc): the letters of each run,
    given ``differ[j, l]`` (pairs shown to differ, symmetric) and the runs best first
    (``ranked``), which names the letters."""
    k = differ.shape[0]
    if sorted(ranked) != list(range(k)):
        raise InputError("the ranking must name every run once")
    columns: list[frozenset[int]] = [frozenset(range(k))] if k else []
    for j in range(k):
        for i in range(j + 1, k):
            if not differ[j, i]:
                continue
            split: list[frozenset[int]] = []
            for column in columns:
                if j in column and i in column:
                    split += [column - {j}, column - {i}]
                else:
                    split.append(column)
            columns = _absorb(split)
    position = {run: place for place, run in enumerate(ranked)}
    columns.sort(key=lambda c: sorted(position[r] for r in c))
    names = [_letter_name(i) for i in range(len(columns))]
    return ["".join(n for n, c in zip(names, columns, strict=True) if run in c)
            for run in range(k)]  # fmt: skip


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """Drop empty letters, repeated ones and those whose runs another letter holds."""
    unique = list(dict.fromkeys(c for c in columns if c))
    return [c for c in unique if not any(c < other for other in unique)]


def _letter_name(index: int) -> str:
    """a..z, then aa, ab, ...: a board of 50 runs can need more than 26 letters."""
    alphabet = string.ascii_lowercase
    name = alphabet[index % 26]
    while index >= 26:
        index = index // 26 - 1
        name = alphabet[index % 26] + name
    return name
