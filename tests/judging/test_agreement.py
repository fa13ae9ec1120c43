"""Agreement statistics of the calibration: weighted kappa over a scale, Krippendorff's alpha."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.testsets.raters import krippendorff_alpha, weighted_kappa


def _alpha_by_pairs(a: list[int], b: list[int]) -> float:
    """Interval alpha straight from its definition: disagreement within items against
    disagreement between all pairable values (Krippendorff 2004, eq. for two coders)."""
    values = a + b
    n = len(values)
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) * 2 / n
    expected = sum((x - y) ** 2 for x, y in itertools.permutations(values, 2)) / (n * (n - 1))
    return 1.0 - observed / expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=30))
def test_interval_alpha_matches_its_definition(pairs: list[tuple[int, int]]) -> None:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    alpha = krippendorff_alpha(a, b, "interval")
    if len(set(a + b)) == 1:
        assert alpha is None
    else:
        assert alpha == pytest.approx(_alpha_by_pairs(a, b))


def test_ordinal_alpha_is_one_when_raters_agree_and_symmetric() -> None:
    # perfect agreement is 1, and swapping the raters changes nothing
    a, b = [0, 1, 2, 3, 3, 2], [0, 1, 2, 3, 3, 2]
    assert krippendorff_alpha(a, b) == 1.0
    c = [0, 1, 3, 3, 2, 2]
    assert krippendorff_alpha(a, c) == pytest.approx(krippendorff_alpha(c, a))
    assert krippendorff_alpha(a, c) < 1.0


def test_kappa_over_the_scale_counts_an_unused_grade_as_a_step() -> None:
    human, judge = [0, 0, 3, 3, 1, 1], [1, 3, 3, 0, 1, 0]
    observed_only = weighted_kappa(human, judge)
    over_scale = weighted_kappa(human, judge, scale=(0, 3))
    assert observed_only is not None and over_scale is not None
    # 0 against 3 is three steps on the scale, not two steps among the grades used
    weights = np.abs(np.subtract.outer(np.arange(4), np.arange(4))) / 3
    table = np.zeros((4, 4))
    for h, j in zip(human, judge, strict=True):
        table[h, j] += 1 / len(human)
    chance = np.outer(table.sum(axis=1), table.sum(axis=0))
    assert over_scale == pytest.approx(1 - (weights * table).sum() / (weights * chance).sum())
    assert over_scale != pytest.approx(observed_only)
