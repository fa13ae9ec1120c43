"""Latency decided on paired timings: the signed-rank test of log(candidate/baseline) per
query beyond the threshold and the Hodges-Lehmann typical ratio, a 20 % slowdown by default
and no absolute floor; a small test set timed round after round to 200 pairs; without paired
timings a latency row is shown, not gated (``unpaired``)."""

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
from evalplat.metrics.names import parse
from evalplat.running.paired_timing import sample_positions

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
    # credible, but not beyond 20 %: the test is of a shift past the threshold
    assert row.timing_ratio == pytest.approx(1.1, abs=0.01)
    assert row.p_corrected > 0.05 and row.verdict == "unchanged"
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


def test_the_test_beyond_a_threshold_is_the_one_sided_test_of_the_shifted_ratios() -> None:
    x = np.random.default_rng(7).normal(0.3, 0.2, 30)
    margin = np.log(1.2)
    slower = scipy_stats.wilcoxon(x - margin, alternative="greater").pvalue
    faster = scipy_stats.wilcoxon(x + margin, alternative="less").pvalue
    assert signed_rank_p(x, margin) == pytest.approx(2 * min(slower, faster))
    assert signed_rank_p(x, margin) > signed_rank_p(x)  # harder to pass than "about 0"
    assert signed_rank_p(-x, margin) == pytest.approx(signed_rank_p(x, margin))


def test_a_fast_engine_whose_pairs_differ_by_noise_alone_is_unchanged() -> None:
    """20 pairs of a 1.7 ms engine whose two timings of a query differ by a factor of e
    (typical of a loopback request on a busy machine) and by nothing else. The test about 0
    called this draw a regression (p = 0.017, typical ratio 1.6); beyond the 20 % it is not."""
    rng = np.random.default_rng(184)
    baseline = 1.7 * rng.lognormal(0.0, 0.3, 20)
    candidate = baseline * rng.lognormal(0.0, 1.0, 20)
    r = np.log(candidate / baseline)
    assert signed_rank_p(r) < 0.02 and hodges_lehmann(r) > np.log(1.5)
    [row] = compare_scores(_scores(baseline), _scores(candidate), gates=[Gate(P95)],
                           timings=_timings(baseline, candidate)).metrics  # fmt: skip
    assert row.p_corrected > 0.1 and row.verdict == "unchanged"


def test_a_small_test_set_is_timed_round_after_round_to_two_hundred_pairs() -> None:
    assert sample_positions(20) == list(range(20)) * 10
    assert sample_positions(30) == list(range(30)) * 7  # 210: whole rounds
    assert sample_positions(200) == list(range(200))
    big = sample_positions(1000)
    assert len(big) == 200 and big == sorted(set(big))
    assert sample_positions(0) == []


def test_a_segment_latency_gate_is_decided_on_the_segment_s_paired_timings() -> None:
    """The tail's queries three times slower, the head's unchanged: the tail's gate sees it on
    its own pairs; without paired timings the segment's gate is not gated, and says why."""
    baseline, same = _engine(8, 10.0, np.ones(N))
    tail = np.arange(N) % 2 == 1
    candidate = np.where(tail, same * 3.0, same)
    tags = {f"q{n}": ["tail"] if n % 2 else ["head"] for n in range(N)}
    gates = [Gate(P95, segment="tail"), Gate(P95, segment="head")]
    result = compare_scores(_scores(baseline), _scores(candidate), gates=gates, tags=tags,
                            timings=_timings(baseline, candidate))  # fmt: skip
    rows = {row.segment: row for row in result.segments if row.metric == P95}
    assert rows["tail"].gated and rows["tail"].verdict == "regression"
    assert rows["tail"].p_corrected < 1e-10
    assert rows["head"].gated and rows["head"].verdict == "unchanged"
    assert result.verdict == "regression"
    unpaired = compare_scores(_scores(baseline), _scores(candidate), gates=gates, tags=tags)
    for row in unpaired.segments:
        if row.metric == P95:
            assert not row.gated and row.note and "unpaired" in row.note
    assert unpaired.verdict == "unchanged"
