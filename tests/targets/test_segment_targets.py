"""Targets on a segment and under query weights: the figure is the (weighted) mean of the
segment's queries and the interval resamples them alone; ``compare --target "M[tag]>=x"``
reports and gates it, on both databases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalplat.comparison.targets import Target, applicable, interval, parse_target, verdict
from evalplat.errors import InputError
from evalplat.metrics import parse
from evalplat.store import Store

from ..compare.helpers import content, store_run
from ..nightly.db_counts import table_counts
from .test_target_runs import first_k_relevant


def test_a_weighted_figure_is_the_weighted_mean_and_each_replicate_is_weighted() -> None:
    values, weights = np.array([1.0, 0.0, 0.0, 1.0]), np.array([3.0, 1.0, 1.0, 1.0])
    value, low, high = interval(parse("nDCG@10"), values, weights=weights, n=2000)
    assert value == pytest.approx(4 / 6)  # (3·1 + 1·0 + 1·0 + 1·1) / 6
    assert 0.0 <= low < value < high <= 1.0
    # equal weights are no weights: bit-for-bit the unweighted figures
    assert interval(parse("nDCG@10"), values, weights=np.full(4, 2.0)) == interval(
        parse("nDCG@10"), values
    )
    # a weight on a queried-out sum changes nothing
    assert interval(parse("NumRet"), values, weights=weights)[0] == 2.0
    held = verdict(Target("nDCG@10", "min", 0.6), values, weights=weights, n=2000)
    assert held.verdict == "met" and held.value == pytest.approx(4 / 6)


def test_a_segment_expression_parses_and_prints_back() -> None:
    target = parse_target(" nDCG@10[tail] >= 0.7")
    assert (target.metric, target.segment, target.value) == ("nDCG@10", "tail", 0.7)
    assert target.label == "nDCG@10[tail]>=0.7" and parse_target(target.label) == target
    assert parse_target("nDCG(gains={0:0,1:1,2:3})@10[head]>=0.5").segment == "head"
    with pytest.raises(InputError, match=r"--target 'P@5\[\]>=0.5': the segment in \[...\]"):
        parse_target("P@5[]>=0.5")


def test_a_segment_target_is_a_target_of_its_own() -> None:
    everywhere = Target("nDCG@10", "min", 0.8)
    tail = Target("nDCG@10", "min", 0.6, segment="tail")
    tail_here = Target("nDCG@10", "min", 0.7, segment="tail", config="prod")
    assert applicable([everywhere, tail, tail_here], "prod", "t") == [everywhere, tail_here]
    assert applicable([everywhere, tail, tail_here], "dev", "t") == [everywhere, tail]


def tagged_runs(db_url: str) -> tuple[int, int]:
    """40 queries, q00..q19 tagged head with weight 3, q20..q39 tail; the candidate answers
    q00..q29 (the head, and half of the tail)."""
    test_set = content(40, relevant=1)
    test_set.queries["tags"] = ['["head"]' if n < 20 else '["tail"]' for n in range(40)]
    test_set.queries["weight"] = [3.0 if n < 20 else 1.0 for n in range(40)]
    with Store.open(db_url) as store:
        store.import_test_set("tagged", test_set)
        base = store_run(store, "engine", "tagged", first_k_relevant(40, 40))
        cand = store_run(store, "engine", "tagged", first_k_relevant(30, 40), label="v2")
    return base, cand


def test_compare_reports_and_gates_a_segment_target(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    base, cand = tagged_runs(db_url)
    junit = tmp_path / "gate.xml"
    result = cli("compare", str(base), str(cand), "--target", "nDCG@10[tail]>=0.9", "--target",
                 "nDCG@10>=0.8", "--fail-on-target", "--json", "--junit", str(junit), "--db",
                 db_url)  # fmt: skip
    assert result.exit_code == 1, result.stderr
    rows = {row["target"]: row for row in json.loads(result.stdout)["targets"]}
    tail = rows["nDCG@10[tail]>=0.9"]
    assert tail["segment"] == "tail" and tail["value"] == pytest.approx(0.5)
    assert tail["ci_high"] < 0.9 and tail["target_verdict"] == "missed"
    every = rows["nDCG@10>=0.8"]
    # weighted: (20·3·1 + 10·1 + 10·0) / (20·3 + 20) = 70 / 80
    assert every["segment"] is None and every["value"] == pytest.approx(70 / 80)
    assert every["target_verdict"] == "met"
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["nDCG@10[tail]>=0.9"].find("failure") is not None
    assert cases["nDCG@10>=0.8"].find("failure") is None


def test_compare_refuses_an_unknown_segment_before_storing_a_comparison(
    db_url: str, cli: Callable[..., Any]
) -> None:
    base, cand = tagged_runs(db_url)
    before = table_counts(db_url)
    result = cli("compare", str(base), str(cand), "--target", "nDCG@10[tial]>=0.5", "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: target nDCG@10[tial]>=0.5: segment 'tial' is a tag of no query of run {cand}'s "
        "test set"
    ]
    assert table_counts(db_url) == before
