"""Rank overlap: Jaccard@k, extrapolated RBO and Kendall tau on hand-checked rankings."""

from __future__ import annotations

import pytest

from evalplat.overlap import jaccard_at_k, kendall_tau, rbo


def test_rbo_is_one_for_identical_or_prefix_rankings_and_zero_for_disjoint_ones() -> None:
    a = list("abcdefgh")
    assert rbo(a, a) == pytest.approx(1.0)
    assert rbo(a, a[:3]) == pytest.approx(1.0)  # extrapolation: agreement so far continues
    assert rbo(a, list("stuvwxyz")) == 0.0
    assert rbo([], []) == 1.0 and rbo(a, []) == 0.0


def test_rbo_of_two_lists_swapping_the_top_two_matches_the_formula() -> None:
    # X_1 = 0, X_2 = 2: (1-p)/p * (0 + 2/2 p^2) + (2/2) p^2 = (1-p) p + p^2 = p
    assert rbo(["a", "b"], ["b", "a"], p=0.9) == pytest.approx(0.9)
    assert rbo(list("abc"), list("cba")) == rbo(list("cba"), list("abc"))


def test_jaccard_and_kendall_tau() -> None:
    assert jaccard_at_k(list("abcd"), list("abxy"), 4) == pytest.approx(2 / 6)
    assert jaccard_at_k([], [], 10) == 1.0
    assert kendall_tau(list("abcd"), list("dcba")) == pytest.approx(-1.0)
    assert kendall_tau(list("abc"), list("xay")) is None  # one shared document
