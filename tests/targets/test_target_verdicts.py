"""Target verdicts from the bootstrap interval of a run's figure, for any measure, and the
``--target`` expression."""

from __future__ import annotations

import numpy as np
import pytest

from evalplat.comparison.targets import (
    Target,
    applicable,
    decide,
    interval,
    parse_target,
    verdict,
    window_days,
)
from evalplat.errors import InputError
from evalplat.metrics import parse


def half_relevant(n: int = 30) -> np.ndarray:
    return np.r_[np.ones(n // 2), np.zeros(n - n // 2)]


def test_whole_interval_below_a_min_target_is_missed() -> None:
    result = verdict(parse_target("nDCG@10>=0.85"), half_relevant())
    assert result.value == pytest.approx(0.5)
    assert result.ci_low < 0.5 < result.ci_high < 0.85
    assert result.verdict == "missed"


def test_mean_below_but_interval_reaching_the_target_is_at_risk() -> None:
    result = verdict(parse_target("nDCG@10>=0.55"), half_relevant())
    assert result.value < 0.55 <= result.ci_high
    assert result.verdict == "at_risk"


def test_mean_at_or_above_the_target_is_met_whatever_the_interval() -> None:
    assert verdict(parse_target("nDCG@10>=0.5"), half_relevant()).verdict == "met"
    assert verdict(parse_target("nDCG@10>=0.45"), half_relevant()).verdict == "met"


def test_decide_mirrors_for_a_max_target() -> None:
    target = Target("Latency(p=95)", "max", 200.0)
    assert decide(target, 190.0, 150.0, 230.0) == "met"
    assert decide(target, 210.0, 180.0, 240.0) == "at_risk"
    assert decide(target, 230.0, 205.0, 250.0) == "missed"
    assert decide(target, float("nan"), float("nan"), float("nan")) == "missed"


def test_a_percentile_target_uses_the_interval_of_the_percentile_not_of_the_mean() -> None:
    latencies = np.r_[np.full(80, 50.0), np.full(20, 400.0)]  # mean 120, p95 400
    value, low, high = interval(parse("Latency(p=95)"), latencies, seed=3)
    assert value == pytest.approx(400.0)
    assert 200.0 < low <= high == pytest.approx(400.0)  # a mean's interval would sit near 120
    assert verdict(parse_target("Latency(p=95)<=200"), latencies).verdict == "missed"
    # unknown latencies (failed queries) are left out, as the measure declares
    with_unknown = np.r_[latencies, np.full(5, np.nan)]
    assert interval(parse("Latency(p=95)"), with_unknown, seed=3) == (value, low, high)


def test_a_coverage_target_works_through_the_same_model() -> None:
    answered = np.r_[np.ones(199), np.zeros(1)]
    assert verdict(parse_target("Coverage>=0.99"), answered).verdict == "met"
    poor = np.r_[np.ones(150), np.zeros(50)]
    assert verdict(parse_target("Coverage>=0.99"), poor).verdict == "missed"


def test_a_constant_run_has_a_point_interval() -> None:
    assert interval(parse("P@5"), np.full(10, 0.4)) == (0.4, 0.4, 0.4)


def test_interval_is_seeded_and_reproducible() -> None:
    values = np.random.default_rng(1).random(50)
    assert interval(parse("AP"), values, seed=7) == interval(parse("AP"), values, seed=7)


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("nDCG@10<=0.9", "higher-is-better: its target is a min (min, >=), not a max"),
        ("Latency(p=95)>=200", "lower-is-better: its target is a max (max, <=), not a min"),
        ("Frobnicate@3>=1", "unknown metric 'Frobnicate@3'"),
        ("nDCG@10>=high", "'high' is not a finite number"),
        ("nDCG@10>=nan", "'nan' is not a finite number"),
        ("nDCG@10 = 0.85", "expected METRIC>=VALUE or METRIC<=VALUE"),
        (">=0.85", "expected METRIC>=VALUE or METRIC<=VALUE"),
    ],
)
def test_a_malformed_target_expression_names_the_option(expression: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_target(expression)
    assert str(caught.value).startswith(f"--target {expression!r}")
    assert problem in str(caught.value)


def test_expression_round_trips_through_the_label() -> None:
    target = parse_target("  P(rel=2)@5 >= 0.9 ")
    assert (target.metric, target.bound, target.value) == ("P(rel=2)@5", "min", 0.9)
    assert parse_target(target.label) == target


def test_the_most_specific_target_of_a_metric_applies() -> None:
    everywhere = Target("nDCG@10", "min", 0.8)
    mine = Target("nDCG@10", "min", 0.9, config="prod")
    other = Target("P@5", "min", 0.5, test_set="other")
    assert applicable([everywhere, mine, other], "prod", "topics") == [mine]
    assert applicable([everywhere, mine, other], "dev", "topics") == [everywhere]
    assert applicable([everywhere, other], "dev", "other") == [everywhere, other]


def test_windows_read_days_hours_and_weeks() -> None:
    assert (window_days("30d"), window_days("12h"), window_days("2w")) == (30.0, 0.5, 14.0)
    for bad in ("30", "30m", "0d", "-3d", "d"):
        with pytest.raises(InputError, match="expected a number and a unit"):
            window_days(bad)


def test_the_percentile_shortcut_gives_the_percentile_of_every_replicate() -> None:
    from evalplat.comparison import targets
    from evalplat.metrics.aggregate import aggregate

    values = np.random.default_rng(2).random(37) * 300
    metric = parse("Latency(p=95)")
    shortcut = targets._nearest_rank(metric, values)
    assert shortcut is not None
    picks = np.random.default_rng(3).integers(0, values.size, size=(50, values.size))
    expected = [aggregate(metric, values[row]) for row in picks]
    assert shortcut(picks.astype(np.int32)).tolist() == expected
