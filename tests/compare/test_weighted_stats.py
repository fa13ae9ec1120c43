"""Query weights in the paired statistics: hand-computed cases; equal weights change nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from evalplat.comparison import stats
from evalplat.errors import InputError

# d = b - a = [0.4, 0.4, 0.4, -0.4]
A = np.array([0.5, 0.2, 0.1, 0.6])
B = A + np.array([0.4, 0.4, 0.4, -0.4])
W = np.array([3.0, 1.0, 1.0, 1.0])


def test_weighted_mean_is_sum_of_weighted_values_over_the_weights() -> None:
    assert stats.weighted_mean([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]) == 0.5
    assert stats.weighted_mean([1.0, 0.0, 0.0]) == pytest.approx(1 / 3)
    assert stats.weighted_mean([], None) == 0.0


def test_weighted_randomization_test_flips_the_signs_of_weighted_differences() -> None:
    # Unweighted: T = |0.8|; of the 16 sign vectors, 10 give |sum| >= 0.8 (k plus signs:
    # 0.4 (2k - 4) for k = 0..4, counts 1, 4, 6, 4, 1): p = 10 / 16.
    assert stats.randomization_test(A, B, n=100_000, seed=1) == pytest.approx(0.625, abs=0.01)
    # Weighted (3, 1, 1, 1): x = w d / 1.5 = [0.8, 4/15, 4/15, -4/15] ∝ [1.2, .4, .4, -.4], so
    # T ∝ 1.6; ±1.2 plus 0.4 (2k - 3) reaches |1.6| for 4 of the 8 vectors on each sign of
    # the first query: p = 8 / 16.
    weighted = stats.randomization_test(A, B, n=100_000, seed=1, weights=W)
    assert weighted == pytest.approx(0.5, abs=0.01)


def test_weights_that_cancel_the_delta_give_p_one() -> None:
    # weights (1, 1, 1, 3): sum(w d) = 1.2 - 1.2 = 0, so every flip is at least as extreme
    assert stats.randomization_test(A, B, n=2_000, weights=[1, 1, 1, 3]) == 1.0
    assert stats.weighted_mean(B - A, [1, 1, 1, 3]) == pytest.approx(0.0, abs=1e-12)


def test_weighted_t_test_is_the_t_test_of_weighted_differences() -> None:
    # x = [8/15, ...] as above scaled: mean 4/15, deviations (8/15, 0, 0, -8/15), sd^2 =
    # 128/675, so t = (4/15) / (sqrt(128/675) / 2) = sqrt(1.5) with 3 degrees of freedom.
    expected = 2 * scipy_stats.t.sf(math.sqrt(1.5), 3)
    assert stats.t_test(A, B, weights=W) == pytest.approx(expected, rel=1e-9)
    # the effect size is mean(x) / sd(x) = (4/15) / sqrt(128/675)
    assert stats.effect_size(A, B, weights=W) == pytest.approx(
        (4 / 15) / math.sqrt(128 / 675), rel=1e-9
    )


def test_weighted_wilcoxon_ranks_the_weighted_differences() -> None:
    # x ∝ [1.2, .4, .4, -.4]: |x| ranks 4, 2, 2, 2 (ties averaged), so W- = 2 where the
    # unweighted d (all |d| tied) gives W- = 2.5; the p-value is SciPy's signed-rank test of x
    x = (B - A) * W / W.mean()
    expected = scipy_stats.wilcoxon(x, zero_method="wilcox").pvalue
    assert stats.wilcoxon(A, B, weights=W) == pytest.approx(float(expected))


def test_weighted_bootstrap_draws_queries_with_their_weights() -> None:
    # d = [1, 0], w = [3, 1]: a resample is (1, 1) -> 1, (0, 0) -> 0 (each 1/4) or mixed ->
    # (3 * 1 + 1 * 0) / 4 = 0.75 (1/2); the 30 % and 70 % quantiles both fall in the mixed
    # block. Unweighted the mixed mean is 0.5.
    d = np.array([1.0, 0.0])
    assert stats.bootstrap_ci(d, n=10_000, seed=2, level=0.4, weights=[3, 1]) == (0.75, 0.75)
    assert stats.bootstrap_ci(d, n=10_000, seed=2, level=0.4) == (0.5, 0.5)


@pytest.mark.parametrize("weights", [[1, 2, -1, 1], [1, math.nan, 1, 1], [0, 0, 0, 0], [1, 2]])
def test_bad_weights_are_refused(weights: list[float]) -> None:
    with pytest.raises(InputError):
        stats.randomization_test(A, B, n=10, weights=weights)


values = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(values, values), min_size=1, max_size=40),
    weight=st.floats(min_value=1e-3, max_value=1e3, allow_nan=False),
)
def test_equal_weights_give_exactly_the_unweighted_results(
    pairs: list[tuple[float, float]], weight: float
) -> None:
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    w = np.full(a.size, weight)
    d = b - a
    assert stats.weighted_mean(a, w) == stats.weighted_mean(a) == float(a.mean())
    assert stats.randomization_test(a, b, n=200, seed=5, weights=w) == stats.randomization_test(
        a, b, n=200, seed=5
    )
    assert stats.t_test(a, b, weights=w) == stats.t_test(a, b)
    assert stats.wilcoxon(a, b, weights=w) == stats.wilcoxon(a, b)
    assert stats.bootstrap_ci(d, n=200, seed=5, weights=w) == stats.bootstrap_ci(d, n=200, seed=5)
    assert stats.effect_size(a, b, weights=w) == stats.effect_size(a, b)
