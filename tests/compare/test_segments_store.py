"""Weights and segments through the store and the CLI, on both databases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalplat.comparison.verdicts import CompareOptions, Gate
from evalplat.metrics.evaluation import evaluate
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

from .helpers import content, good_rankings, store_run

FAST = CompareOptions(permutations=2000, bootstrap=500)


def tagged(queries: int = 60) -> TestSetContent:
    """``content()`` with weights 1..3 and tags: the last 25 queries 'tail', the others 'head',
    the first 4 also 'rare'."""
    base = content(queries)
    frame = base.queries.copy()
    frame["weight"] = [float(1 + i % 3) for i in range(queries)]
    frame["tags"] = [
        json.dumps(["tail" if i >= queries - 25 else "head"] + (["rare"] if i < 4 else []))
        for i in range(queries)
    ]
    return TestSetContent(queries=frame, judgments=base.judgments)


def runs(store: Store) -> tuple[int, int, TestSetContent]:
    data = tagged()
    store.import_test_set("tagged", data)
    base = good_rankings(data)
    cand = dict(base)
    for q in sorted(base)[-25:]:  # the tail loses its relevant documents
        cand[q] = [d for d in base[q] if "-n" in d]
    return (
        store_run(store, "engine", "tagged", base),
        store_run(store, "engine", "tagged", cand, label="cand"),
        data,
    )


def test_stored_means_comparison_and_evaluate_agree_on_weights(store: Store) -> None:
    first, second, data = runs(store)
    result = store.compare_runs(first, second, metrics=["nDCG@10"], options=FAST)
    assert result.weighted
    weights = dict(zip(data.queries["query_id"], data.queries["weight"], strict=True))
    for run_id, side in ((first, "baseline"), (second, "candidate")):
        results = store.load_results(run_id)
        expected = evaluate(data.qrels[["query_id", "doc_id", "grade"]], results, ["nDCG@10"],
                            ordering="given", topics=list(weights), weights=weights)  # fmt: skip
        mean = expected.means["nDCG@10"]
        assert store.run_info(run_id).means["nDCG@10"] == pytest.approx(mean, rel=1e-12)
        assert getattr(result.metric("nDCG@10"), side) == pytest.approx(mean, rel=1e-12)
    unweighted = float(np.mean(expected.values["nDCG@10"]))
    assert result.metric("nDCG@10").candidate != pytest.approx(unweighted)


def test_segment_rows_are_stored_and_read_back_verbatim(store: Store) -> None:
    first, second, _ = runs(store)
    gates = [Gate("nDCG@10", max_drop=0.5), Gate("nDCG@10", max_drop=0.05, segment="tail")]
    result = store.compare_runs(first, second, metrics=["nDCG@10", "P@5"], gates=gates,
                                options=FAST)  # fmt: skip
    assert result.metric("nDCG@10").verdict == "unchanged"  # within 0.5 over all queries
    rows = {(s.metric, s.segment): s for s in result.segments}
    assert set(rows) == {(m, t) for m in ("nDCG@10", "P@5") for t in ("head", "rare", "tail")}
    assert rows[("nDCG@10", "tail")].gated and rows[("nDCG@10", "tail")].verdict == "regression"
    assert rows[("nDCG@10", "tail")].queries == 25
    assert rows[("P@5", "rare")].note == "4 queries, fewer than 20: not gated"
    assert result.verdict == "regression"
    loaded = store.load_comparison(result.id or 0)
    assert loaded.segments == result.segments and loaded.weighted
    assert loaded.verdict == "regression"
    assert loaded.query_tags["q59"] == ("tail",)


def test_comparisons_without_tags_store_no_segment_rows(store: Store) -> None:
    store.import_test_set("small", content())
    base = good_rankings(content())
    first = store_run(store, "engine", "small", base)
    second = store_run(store, "engine", "small", base, label="again")
    result = store.compare_runs(first, second, options=FAST)
    assert result.segments == () and not result.weighted
    assert store.load_comparison(result.id or 0).segments == ()


def test_compare_cli_gates_a_segment_and_says_weights_are_in_force(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        first, second, _ = runs(store)
    junit = tmp_path / "gate.xml"
    args = ["compare", str(first), str(second), "--metric", "nDCG@10", "--max-drop", "0.5",
            "--db", db_url, "--fail-on-regression"]  # fmt: skip
    passed = cli(*args, "--json")
    assert passed.exit_code == 0, passed.stderr
    data = json.loads(passed.stdout)
    assert data["weighted"] is True
    tail = next(s for s in data["segments"] if s["segment"] == "tail")
    assert tail["queries"] == 25 and tail["gated"] is False and tail["delta"] < 0
    failed = cli(*args, "--segment", "tail", "--junit", str(junit))
    assert failed.exit_code == 1, failed.stderr
    assert "weighted by query weight" in failed.stdout
    assert "nDCG@10 regressed in segment tail" in failed.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    small = cli(*args, "--segment", "rare", "--json")
    assert small.exit_code == 0
    rare = [s for s in json.loads(small.stdout)["segments"] if s["segment"] == "rare"]
    assert rare[0]["gated"] is False and "fewer than 20" in rare[0]["note"]


def test_all_zero_weights_are_refused_at_import_naming_the_line(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    for name, text, line in (
        ("zero.tsv", "q1\tone\t0\nq2\ttwo\t0\n", 1),
        ("nan.tsv", "q1\tone\t1\nq2\ttwo\tnan\n", 2),
        ("neg.jsonl", '{"id": "q1", "text": "a", "weight": 1}\n{"id": "q2", "text": "b", '
         '"weight": -2}\n', 2),
    ):  # fmt: skip
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        result = cli("testset", "import", "w", "--qrels", str(qrels), "--queries", str(path),
                     "--db", db_url)  # fmt: skip
        assert result.exit_code == 2
        assert f"{name} line {line}: weight must be a number > 0" in result.stderr
    listed = cli("testset", "list", "--json", "--db", db_url)
    assert json.loads(listed.stdout) == []


def test_tags_of_a_stored_version_are_lists_for_the_comparison(store: Store) -> None:
    store.import_test_set("tagged", tagged())
    loaded = store.load_test_set("tagged")
    assert isinstance(loaded.queries["tags"][0], str)
    assert json.loads(loaded.queries["tags"][0]) == ["head", "rare"]
    assert loaded.queries["weight"].tolist()[:3] == [1.0, 2.0, 3.0]
