"""The leaderboard's statistics on plain values: a planted case it must separate, equivalent
runs it must not tell apart, the randomized Tukey HSD and the compact letter display."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from evalplat.comparison import tukey
from evalplat.comparison.leaderboard import Leaderboard, LeaderboardOptions, leaderboard
from evalplat.errors import InputError


def frames(
    runs: int, queries: int, seed: int, better: tuple[int, ...] = (), margin: float = 0.0,
    metrics: tuple[str, ...] = ("nDCG@10",),
) -> list[pd.DataFrame]:  # fmt: skip
    """Per query a difficulty shared by every run plus independent noise per run (all runs from
    one distribution), ``margin`` added to the runs in ``better``; values in [0, 1]."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(queries)]
    difficulty = {name: rng.beta(2, 3, size=queries) for name in metrics}
    out = []
    for j in range(runs):
        parts = []
        for name in metrics:
            noise = rng.normal(0.0, 0.12, size=queries)
            lift = margin if j in better else 0.0
            values = np.clip(difficulty[name] + noise + lift, 0.0, 1.0)
            parts.append(pd.DataFrame({"query_id": ids, "metric": name, "value": values}))
        out.append(pd.concat(parts, ignore_index=True))
    return out


def labels(n: int) -> list[str]:
    return [f"config-{j:02d}" for j in range(n)]


def flagged(board: Leaderboard) -> bool:
    """Did the board's letters say that any two runs differ?"""
    return any(p.differ for m in board.metrics for p in m.pairs)


def test_planted_case_finds_the_three_better_configs_and_only_them() -> None:
    # 12 configs over 225 queries (Cranfield's size), 3 better by 0.09: about 8 standard
    # errors of a paired difference here, a margin this test set resolves
    names = labels(12)
    better = (3, 6, 9)
    board = leaderboard(names, frames(12, 225, seed=7, better=better, margin=0.09), ["nDCG@10"])
    standings = {s.run: s for s in board.metrics[0].standings}
    good = {names[j] for j in better}
    assert {s.run for s in board.metrics[0].standings[:3]} == good
    assert board.baseline == names[0] and standings[names[0]].verdict is None
    for name, s in standings.items():
        if name in good:
            assert s.verdict == "improvement" and s.delta is not None and s.delta > 0.05
        elif name != names[0]:
            assert s.verdict == "unchanged", (name, s.p_corrected)
    # the three share a letter with each other and none with the nine equal configs
    for g in good:
        for other in standings:
            shared = set(standings[g].letters) & set(standings[other].letters)
            assert bool(shared) == (other in good), (g, other)
    assert len({standings[n].letters for n in standings if n not in good}) == 1
    # the pairs agree with the letters
    for pair in board.metrics[0].pairs:
        assert pair.differ == ((pair.a in good) != (pair.b in good))


def test_equivalent_runs_are_rarely_told_apart_family_wise() -> None:
    # 40 boards of 6 runs drawn from one distribution. At the nominal family-wise 5 % the count
    # of boards flagging anything is Binomial(40, 0.05) at worst; the bound is the count that
    # such a procedure exceeds with probability under 0.001, so the test fails on a real loss of
    # control (uncorrected pairs at 0.05 flag most boards: 15 pairs of 6 runs), not on chance.
    # The full measurement (200 boards of 12 runs) is scripts/bench_leaderboard.py.
    boards = 40
    bound = int(scipy_stats.binom.isf(0.001, boards, 0.05))
    hits = 0
    for rep in range(boards):
        options = LeaderboardOptions(seed=rep, draws=500, permutations=2000)
        data = frames(6, 100, seed=1000 + rep)
        board = leaderboard(labels(6), data, ["nDCG@10"], options=options)
        hits += flagged(board)
    assert hits <= bound, f"{hits} of {boards} boards flagged a difference (bound {bound})"


def test_identical_runs_differ_nowhere_and_tie_on_every_figure() -> None:
    same = frames(1, 50, seed=3)[0]
    board = leaderboard(labels(4), [same] * 4, ["nDCG@10"])
    metric = board.metrics[0]
    assert {s.letters for s in metric.standings} == {"a"}
    assert all(p.p_value == 1.0 and not p.differ for p in metric.pairs)
    assert all(s.verdict in (None, "unchanged") for s in metric.standings)
    assert len({(s.mean, s.ci_low, s.ci_high) for s in metric.standings}) == 1


def test_each_verdict_is_the_one_compare_gives_the_pair() -> None:
    from evalplat.comparison.verdicts import compare_scores

    both = ("nDCG@10", "AP")
    data = frames(5, 80, seed=2, better=(3,), margin=0.08, metrics=both)
    board = leaderboard(labels(5), data, list(both))
    assert board.tests == 2 * 4
    for metric in board.metrics:
        for s in metric.standings:
            if s.delta is None:
                assert s.verdict is None and s.p_value is None
                continue
            pair = compare_scores(data[0], data[labels(5).index(s.run)], list(both))
            row = pair.metric(metric.metric)
            assert (s.verdict, s.p_value, s.p_corrected) == (
                row.verdict, row.p_value, row.p_corrected
            )  # fmt: skip
    verdicts = {s.run: s.verdict for s in board.metrics[0].standings}
    assert verdicts["config-03"] == "improvement"


def test_a_metric_no_gate_holds_is_not_gated_and_intervals_stay_in_range() -> None:
    from evalplat.comparison.verdicts import Gate

    data = frames(3, 60, seed=5, better=(1,), margin=0.9, metrics=("P@5", "AP"))
    weights = {f"q{i}": (5.0 if i < 6 else 1.0) for i in range(60)}
    board = leaderboard(labels(3), data, ["P@5", "AP"], gates=[Gate("AP")], weights=weights)
    p5 = next(m for m in board.metrics if m.metric == "P@5")
    assert {s.verdict for s in p5.standings if s.delta is not None} == {"not gated"}
    assert all(0.0 <= s.ci_low <= s.ci_high <= 1.0 for m in board.metrics for s in m.standings)


def test_lower_is_better_metric_ranks_the_smallest_mean_first() -> None:
    values = [np.full(30, v) + np.linspace(0, 0.01, 30) for v in (0.5, 0.2, 0.8)]
    scores = [pd.DataFrame({"query_id": [f"q{i}" for i in range(30)], "metric": "Latency",
                            "value": v * 100}) for v in values]  # fmt: skip
    board = leaderboard(["a", "b", "c"], scores, ["Latency"])
    assert [s.run for s in board.metrics[0].standings] == ["b", "a", "c"]
    assert board.metrics[0].higher_is_better is False


def test_query_weights_of_one_value_change_nothing() -> None:
    data = frames(4, 60, seed=5, better=(2,), margin=0.1)
    plain = leaderboard(labels(4), data, ["nDCG@10"])
    weighted = leaderboard(labels(4), data, ["nDCG@10"],
                           weights={f"q{i}": 3.0 for i in range(60)})  # fmt: skip
    assert plain.metrics == weighted.metrics


def test_hsd_p_values_are_symmetric_and_reach_the_minimum_for_a_clear_gap() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((200, 4))
    x[:, 3] += 0.5
    (p,) = tukey.hsd_p_values([x], 999, seed=1)
    assert np.array_equal(p, p.T) and (np.diag(p) == 1).all()
    assert p[0, 3] == pytest.approx(1 / 1000)
    assert p[0, 1] > 0.05


def test_hsd_is_the_same_for_the_same_seed_and_shared_by_metrics() -> None:
    rng = np.random.default_rng(4)
    x = rng.random((60, 5))
    first = tukey.hsd_p_values([x, x * 2], 300, seed=9)
    again = tukey.hsd_p_values([x], 300, seed=9)
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[0], first[1])


def test_letters_of_a_known_pattern() -> None:
    differ = np.zeros((4, 4), dtype=bool)
    for a, b in ((0, 2), (0, 3), (1, 3)):
        differ[a, b] = differ[b, a] = True
    assert tukey.letters([0, 1, 2, 3], differ) == ["a", "ab", "bc", "c"]


PATTERNS = st.integers(min_value=1, max_value=7).flatmap(
    lambda k: st.tuples(st.just(k), st.lists(st.booleans(), min_size=k * k, max_size=k * k))
)


@settings(max_examples=150, deadline=None)
@given(PATTERNS)
def test_letters_share_one_exactly_when_a_pair_does_not_differ(
    case: tuple[int, list[bool]],
) -> None:
    k, cells = case
    upper = np.triu(np.array(cells, dtype=bool).reshape(k, k), 1)
    differ = upper | upper.T
    names = tukey.letters(list(range(k)), differ)
    assert all(names)
    for a, b in itertools.combinations(range(k), 2):
        assert bool(set(names[a]) & set(names[b])) != bool(differ[a, b])


def test_letters_go_past_z_for_many_groups() -> None:
    k = 30
    differ = ~np.eye(k, dtype=bool)  # every run differs from every other
    names = tukey.letters(list(range(k)), differ)
    assert names[0] == "a" and names[25] == "z" and names[26] == "aa" and len(set(names)) == k


@pytest.mark.parametrize(
    ("runs", "metric", "message"),
    [
        (1, "nDCG@10", "two runs or more"),
        (3, "NumRet", "ranks means"),
        (3, "Latency(p=95)", "ranks means"),
        (3, "P@5", "no scores for P@5"),
    ],
)
def test_refusals_say_what_is_wrong(runs: int, metric: str, message: str) -> None:
    data = frames(runs, 20, seed=1, metrics=("nDCG@10",))
    if metric != "P@5" and metric != "nDCG@10":
        data = [pd.concat([f, f.assign(metric=metric)]) for f in data]
    with pytest.raises(InputError, match=message):
        leaderboard(labels(runs), data, [metric])


def test_json_and_csv_carry_the_figures_of_the_table() -> None:
    board = leaderboard(labels(3), frames(3, 40, seed=8, better=(1,), margin=0.2), ["nDCG@10"])
    data = board.to_dict()
    assert data["baseline"] == labels(3)[0] and data["draws"] == 1000
    row = data["metrics"][0]["runs"][0]
    assert {"run", "rank", "mean", "ci_low", "ci_high", "letters", "delta", "p_corrected",
            "verdict"} <= set(row)  # fmt: skip
    assert len(data["metrics"][0]["pairs"]) == 3
    rows = board.csv_rows()
    assert [r["rank"] for r in rows] == [1, 2, 3] and rows[0]["metric"] == "nDCG@10"
    assert rows[0]["run"] == labels(3)[1]
