"""Change points of history series: planted steps found at their night, A/A noise unmarked, and
a step every config takes on one night (or on new judgments) labelled as the test set's."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pytest

from evalplat.comparison.change_points import (
    Night,
    VersionFacts,
    find_steps,
    label_change_points,
    noise_sigma,
    what_changed,
)

START = date(2026, 3, 1)


def _nights(values, config_versions=None, test_set_versions=None, first_run=1):
    n = len(values)
    cv = config_versions or [1] * n
    tv = test_set_versions or [1] * n
    return [
        Night(first_run + i, START + timedelta(days=i), float(v), cv[i], tv[i])
        for i, v in enumerate(values)
    ]


@pytest.mark.parametrize("seed", range(100))
def test_aa_noise_over_60_nights_has_no_change_point(seed: int) -> None:
    rng = np.random.default_rng(seed)
    assert find_steps(rng.normal(0.42, 0.02, 60)) == []


def test_aa_latency_noise_is_rarely_marked() -> None:
    # log-normal latencies (heavy right tail): two slow nights in a row can look like a step
    marked = sum(
        bool(find_steps(np.random.default_rng(seed).lognormal(np.log(40.0), 0.3, 60)))
        for seed in range(300)
    )
    assert marked <= 3  # under 1% of series


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("night", [3, 17, 30, 57])
def test_planted_step_is_found_at_its_night(seed: int, night: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    values = rng.normal(0.40, 0.01, 60)
    values[night:] += 0.06  # six times the noise
    steps = find_steps(values)
    assert [s.index for s in steps] == [night]
    assert steps[0].before == pytest.approx(values[:night].mean())
    assert steps[0].after == pytest.approx(values[night:].mean())
    assert steps[0].size == pytest.approx(steps[0].after - steps[0].before)


def test_several_planted_steps_on_300_nights() -> None:
    rng = np.random.default_rng(7)
    values = rng.normal(120.0, 4.0, 300)
    values[90:] += 25.0
    values[210:] -= 40.0
    assert [s.index for s in find_steps(values)] == [90, 210]


def test_a_constant_series_and_a_deterministic_step() -> None:
    assert find_steps([0.5] * 40) == []
    assert noise_sigma([0.5] * 40) == 0.0
    # no night-to-night noise at all: a step of any size is a change
    steps = find_steps([0.5] * 20 + [0.501] * 20)
    assert [s.index for s in steps] == [20]


def test_one_or_two_odd_nights_are_not_a_step() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(0.4, 0.01, 40)
    values[25] += 0.2
    values[31:33] += 0.15
    assert find_steps(values) == []
    values[-2:] += 0.2  # the newest two nights: not yet a step
    assert find_steps(values) == []
    values = np.append(values, values[-1])  # a third night agrees
    assert [s.index for s in find_steps(values)] == [38]


def test_a_step_every_config_takes_on_one_night_is_the_test_sets() -> None:
    rng = np.random.default_rng(11)
    series = {}
    for i, config in enumerate(["bm25", "dense", "hybrid"]):
        values = rng.normal(0.3 + 0.1 * i, 0.01, 40)
        values[24:] -= 0.08
        config_versions = [1] * 40
        if config == "dense":  # it also steps on its own, on another night, with a new version
            values[10:] += 0.1
            config_versions = [1] * 10 + [2] * 30
        series[config] = _nights(values, config_versions, first_run=100 * i)
    labelled = label_change_points("nDCG@10", series)
    assert {c: [(p.night, p.owner) for p in ps] for c, ps in labelled.items()} == {
        "bm25": [(START + timedelta(days=24), "test set")],
        "dense": [(START + timedelta(days=10), "config"), (START + timedelta(days=24), "test set")],
        "hybrid": [(START + timedelta(days=24), "test set")],
    }
    assert labelled["bm25"][0].reason == "every config stepped (3)"
    assert labelled["dense"][0].reason == "config v2"
    assert labelled["bm25"][0].size < -0.06


def test_a_step_on_new_judgments_is_the_test_sets_even_for_one_config() -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(0.5, 0.01, 30)
    values[12:] -= 0.1
    series = {"bm25": _nights(values, test_set_versions=[1] * 12 + [2] * 18)}
    versions = {1: VersionFacts(7, 50, 800), 2: VersionFacts(7, 50, 950)}
    [point] = label_change_points("AP", series, versions)["bm25"]
    assert (point.owner, point.reason) == ("test set", "judgments changed (v1 → v2)")
    assert point.run_id == 13 and point.night == START + timedelta(days=12)
    assert point.to_dict()["night"] == (START + timedelta(days=12)).isoformat()


def test_a_step_of_one_config_among_several_is_the_configs() -> None:
    rng = np.random.default_rng(9)
    series = {c: _nights(rng.normal(0.4, 0.01, 30), first_run=50 * i)
              for i, c in enumerate(["a", "b"])}  # fmt: skip
    stepped = [n.value + (0.08 if i >= 15 else 0.0) for i, n in enumerate(series["a"])]
    series["a"] = _nights(stepped)
    [point] = label_change_points("P@10", series)["a"]
    assert (point.owner, point.reason) == ("config", "this config only")
    assert label_change_points("P@10", series)["b"] == []


def test_what_changed_names_the_parts_of_a_version() -> None:
    old = VersionFacts(1, 50, 800)
    assert what_changed(old, VersionFacts(2, 50, 800)) == "documents changed"
    assert what_changed(old, VersionFacts(1, 60, 900)) == "queries and judgments changed"
    assert what_changed(old, VersionFacts(1, 50, 800)) == "judgments changed"
    assert what_changed(None, old) == "new test set version"
