"""Latency decided on paired timings: the signed-rank test of log(candidate/baseline) per
query and the Hodges-Lehmann typical ratio, a 20 % slowdown by default and no absolute floor;
without paired timings a latency row is shown, not gated (``unpaired``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from evalplat.comparison import compare_scores
from evalplat.comparison.paired_latency import (
    PairedTimings,
    hodges_lehmann,
    measure_pairs,
    signed_rank_p,
)
from evalplat.comparison.results import Gate
from evalplat.metrics.aggregate import aggregate
from evalplat.metrics.registry import parse

P95 = "Latency(p=95)"
N = 200


def _scores(values: np.ndarray, metric: str = P95) -> pd.DataFrame:
    ids = [f"q{n}" for n in range(values.size)]
    return pd.DataFrame({"query_id": ids, "metric": metric, "value": values})


def _timings(baseline: np.ndarray, candidate: np.ndarray) -> PairedTimings:
    ids = tuple(f"q{n}" for n in range(baseline.size))
    return PairedTimings(1, 2, ids, tuple(baseline), tuple(candidate), queries=baseline.size)


def _engine(seed: int, ms: float, load: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-query costs around ``ms`` (a factor of two from query to query) under ``load``
    (a factor per query shared by both searches of a pair), with 5 % jitter per search."""
    rng = np.random.default_rng(seed)
    n = load.size
    cost = ms * rng.lognormal(0.0, 0.5, n) * load
    return cost * rng.lognormal(0.0, 0.05, n), cost * rng.lognormal(0.0, 0.05, n)


def test_the_hodges_lehmann_estimate_is_the_median_of_the_walsh_averages() -> None:
    # Walsh averages of 0, 1, 2: 0, .5, 1, 1, 1.5, 2
    assert hodges_lehmann(np.array([0.0, 1.0, 2.0])) == 1.0
    # one slow query of four does not move it (Walsh averages: six 0, three 4.5, one 9)
    assert hodges_lehmann(np.array([0.0, 0.0, 0.0, 9.0])) == 0.0
    x = np.random.default_rng(3).normal(0.2, 0.1, 40)
    assert signed_rank_p(x) == pytest.approx(scipy_stats.wilcoxon(x).pvalue)
    assert signed_rank_p(np.zeros(10)) == 1.0


def test_an_unchanged_engine_from_a_quiet_to_a_loaded_machine_is_unchanged() -> None:
    """The load rises fivefold over the night; the stored runs' p95 differ by far more than
    20 % and 35 ms, but each pair shares its load, and the ratio stays near 1."""
    load = np.linspace(1.0, 5.0, N)
    baseline, candidate = _engine(1, 10.0, load)
    quiet = _engine(2, 10.0, np.ones(N))[0]
    timings = _timings(baseline, candidate)
    [row] = compare_scores(_scores(quiet), _scores(candidate), gates=[Gate(P95)],
                           timings=timings).metrics  # fmt: skip
    assert row.candidate - row.baseline > 35.0 and row.candidate > 1.2 * row.baseline
    assert row.gated and row.verdict == "unchanged"
    assert row.timing_pairs == N and row.timing_ratio == pytest.approx(1.0, abs=0.03)


def test_ten_to_thirty_ms_at_p95_is_a_regression_without_an_absolute_floor() -> None:
    baseline, same = _engine(4, 10.0, np.ones(N))
    candidate = same * 3.0
    found = measure_pairs(_timings(baseline, candidate),
                          lambda v: aggregate(parse(P95), v, None))  # fmt: skip
    assert found.candidate - found.baseline < 35.0 * 2  # a rise of some tens of ms
    result = compare_scores(_scores(baseline), _scores(candidate), gates=[Gate(P95)],
                            timings=_timings(baseline, candidate))  # fmt: skip
    [row] = result.metrics
    assert (row.verdict, result.verdict, row.max_drop) == ("regression", "regression", None)
    assert row.timing_ratio == pytest.approx(3.0, rel=0.05) and row.p_corrected < 1e-10
    # the other way round it is an improvement; a gate's own max_drop (ms) still applies
    [back] = compare_scores(_scores(candidate), _scores(baseline), gates=[Gate(P95)],
                            timings=_timings(candidate, baseline)).metrics  # fmt: skip
    assert back.verdict == "improvement"
    [floored] = compare_scores(_scores(baseline), _scores(candidate),
                               gates=[Gate(P95, max_drop=1000.0)],
                               timings=_timings(baseline, candidate)).metrics  # fmt: skip
    assert floored.verdict == "unchanged"


def test_a_slowdown_below_the_relative_threshold_is_unchanged_however_credible() -> None:
    baseline, same = _engine(5, 10.0, np.ones(N))
    [row] = compare_scores(_scores(baseline), _scores(same * 1.1), gates=[Gate(P95)],
                           timings=_timings(baseline, same * 1.1)).metrics  # fmt: skip
    assert row.p_corrected < 1e-10 and row.verdict == "unchanged"
    [tight] = compare_scores(_scores(baseline), _scores(same * 1.1),
                             gates=[Gate(P95, max_relative_drop=0.05)],
                             timings=_timings(baseline, same * 1.1)).metrics  # fmt: skip
    assert tight.verdict == "regression"


def test_stored_runs_without_paired_timings_show_latency_not_gated() -> None:
    """Two runs timed on different nights: no verdict, whatever their figures, and the
    relevance gate beside it decides alone."""
    baseline = _scores(np.full(60, 10.0))
    candidate = _scores(np.full(60, 30.0))
    relevance = _scores(np.full(60, 0.5), "nDCG@10")
    result = compare_scores(pd.concat([baseline, relevance]), pd.concat([candidate, relevance]),
                            gates=[Gate(P95), Gate("nDCG@10")])  # fmt: skip
    row = result.metric(P95)
    assert (row.gated, row.not_gated, row.p_value, row.verdict) == (
        False, "unpaired", None, "unchanged",
    )  # fmt: skip
    assert result.metric("nDCG@10").gated and result.verdict == "unchanged"


def test_too_few_pairs_leave_latency_not_gated() -> None:
    baseline, same = _engine(6, 10.0, np.ones(5))
    result = compare_scores(_scores(np.full(5, 10.0)), _scores(np.full(5, 30.0)),
                            gates=[Gate(P95)], timings=_timings(baseline, same * 3))  # fmt: skip
    [row] = result.metrics
    assert not row.gated and row.not_gated == "5 paired timings, fewer than 6"
