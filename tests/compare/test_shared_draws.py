"""One draw for every metric of a comparison gives each metric the numbers of its own test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalplat.comparison import stats
from evalplat.comparison.results import CompareOptions
from evalplat.comparison.shared_draws import SharedDraws, randomization_tests
from evalplat.comparison.verdicts import compare_scores
from evalplat.metrics.names import parse


def _pairs(m: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(5)
    base = rng.random(m)
    return [
        (base, np.clip(base + rng.normal(0.01, 0.1, m), 0, 1)),  # continuous
        (np.round(base, 1), np.round(np.clip(base - 0.03, 0, 1), 1)),  # discrete: exact ties
        (base, base.copy()),  # identical
        ((rng.random(m) < 0.1) * 1.0, (rng.random(m) < 0.12) * 1.0),  # 0/1
    ]


@pytest.mark.parametrize("m", [1, 7, 40, 333])
def test_shared_randomization_gives_each_metric_its_own_p_value(m: int) -> None:
    pairs = _pairs(m)
    weights = np.random.default_rng(1).uniform(0.5, 3.0, m)
    for w in (None, weights):
        x = np.column_stack([stats.weighted_differences(b - a, w) for a, b in pairs])
        shared = randomization_tests(x, n=3_000, seed=9)
        alone = [stats.randomization_test(a, b, n=3_000, seed=9, weights=w) for a, b in pairs]
        assert shared.tolist() == alone


def test_shared_bootstrap_gives_each_metric_its_own_interval_and_percentile_test() -> None:
    m = 250
    pairs = _pairs(m)
    weights = np.random.default_rng(2).uniform(0.5, 3.0, m)
    options = CompareOptions(bootstrap=1_500, seed=4, ci_level=0.9)
    draws = SharedDraws(options)
    rows: list[dict[str, object]] = []
    for a, b in pairs[:2] + pairs[3:]:
        for w in (None, weights):
            rows.append({"d": b - a, "w": w})
            draws.mean_interval(rows[-1], b - a, w, 1.0)
    rng = np.random.default_rng(3)
    latency_a = rng.lognormal(3.5, 0.5, m)
    latency_b = latency_a * rng.uniform(0.8, 1.5, m)
    percentiles = [parse("Latency(p=95)"), parse("Latency(p=50)"), parse("Latency(p=5)")]
    tests: list[dict[str, object]] = [{} for _ in percentiles]
    for row, metric in zip(tests, percentiles, strict=True):
        draws.percentile(row, latency_a, latency_b, metric)
    draws.run()
    for row in rows:
        low, high = stats.bootstrap_ci(row["d"], n=1_500, seed=4, level=0.9, weights=row["w"])
        assert row["ci_low"] == pytest.approx(low, rel=1e-12, abs=1e-15)
        assert row["ci_high"] == pytest.approx(high, rel=1e-12, abs=1e-15)
    for row, metric in zip(tests, percentiles, strict=True):
        p, (low, high) = stats.bootstrap_difference(
            latency_a, latency_b, metric, n=1_500, seed=4, level=0.9
        )
        assert (row["p_value"], row["ci_low"], row["ci_high"]) == (p, low, high)


def test_a_metric_compared_alone_or_among_others_gets_the_same_figures() -> None:
    rng = np.random.default_rng(8)
    m = 120
    names = ["nDCG@10", "P@10", "Latency", "Latency(p=95)", "ZeroResult"]

    def side(shift: float) -> pd.DataFrame:
        values = {
            "nDCG@10": np.clip(rng.random(m) + shift, 0, 1),
            "P@10": np.round(np.clip(rng.random(m) + shift, 0, 1), 1),
            "Latency": rng.lognormal(3.5, 0.4, m),
            "ZeroResult": (rng.random(m) < 0.05) * 1.0,
        }
        values["Latency(p=95)"] = values["Latency"]
        return pd.concat(
            [pd.DataFrame({"query_id": [f"q{i}" for i in range(m)], "metric": k, "value": v})
             for k, v in values.items()], ignore_index=True,
        )  # fmt: skip

    baseline, candidate = side(0.0), side(-0.05)
    together = compare_scores(baseline, candidate, names)
    for name in names:
        alone = compare_scores(baseline, candidate, [name]).metric(name)
        shared = together.metric(name)
        assert shared.p_value == alone.p_value
        if name.startswith("Latency"):  # latency without paired timings: nothing drawn
            assert (shared.ci_low, shared.ci_high, alone.ci_low) == (None, None, None)
            continue
        assert shared.ci_low == pytest.approx(alone.ci_low, rel=1e-12, abs=1e-15)
        assert shared.ci_high == pytest.approx(alone.ci_high, rel=1e-12, abs=1e-15)
