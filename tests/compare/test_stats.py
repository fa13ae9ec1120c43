"""Statistical validation of the paired tests, Holm and the verdict rules on simulated data."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from evalplat.comparison import stats
from evalplat.comparison.verdicts import CompareOptions, Gate, compare_scores


def _tidy(values: dict[str, np.ndarray]) -> pd.DataFrame:
    n = len(next(iter(values.values())))
    ids = [f"q{i:04d}" for i in range(n)]
    return pd.DataFrame(
        {
            "query_id": ids * len(values),
            "metric": np.repeat(list(values), n),
            "value": np.concatenate(list(values.values())),
        }
    )


def test_randomization_test_matches_exact_enumeration_on_small_samples() -> None:
    d = np.array([0.3, -0.1, 0.25, 0.4, -0.05, 0.2, 0.15, 0.0, 0.35, -0.2])
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size)))
    exact = float(np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12))
    estimate = stats.randomization_test(np.zeros_like(d), d, n=40_000, seed=3)
    assert estimate == pytest.approx(exact, abs=0.01)


def test_randomization_test_is_reproducible_with_a_seed_and_one_for_identical_runs() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random(300), rng.random(300)
    assert stats.randomization_test(a, b, seed=11) == stats.randomization_test(a, b, seed=11)
    assert stats.randomization_test(a, a.copy(), seed=11) == 1.0
    assert stats.t_test(a, a.copy()) == 1.0 and stats.wilcoxon(a, a.copy()) == 1.0


def test_constant_shift_is_certain_for_the_t_test_and_has_no_finite_effect_size() -> None:
    a = np.linspace(0, 0.5, 20)
    assert stats.t_test(a, a + 0.1) == 0.0
    assert stats.effect_size(a, a + 0.1) is None


def test_holm_adjusts_in_input_order_and_keeps_monotonicity() -> None:
    adjusted = stats.holm([0.01, 0.04, 0.03, 0.5])
    # sorted: 0.01*4, 0.03*3, max(0.04*2, 0.09), max(0.5*1, 0.09)
    assert adjusted.tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert stats.holm([0.03, 0.02]).tolist() == pytest.approx([0.04, 0.04])


def test_bootstrap_interval_covers_the_true_mean_about_as_often_as_its_level() -> None:
    covered = 0
    for seed in range(200):
        d = np.random.default_rng(seed).normal(0.02, 0.1, 80)
        low, high = stats.bootstrap_ci(d, n=1000, seed=seed)
        covered += low <= 0.02 <= high
    assert 0.88 <= covered / 200 <= 0.99


def test_wins_ties_losses_follow_the_metric_direction_and_tolerance() -> None:
    a = np.array([0.5, 0.5, 0.5, 0.5])
    b = np.array([0.6, 0.5 + 1e-12, 0.4, 0.3])
    assert stats.wins_ties_losses(a, b) == stats.WinsTiesLosses(1, 1, 2)
    assert stats.wins_ties_losses(a, b, higher_is_better=False) == stats.WinsTiesLosses(2, 1, 1)


@pytest.mark.parametrize("test", ["randomization", "t-test", "wilcoxon"])
def test_null_comparisons_raise_false_alarms_at_most_at_alpha(test: str) -> None:
    """A/A in distribution: the candidate differs from the baseline only by zero-mean noise."""
    alarms = 0
    trials = 120
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        base = rng.random(60)
        cand = np.clip(base + rng.normal(0, 0.1, 60), 0, 1)
        cand = np.where(rng.random(60) < 0.5, cand, base + (base - cand))  # symmetric noise
        result = compare_scores(
            _tidy({"nDCG@10": base}), _tidy({"nDCG@10": cand}),
            gates=[Gate("nDCG@10", test=test)],
            options=CompareOptions(seed=seed, permutations=1000, bootstrap=200),
        )  # fmt: skip
        alarms += result.verdict == "regression"
    # two-sided test at 0.05: a drop is at most half of the rejections; allow binomial slack
    assert alarms / trials <= 0.05


def test_identical_runs_are_unchanged_with_p_one_for_every_test_and_seed() -> None:
    rng = np.random.default_rng(0)
    scores = _tidy({"nDCG@10": rng.random(50), "P@5": rng.random(50), "Judged@10": rng.random(50)})
    for test in ("randomization", "t-test", "wilcoxon"):
        for seed in range(5):
            result = compare_scores(
                scores, scores.copy(), options=CompareOptions(test=test, seed=seed)
            )
            assert result.verdict == "unchanged"
            assert {m.p_value for m in result.metrics} == {1.0}
            assert all(m.verdict == "unchanged" for m in result.metrics)


def test_planted_regression_beyond_the_threshold_is_caught() -> None:
    caught = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        base = rng.random(200)
        cand = base - 0.05 + rng.normal(0, 0.1, 200)  # a 0.05 drop, per-query noise sd 0.1
        result = compare_scores(
            _tidy({"nDCG@10": base}), _tidy({"nDCG@10": cand}),
            gates=[Gate("nDCG@10", max_drop=0.02)],
            options=CompareOptions(seed=seed, permutations=2000, bootstrap=200),
        )  # fmt: skip
        caught += result.verdict == "regression"
        m = result.metric("nDCG@10")
        assert m.ci_low is not None and m.ci_high is not None and m.ci_low < m.delta < m.ci_high
    assert caught >= 38


def test_significant_drop_below_the_threshold_is_not_a_regression() -> None:
    rng = np.random.default_rng(1)
    base = rng.random(2000)
    cand = base - 0.01 + rng.normal(0, 0.01, 2000)
    result = compare_scores(
        _tidy({"nDCG@10": base}), _tidy({"nDCG@10": cand}),
        gates=[Gate("nDCG@10", max_drop=0.02, max_relative_drop=0.5)],
    )  # fmt: skip
    m = result.metric("nDCG@10")
    assert m.p_corrected is not None and m.p_corrected < 0.001
    assert m.verdict == "unchanged" and result.verdict == "unchanged"


def test_holm_across_gated_metrics_can_turn_a_borderline_drop_into_unchanged() -> None:
    rng = np.random.default_rng(5)
    n = 60
    base = {name: rng.random(n) for name in ("nDCG@10", "P@5", "AP", "RR")}
    cand = {name: v.copy() for name, v in base.items()}
    # nDCG@10 gets a borderline drop; the three others are untouched (p = 1)
    seed_found = None
    for shift_seed in range(200):
        noise = np.random.default_rng(shift_seed).normal(-0.025, 0.1, n)
        cand["nDCG@10"] = base["nDCG@10"] + noise
        p = stats.t_test(base["nDCG@10"], cand["nDCG@10"])
        if 0.0125 < p < 0.05:
            seed_found = shift_seed
            break
    assert seed_found is not None
    options = CompareOptions(test="t-test")
    alone = compare_scores(_tidy({"nDCG@10": base["nDCG@10"]}),
                           _tidy({"nDCG@10": cand["nDCG@10"]}), options=options)  # fmt: skip
    four = compare_scores(_tidy(base), _tidy(cand), options=options)
    assert alone.verdict == "regression"
    assert four.metric("nDCG@10").p_corrected == pytest.approx(4 * four.metric("nDCG@10").p_value)
    assert four.verdict == "unchanged"


def test_drop_with_fallen_judged_coverage_needs_judgments() -> None:
    rng = np.random.default_rng(2)
    base = rng.random(100)
    cand = base - 0.1
    result = compare_scores(
        _tidy({"nDCG@10": base, "Judged@10": np.ones(100)}),
        _tidy({"nDCG@10": cand, "Judged@10": np.full(100, 0.7)}),
        gates=[Gate("nDCG@10", max_drop=0.01)],
    )  # fmt: skip
    m = result.metric("nDCG@10")
    assert (m.baseline_judged, m.candidate_judged) == (1.0, pytest.approx(0.7))
    assert m.verdict == "needs_judgments" and result.verdict == "needs_judgments"
    assert result.regressions == []


def test_movers_list_the_worst_and_best_queries_in_order() -> None:
    base = np.full(6, 0.5)
    cand = np.array([0.1, 0.5, 0.9, 0.3, 0.5, 0.6])
    result = compare_scores(_tidy({"P@5": base}), _tidy({"P@5": cand}),
                            options=CompareOptions(movers=2))  # fmt: skip
    movers = result.movers["P@5"]
    assert [q.query_id for q in movers.worse] == ["q0000", "q0003"]
    assert [q.query_id for q in movers.better] == ["q0002", "q0005"]


def test_comparisons_over_different_topics_are_refused() -> None:
    base = _tidy({"P@5": np.ones(4)})
    cand = base[base["query_id"] != "q0000"]
    with pytest.raises(Exception, match="different topics"):
        compare_scores(base, cand)
