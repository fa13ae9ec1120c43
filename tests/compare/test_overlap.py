"""Rank overlap: Jaccard@k, extrapolated RBO and Kendall tau on hand-checked rankings."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.comparison.overlap import jaccard_at_k, kendall_tau, rank_overlap, rbo


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
    assert kendall_tau(list("abcd"), list("abcd")) == pytest.approx(1.0)


def test_kendall_tau_of_near_disjoint_top_tens_is_far_from_one() -> None:
    # two top-10s sharing one document (Jaccard 1/19): the old shared-documents-only τ read 1
    a = [f"a{i}" for i in range(10)]
    b = ["a0"] + [f"b{i}" for i in range(9)]
    tau = kendall_tau(a, b, 10)
    assert tau is not None and tau < 0
    assert jaccard_at_k(a, b, 10) == pytest.approx(1 / 19)
    disjoint = kendall_tau(a, [f"b{i}" for i in range(10)], 10)
    assert disjoint is not None and disjoint < tau


def test_kendall_tau_ranks_missing_documents_below_the_list_tied() -> None:
    # union a b c x; ranks in A: 1 2 3 4(missing); in B (a b x): 1 2 4(missing) 3
    from scipy import stats

    expected = stats.kendalltau([1, 2, 3, 4], [1, 2, 4, 3]).statistic
    assert kendall_tau(list("abc"), list("abx")) == pytest.approx(expected)
    # only the top k counts: a difference below rank 2 is invisible at k = 2
    assert kendall_tau(list("abcd"), list("abdc"), 2) == pytest.approx(1.0)


def test_kendall_tau_is_undefined_for_fewer_than_two_documents_or_an_empty_list() -> None:
    assert kendall_tau(["a"], ["a"]) is None
    assert kendall_tau(list("abc"), []) is None
    assert kendall_tau([], []) is None


@settings(max_examples=120)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), max_size=14, unique=True),
            st.lists(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), max_size=14, unique=True),
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(min_value=1, max_value=12),
    st.sampled_from([0.5, 0.8, 0.9, 0.98]),
)
def test_rank_overlap_over_all_queries_equals_the_per_query_functions_exactly(
    pairs: list[tuple[list[str], list[str]]], k: int, p: float
) -> None:
    def frame(side: int) -> pd.DataFrame:
        rows = [
            (f"q{i}", doc, rank * 3)  # ranks with gaps: only their order counts
            for i, pair in enumerate(pairs)
            for rank, doc in enumerate(pair[side], start=1)
        ]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank"]).sample(
            frac=1, random_state=0
        )

    summary, per_query = rank_overlap(frame(0), frame(1), k=k, p=p)
    answered = {f"q{i}" for i, (a, b) in enumerate(pairs) if a or b}
    assert list(per_query["query_id"]) == sorted(answered)
    expected = {f"q{i}": pair for i, pair in enumerate(pairs)}
    taus = []
    for query_id, jaccard, value, tau in per_query.itertuples(index=False):
        a, b = expected[query_id]
        assert jaccard == jaccard_at_k(a, b, k)
        assert value == rbo(a, b, p)
        want = kendall_tau(a, b, k)
        assert (tau is None or math.isnan(tau)) if want is None else tau == want
        if want is not None:
            taus.append(want)
    assert summary.queries == len(answered)
    assert summary.kendall_tau == (sum(taus) / len(taus) if taus else None)
