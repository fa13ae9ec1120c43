"""The guard with bounds: a drop that survives the optimistic bound is a regression; a
verdict that turns on unjudged documents needs judgments, and says what to run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.comparison.guard import optimistic_bound
from evalplat.comparison.verdicts import Gate, compare_scores
from evalplat.metrics.evaluation import evaluate
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

from .helpers import store_run

QUERIES = [f"q{i:02d}" for i in range(50)]
METRICS = ["nDCG@10", "Judged@10", "NumRet"]


def judgments() -> pd.DataFrame:
    """Per query three relevant documents (grade 2) and ten judged non-relevant ones."""
    rows = []
    for q in QUERIES:
        rows += [(q, f"{q}-d{i}", 2) for i in range(3)] + [(q, f"{q}-n{i}", 0) for i in range(10)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"])


def synthetic_set() -> TestSetContent:
    queries = pd.DataFrame(
        {"query_id": QUERIES, "text": QUERIES, "weight": [float("nan")] * 50, "tags": [None] * 50}
    )
    frame = judgments().assign(source=None)
    frame["grade"] = frame["grade"].astype("int64")
    return TestSetContent(queries=queries, judgments=frame)


def perfect() -> dict[str, list[str]]:
    return {q: [f"{q}-d{i}" for i in range(3)] + [f"{q}-n{i}" for i in range(7)] for q in QUERIES}


def much_worse() -> dict[str, list[str]]:
    """nDCG@10 1.00 -> 0.43: in 60% of the queries two unjudged documents lead and only one
    relevant document is left; in the others the relevant documents fall below a non-relevant."""
    rankings = {}
    for n, q in enumerate(QUERIES):
        if n % 5 < 3:
            rankings[q] = [f"{q}-u0", f"{q}-u1", f"{q}-d0"] + [f"{q}-n{i}" for i in range(5, 10)]
        else:
            rankings[q] = [f"{q}-n0", *(f"{q}-d{i}" for i in range(3))]
            rankings[q] += [f"{q}-n{i}" for i in range(5, 10)]
    return rankings


def unjudged_instead_of_non_relevant() -> dict[str, list[str]]:
    """The perfect ranking with its judged non-relevant tail replaced by unjudged documents."""
    return {q: [f"{q}-d{i}" for i in range(3)] + [f"{q}-u{i}" for i in range(7)] for q in QUERIES}


def frame(rankings: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(q, d, r, 100.0 - r) for q, docs in rankings.items() for r, d in enumerate(docs, 1)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])


def verdicts(candidate: dict[str, list[str]]) -> dict[str, Any]:
    base, cand = frame(perfect()), frame(candidate)
    scores = [
        evaluate(judgments(), r, METRICS, ordering="given", topics=QUERIES).per_query
        for r in (base, cand)
    ]
    bound = optimistic_bound(judgments(), base, cand, ["nDCG@10"], QUERIES)
    out = {}
    for mode in ("bound", "needs_judgments", "ignore"):
        gates = [Gate("nDCG@10", max_drop=0.01, unjudged=mode)]
        result = compare_scores(*scores, ["nDCG@10"], gates, bound=bound)
        out[mode] = result.metric("nDCG@10")
    return out


def test_a_large_drop_with_some_unjudged_documents_is_a_regression() -> None:
    by_mode = verdicts(much_worse())
    m = by_mode["bound"]
    assert m.baseline == pytest.approx(1.0) and m.candidate == pytest.approx(0.434, abs=0.01)
    assert (m.unjudged, m.unjudged_queries, m.bound_depth) == (60, 30, 10)
    # even if all 60 were relevant, the candidate stays far below the baseline
    assert m.bound_candidate is not None and m.bound_baseline is not None
    assert m.bound_candidate < m.bound_baseline - 0.2
    assert m.bound_verdict == "regression" and m.verdict == "regression"
    # the Judged@k rule alone hides it; ignoring unjudged documents calls it a regression too
    assert by_mode["needs_judgments"].verdict == "needs_judgments"
    assert by_mode["ignore"].verdict == "regression"


def test_unjudged_documents_replacing_judged_non_relevant_ones_need_judgments() -> None:
    by_mode = verdicts(unjudged_instead_of_non_relevant())
    m = by_mode["bound"]
    assert m.delta == 0.0 and m.bound_verdict == "improvement"
    assert m.verdict == "needs_judgments" and m.unjudged == 350 and m.baseline_unjudged == 0
    assert by_mode["ignore"].verdict == "unchanged"


def test_without_ranked_results_the_bound_falls_back_to_the_judged_rule() -> None:
    scores = [
        evaluate(judgments(), frame(r), METRICS, ordering="given", topics=QUERIES).per_query
        for r in (perfect(), much_worse())
    ]
    result = compare_scores(*scores, ["nDCG@10"], [Gate("nDCG@10", max_drop=0.01)])
    m = result.metric("nDCG@10")
    assert m.verdict == "needs_judgments" and m.bound_verdict is None and m.unjudged is None


def test_a_gate_refuses_an_unknown_unjudged_rule() -> None:
    from evalplat.errors import InputError

    with pytest.raises(InputError, match="unjudged must be one of"):
        Gate("nDCG@10", unjudged="hope")


# ── through the store and the CLI, on both databases ─────────────────────────────────────────


def _runs(db_url: str, candidate: dict[str, list[str]]) -> tuple[int, int]:
    with Store.open(db_url) as store:
        store.import_test_set("synthetic", synthetic_set())
        first = store_run(store, "engine", "synthetic", perfect(), metrics=METRICS)
        second = store_run(store, "engine", "synthetic", candidate, label="cand", metrics=METRICS)
    return first, second


def test_the_synthetic_regression_fails_the_gate(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    first, second = _runs(db_url, much_worse())
    junit = tmp_path / "gate.xml"
    result = cli("compare", str(first), str(second), "--metric", "nDCG@10", "--max-drop",
                 "0.01", "--fail-on-regression", "--junit", str(junit), "--db", db_url)  # fmt: skip
    assert result.exit_code == 1, result.stderr
    assert "verdict: regression" in result.stdout
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case is not None and case.find("failure").get("type") == "regression"  # type: ignore[union-attr]
    legacy = cli("compare", str(first), str(second), "--metric", "nDCG@10", "--unjudged",
                 "needs_judgments", "--fail-on-regression", "--db", db_url)  # fmt: skip
    assert legacy.exit_code == 0 and "verdict: needs_judgments" in legacy.stdout


def test_needs_judgments_is_named_with_its_command_and_strict_fails(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    first, second = _runs(db_url, unjudged_instead_of_non_relevant())
    junit, report = tmp_path / "gate.xml", tmp_path / "cmp.html"
    args = ["compare", str(first), str(second), "--metric", "nDCG@10", "--db", db_url]
    lenient = cli(*args, "--fail-on-regression", "--junit", str(junit), "--report", str(report))
    assert lenient.exit_code == 0, lenient.stderr
    assert "350 unjudged documents in the candidate's top 10 of 50 queries" in lenient.stdout
    assert f"evalplat unjudged {second} --k 10" in lenient.stdout
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case is not None and case.find("failure") is None
    assert "350 unjudged" in (case.find("skipped").get("message") or "")  # type: ignore[union-attr]
    page = report.read_text(encoding="utf-8")
    assert "needs judgments" in page and f"evalplat unjudged {second} --k 10" in page
    strict = cli(*args, "--fail-on-regression", "--strict", "--junit", str(junit), "--json")
    assert strict.exit_code == 1, strict.stderr
    data = json.loads(strict.stdout)
    row = data["metrics"][0]
    assert row["verdict"] == "needs_judgments" and row["bound_verdict"] == "improvement"
    assert row["unjudged"] == 350 and row["unjudged_mode"] == "bound"
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("skipped") == "0"
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.get("type") == "needs_judgments"
    with Store.open(db_url) as store:
        loaded = store.load_comparison(int(data["id"])).metric("nDCG@10")
    assert loaded.unjudged == 350 and loaded.bound_verdict == "improvement"


def test_an_unknown_unjudged_rule_is_bad_usage(db_url: str, cli: Callable[..., Any]) -> None:
    first, second = _runs(db_url, much_worse())
    result = cli("compare", str(first), str(second), "--unjudged", "maybe", "--db", db_url)
    assert result.exit_code == 2 and "--unjudged must be one of" in result.stderr


def test_measures_that_read_no_judgments_have_no_bound() -> None:
    results = pd.DataFrame({"query_id": ["q00"], "doc_id": ["q00-u0"], "rank": [1]})
    bound = optimistic_bound(judgments(), results, results, ["Coverage", "Latency(p=95)"], QUERIES)
    assert bound.baseline.empty and bound.candidate.empty and bound.depth == {}
