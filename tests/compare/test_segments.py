"""Weighted comparisons and per-segment rows of ``compare_scores`` (pure, no database)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalplat.comparison import stats
from evalplat.comparison.verdicts import CompareOptions, Gate, compare_scores
from evalplat.errors import InputError

FAST = CompareOptions(permutations=2000, bootstrap=500)


def tidy(values: dict[str, np.ndarray]) -> pd.DataFrame:
    n = len(next(iter(values.values())))
    ids = [f"q{i:03d}" for i in range(n)]
    return pd.DataFrame(
        {
            "query_id": ids * len(values),
            "metric": np.repeat(list(values), n),
            "value": np.concatenate(list(values.values())),
        }
    )


def scenario(n: int = 60, tail: int = 30) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, list]]:
    """nDCG@10 unchanged on 'head' queries and 0.3 lower on the 'tail' ones (the last ``tail``
    queries); every query is also tagged 'all-en'; q000 to q004 also 'rare'."""
    rng = np.random.default_rng(4)
    a = rng.uniform(0.4, 0.9, n)
    b = a.copy()
    b[n - tail :] -= 0.3
    b[: n - tail] += rng.normal(0, 0.01, n - tail)
    tags: dict[str, list] = {}
    for i in range(n):
        tags[f"q{i:03d}"] = ["tail" if i >= n - tail else "head", "all-en"]
        if i < 5:
            tags[f"q{i:03d}"].append("rare")
    return tidy({"nDCG@10": a}), tidy({"nDCG@10": b}), tags


def test_weighted_means_are_sum_of_weighted_scores_over_the_weights() -> None:
    base = tidy({"nDCG@10": np.array([1.0, 0.0, 0.5, 0.5])})
    cand = tidy({"nDCG@10": np.array([0.0, 0.0, 0.5, 0.5])})
    weights = {"q000": 3.0, "q001": 1.0}  # q002, q003: no weight, count 1
    result = compare_scores(base, cand, options=FAST, weights=weights)
    row = result.metric("nDCG@10")
    assert row.baseline == pytest.approx((3 * 1.0 + 0 + 0.5 + 0.5) / 6)
    assert row.candidate == pytest.approx(1.0 / 6)
    assert row.delta == pytest.approx(-0.5)
    assert result.weighted and result.to_dict()["weighted"] is True
    plain = compare_scores(base, cand, options=FAST)
    assert plain.metric("nDCG@10").delta == pytest.approx(-0.25)
    assert plain.to_dict()["weighted"] is False


def test_equal_weights_give_the_unweighted_comparison() -> None:
    base, cand, _ = scenario()
    weights = {f"q{i:03d}": 2.5 for i in range(60)}
    weighted = compare_scores(base, cand, options=FAST, weights=weights)
    plain = compare_scores(base, cand, options=FAST)
    assert weighted.metrics == plain.metrics


def test_every_metric_is_reported_per_segment_with_query_counts() -> None:
    base, cand, tags = scenario()
    result = compare_scores(base, cand, options=FAST, tags=tags)
    rows = {(s.metric, s.segment): s for s in result.segments}
    assert sorted(rows) == [("nDCG@10", t) for t in ("all-en", "head", "rare", "tail")]
    assert [rows[("nDCG@10", t)].queries for t in ("all-en", "head", "rare", "tail")] == [
        60, 30, 5, 30
    ]  # fmt: skip
    tail = rows[("nDCG@10", "tail")]
    assert tail.delta == pytest.approx(-0.3)
    assert tail.ci_low is not None and tail.ci_high is not None and tail.ci_high < 0
    assert not tail.gated and tail.verdict == "regression"  # shown, not gated without a gate
    assert rows[("nDCG@10", "rare")].note == "5 queries, fewer than 20: not gated"
    assert rows[("nDCG@10", "head")].note is None
    data = result.to_dict()["segments"]
    assert {"metric", "segment", "queries", "delta", "ci_low", "p_value", "verdict"} <= set(data[0])


def test_a_gate_on_a_segment_fails_a_comparison_the_whole_set_passes() -> None:
    base, cand, tags = scenario(n=200, tail=25)
    gates = [Gate("nDCG@10", max_drop=0.05), Gate("nDCG@10", max_drop=0.05, segment="tail")]
    result = compare_scores(base, cand, gates=gates, options=FAST, tags=tags)
    whole = result.metric("nDCG@10")
    assert whole.delta == pytest.approx(-0.3 * 25 / 200, abs=0.01)  # within max_drop
    assert whole.verdict == "unchanged"
    tail = next(s for s in result.segments if s.segment == "tail")
    assert tail.gated and tail.verdict == "regression"
    assert result.verdict == "regression" and result.segment_regressions == [tail]
    assert len(result.gates) == 2


def test_holm_runs_over_every_gated_metric_and_segment_pair() -> None:
    base, cand, tags = scenario()
    gates = [
        Gate("nDCG@10"),
        Gate("nDCG@10", segment="tail"),
        Gate("nDCG@10", segment="head"),
        Gate("nDCG@10", segment="rare"),  # too small: shown, not gated, not in the family
    ]
    result = compare_scores(base, cand, gates=gates, options=FAST, tags=tags)
    gated = [result.metric("nDCG@10")] + [s for s in result.segments if s.gated]
    assert sorted(s.segment for s in result.segments if s.gated) == ["head", "tail"]
    expected = stats.holm([g.p_value for g in gated])
    assert [g.p_corrected for g in gated] == pytest.approx(list(expected))
    rare = next(s for s in result.segments if s.segment == "rare")
    assert not rare.gated and rare.note is not None
    ungated = [s for s in result.segments if not s.gated]
    assert [s.p_corrected for s in ungated] == pytest.approx(
        list(stats.holm([s.p_value for s in ungated]))
    )


def test_the_minimum_segment_size_is_an_option() -> None:
    base, cand, tags = scenario()
    options = CompareOptions(permutations=500, bootstrap=200, min_segment_queries=5)
    gates = [Gate("nDCG@10", segment="rare")]
    result = compare_scores(base, cand, gates=gates, options=options, tags=tags)
    rare = next(s for s in result.segments if s.segment == "rare")
    assert rare.gated and rare.note is None
    with pytest.raises(InputError, match="min_segment_queries"):
        CompareOptions(min_segment_queries=0)


def test_a_gate_on_a_tag_no_query_carries_is_refused() -> None:
    base, cand, tags = scenario()
    with pytest.raises(InputError, match="segment 'tial', which no query"):
        compare_scores(base, cand, gates=[Gate("nDCG@10", segment="tial")], tags=tags)


def test_without_tags_or_weights_nothing_changes() -> None:
    base, cand, _ = scenario()
    result = compare_scores(base, cand, options=FAST)
    assert result.segments == () and not result.weighted
    assert result.to_dict()["segments"] == []


def test_bad_weights_are_refused_naming_the_query() -> None:
    base, cand, _ = scenario()
    with pytest.raises(InputError, match="query 'q001': weight must be"):
        compare_scores(base, cand, options=FAST, weights={"q001": -1.0})
