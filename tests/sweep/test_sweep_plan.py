"""The pure parts of a sweep: grids, names, sampling, the halving schedule, folds and the
held-out choice, on plain values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.comparison.stats import bootstrap_ci
from evalplat.comparison.tuning import assign_folds, cross_validate, verdict_line
from evalplat.errors import InputError
from evalplat.running.sweep_plan import (
    expand,
    grid_size,
    halving_schedule,
    parse_axis,
    parse_grid,
    rung_queries,
    sample,
)


def test_a_grid_expands_to_every_combination_merged_over_the_config() -> None:
    axes = parse_grid(["operator=or,and", "weights.title=1,2.5", "tokenizer=porter"])
    settings = expand({"weights": {"text": 1}, "tokenizer": "unicode61"}, axes)
    assert grid_size(axes) == len(settings) == 4
    assert settings[1].params == {"weights": {"text": 1, "title": 2.5}, "tokenizer": "porter",
                                  "operator": "or"}  # fmt: skip
    assert settings[1].label() == "operator=or,weights.title=2.5,tokenizer=porter"
    assert settings[1].config_name("bm25") == "bm25~operator=or,weights.title=2.5,tokenizer=porter"


def test_a_value_list_may_be_a_toml_array_for_values_with_commas() -> None:
    axis = parse_axis('weights=["title=2,text=1", "title=1,text=1"]')
    assert axis.values == ("title=2,text=1", "title=1,text=1")


def test_a_long_setting_name_is_shortened_to_a_hash() -> None:
    axes = parse_grid([f"p{n}={'v' * 30}" for n in range(8)])
    name = expand({}, axes)[0].config_name("c")
    assert name.startswith("c~") and len(name) == 14


@pytest.mark.parametrize(
    ("texts", "problem"),
    [
        (["operator"], "expected PARAM=VALUE"),
        (["=a,b"], "expected PARAM=VALUE"),
        (["operator=or,,and"], "empty value"),
        (["weights..title=1"], "empty part"),
        (["operator=or", "operator=and"], "swept twice"),
        (["weights=[1,", "x=1"], "not a TOML array"),
        (["weights.title=1", "weights=a=1"], "the same table"),
        ([], "at least one"),
    ],
)
def test_a_bad_grid_is_one_line_naming_the_option(texts: list[str], problem: str) -> None:
    with pytest.raises(InputError, match=problem) as raised:
        parse_grid(texts)
    assert "--grid" in str(raised.value) and "\n" not in str(raised.value)


def test_random_sampling_is_seeded_and_keeps_grid_order() -> None:
    settings = expand({}, parse_grid(["a=1,2,3,4,5", "b=x,y"]))
    first = sample(settings, 4, seed=7)
    assert first == sample(settings, 4, seed=7) and len(first) == 4
    assert [settings.index(s) for s in first] == sorted(settings.index(s) for s in first)
    assert sample(settings, 20, seed=7) == settings


@given(candidates=st.integers(1, 400), queries=st.integers(1, 3000), max_runs=st.integers(1, 60))
def test_halving_stays_within_the_budget(candidates: int, queries: int, max_runs: int) -> None:
    rungs = halving_schedule(candidates, queries, max_runs)
    cost = sum(r.settings * r.queries for r in rungs)
    assert rungs[-1].queries == queries and rungs[-1].settings <= max_runs
    assert rungs[0].settings <= candidates
    assert [r.settings for r in rungs] == sorted((r.settings for r in rungs), reverse=True)
    if rungs[0].queries > min(queries, 5) or len(rungs) == 1:
        assert cost <= max_runs * queries


def test_halving_doubles_the_queries_as_it_halves_the_settings() -> None:
    rungs = halving_schedule(54, 225, 10)
    assert [(r.settings, r.queries) for r in rungs] == [(54, 5), (27, 10), (14, 20), (7, 40),
                                                        (5, 225)]  # fmt: skip
    assert halving_schedule(8, 225, 10) == [halving_schedule(8, 225, 10)[0]]
    subset = rung_queries([f"q{n}" for n in range(50)], 10, seed=1)
    assert rung_queries([f"q{n}" for n in range(50)], 20, seed=1)[:10] == subset


def test_folds_are_seeded_balanced_and_stratified() -> None:
    strata = ["a"] * 30 + ["b"] * 10 + [""] * 5
    folds = assign_folds(strata, 5, seed=3)
    assert folds == assign_folds(strata, 5, seed=3)
    assert folds != assign_folds(strata, 5, seed=4)
    assert sorted(np.bincount(folds)) == [9, 9, 9, 9, 9]
    for fold in range(5):
        assert sum(1 for f, s in zip(folds, strata, strict=True) if f == fold and s == "a") == 6
        assert sum(1 for f, s in zip(folds, strata, strict=True) if f == fold and s == "b") == 2
    with pytest.raises(InputError, match="--folds"):
        assign_folds(strata, 46, seed=0)


def test_the_held_out_gain_sees_through_lucky_settings() -> None:
    """Thirty settings, none truly better than the baseline: the in-sample best gains by luck,
    the held-out gain is about 0 on average and rarely credible (20 planted repetitions)."""
    rng = np.random.default_rng(0)
    baseline = np.arange(200) % 2.0  # exactly 0.5
    in_sample, held_out, credible = [], [], 0
    for repetition in range(20):
        noise = (rng.random((30, 200)) < 0.5).astype(float)
        folds = assign_folds([""] * 200, 5, repetition)
        result = cross_validate(noise, baseline, folds, seed=repetition, resamples=2000)
        in_sample.append(result.in_sample_gain)
        held_out.append(result.held_out_gain)
        credible += result.beats_baseline
        if not result.beats_baseline:
            assert "does not credibly beat" in verdict_line(result, "lucky") or (
                "is worse" in verdict_line(result, "lucky")
            )
    assert min(in_sample) > 0.03
    assert np.mean(held_out) < np.mean(in_sample) - 0.04
    assert abs(np.mean(held_out)) < 0.03
    assert credible <= 4


def test_a_truly_better_setting_is_chosen_in_every_fold() -> None:
    rng = np.random.default_rng(1)
    baseline = (rng.random(200) < 0.4).astype(float)
    values = np.vstack([baseline, np.maximum(baseline, rng.random(200) < 0.5)])
    result = cross_validate(values, baseline, assign_folds([""] * 200, 4, 0), seed=2)
    assert result.chosen == (1, 1, 1, 1) and result.best == 1
    assert result.beats_baseline and result.interval[0] > 0
    assert result.held_out_gain == pytest.approx(result.in_sample_gain)
    same = cross_validate(values, baseline, assign_folds([""] * 200, 4, 0), seed=2)
    assert same == result


def test_the_held_out_interval_is_compares_bootstrap_of_the_held_out_differences() -> None:
    rng = np.random.default_rng(3)
    baseline = rng.random(120)
    better = baseline + rng.normal(0.05, 0.1, 120)
    weights = np.where(np.arange(120) % 4 == 0, 3.0, 1.0)
    folds = assign_folds([""] * 120, 3, 0)
    result = cross_validate(
        np.vstack([baseline, better]), baseline, folds, weights=weights, seed=5, resamples=3000
    )
    assert result.chosen == (1, 1, 1)  # so every held-out difference is better - baseline
    expected = bootstrap_ci(better - baseline, 3000, 5, 0.95, weights=weights)
    assert result.interval == expected
    assert expected[0] < result.held_out_gain < expected[1]
    point = cross_validate(np.vstack([baseline + 0.25]), baseline, folds, weights=weights)
    assert point.interval[0] == point.interval[1] == pytest.approx(0.25)
