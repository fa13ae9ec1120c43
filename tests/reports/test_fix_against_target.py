"""*Fix these* measured against the metric's target: the shares are of the distance from the
latest mean to the target, and the list stops at the fewest queries that close it; without a
target (or once it is met) they are of the distance to the best-of-configs mean. By hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.comparison.query_health import HealthInputs, query_health
from evalplat.comparison.targets import Target
from evalplat.store import Store

from .test_query_health import plant

# config c's latest values and the best config b's, per query; q3 weighs 2 (weights sum to 5)
LAST = {"q0": 0.2, "q1": 0.5, "q2": 0.9, "q3": 0.0}
BEST = {"q0": 1.0, "q1": 0.6, "q2": 0.9, "q3": 0.3}
WEIGHTS = {"q0": 1.0, "q1": 1.0, "q2": 1.0, "q3": 2.0}


def inputs(target: Target | None) -> HealthInputs:
    ids = list(LAST)
    peers = [("c", q, v) for q, v in LAST.items()] + [("b", q, v) for q, v in BEST.items()]
    return HealthInputs(
        config="c", test_set="t", metric="nDCG@10", higher_is_better=True, runs=(1,),
        scores=pd.DataFrame([(1, q, v) for q, v in LAST.items()],
                            columns=["run_id", "query_id", "value"]),
        records=pd.DataFrame(columns=["run_id", "query_id", "results_count", "status"]),
        queries=pd.DataFrame({"query_id": ids, "text": ids,
                              "weight": [WEIGHTS[q] for q in ids], "tags": None}),
        peers=pd.DataFrame(peers, columns=["config", "query_id", "value"]),
        top=pd.DataFrame(columns=["config", "query_id", "doc_id", "rank", "judged"]),
        target=target,
    )  # fmt: skip


def fix_of(target: Target | None) -> tuple[list[str], list[float], str]:
    health = query_health(inputs(target))
    return list(health.fix["query_id"]), list(health.fix["share"]), health.fix_basis


def test_without_a_target_the_shares_are_of_the_distance_to_the_best_configs() -> None:
    # gains: q0 1·0.8/5 = 0.16, q3 2·0.3/5 = 0.12, q1 1·0.1/5 = 0.02 (q2 has no gap): 0.30 in all
    ids, shares, basis = fix_of(None)
    assert ids == ["q0", "q3", "q1"]
    assert shares == pytest.approx([0.16 / 0.30, 0.12 / 0.30, 0.02 / 0.30])
    assert basis == "shares of the distance to the best-of-configs mean"


def test_a_missed_target_keeps_the_fewest_queries_that_close_the_distance() -> None:
    # weighted mean (0.2 + 0.5 + 0.9 + 2·0) / 5 = 0.32; target 0.5: 0.18 short.
    # q0 covers 0.16 / 0.18 = 89 %, q0 + q3 0.28 / 0.18 = 156 %: q1 is not needed
    health = query_health(inputs(Target("nDCG@10", "min", 0.5)))
    assert list(health.fix["query_id"]) == ["q0", "q3"]
    assert list(health.fix["share"]) == pytest.approx([0.16 / 0.18, 0.12 / 0.18])
    assert list(health.fix["cumulative"]) == pytest.approx([0.16 / 0.18, 0.28 / 0.18])
    assert health.fix_basis == (
        "the mean 0.3200 is 0.1800 short of the target nDCG@10>=0.5: shares of that distance"
    )
    assert health.fix["reason"][0] == (
        "b scores 1 here, c 0.2: closing the gap adds +0.1600 to the mean "
        "(89% of the distance to the target, 89% with the queries above)"
    )
    assert health.to_dict()["target"] == "nDCG@10>=0.5"
    # a target 0.02 short: the first query alone closes it
    assert fix_of(Target("nDCG@10", "min", 0.34))[0] == ["q0"]


def test_a_target_out_of_reach_lists_every_gap_and_says_how_far_short_it_stays() -> None:
    ids, shares, basis = fix_of(Target("nDCG@10", "min", 0.9))  # 0.58 short, 0.30 reachable
    assert ids == ["q0", "q3", "q1"]
    assert shares == pytest.approx([0.16 / 0.58, 0.12 / 0.58, 0.02 / 0.58])
    assert basis.endswith("shares of that distance; closing every gap leaves it 0.2800 short")


def test_a_met_target_falls_back_to_the_best_configs() -> None:
    ids, shares, basis = fix_of(Target("nDCG@10", "min", 0.3))
    assert ids == ["q0", "q3", "q1"] and shares == pytest.approx([0.16 / 0.3, 0.4, 0.02 / 0.3])
    assert basis.startswith("the mean 0.3200 meets the target nDCG@10>=0.3")


def test_queries_measures_against_the_kept_or_the_given_target(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    plant(cli, db_url, tmp_path)

    def read(*args: str) -> dict[str, Any]:
        result = cli("queries", "alpha", "-t", "topics", "--json", "--db", db_url, *args)
        assert result.exit_code == 0, result.stderr
        return dict(json.loads(result.stdout))

    assert read()["target"] is None
    with Store.open(db_url) as store:
        latest = store.list_runs("alpha")[0].id
        store.check_targets(latest, [Target("nDCG@10", "min", 0.9)], record=True)
    kept = read()
    assert kept["target"] == "nDCG@10>=0.9" and "short of the target" in kept["fix_basis"]
    given = read("--target", "nDCG@10>=0.1")
    assert given["target"] == "nDCG@10>=0.1" and "meets the target" in given["fix_basis"]
    wrong = cli("queries", "alpha", "-t", "topics", "--target", "P@5>=0.5", "--db", db_url)
    assert wrong.exit_code == 2
    assert wrong.stderr.splitlines() == [
        "error: --target P@5>=0.5: the read is of nDCG@10 on all queries; give a target on "
        "nDCG@10 without a segment"
    ]
