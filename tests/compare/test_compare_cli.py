"""``evalplat compare | unjudged | history | baseline`` end to end, on both databases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store

from .helpers import content, good_rankings, store_run


def _two_runs(db_url: str, *, worse: bool) -> tuple[int, int]:
    with Store.open(db_url) as store:
        store.import_test_set("small", content())
        base = good_rankings(content())
        cand = dict(base)
        if worse:
            for i, q in enumerate(sorted(base)):
                if i % 2 == 0:
                    cand[q] = [d for d in base[q] if "-n" in d]
        first = store_run(store, "engine", "small", base)
        second = store_run(store, "engine", "small", cand, label="<b>candidate</b>")
    return first, second


def test_regression_fails_the_gate_with_json_junit_and_an_escaped_report(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    first, second = _two_runs(db_url, worse=True)
    junit, report = tmp_path / "gate.xml", tmp_path / "cmp.html"
    result = cli("compare", "engine@baseline", str(second), "--metric", "nDCG@10", "--metric",
                 "P@5", "--max-drop", "0.01", "--junit", str(junit), "--report", str(report),
                 "--json", "--fail-on-regression", "--db", db_url)  # fmt: skip
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["verdict"] == "regression"
    assert data["baseline_run_id"] == first and data["candidate_run_id"] == second
    by_metric = {m["metric"]: m for m in data["metrics"]}
    assert set(by_metric) == {"nDCG@10", "P@5"}
    row = by_metric["nDCG@10"]
    assert {"metric", "baseline", "candidate", "delta", "p_value", "verdict"} <= set(row)
    assert row["verdict"] == "regression" and row["delta"] < 0
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "2"
    failures = [case.find("failure") for case in suite.iter("testcase")]
    assert all(f is not None and "regression" in (f.get("message") or "") for f in failures)
    page = report.read_text(encoding="utf-8")
    assert "<b>candidate</b>" not in page and "&lt;b&gt;candidate&lt;/b&gt;" in page


def test_identical_runs_pass_the_gate_and_print_a_table(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    first, second = _two_runs(db_url, worse=False)
    junit = tmp_path / "gate.xml"
    result = cli("compare", str(first), str(second), "--fail-on-regression", "--junit",
                 str(junit), "--db", db_url)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "verdict: unchanged" in result.stdout and "nDCG@10" in result.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    # every gateable metric scored: nDCG@10, P@5, AP (Judged@10 is a coverage figure, not gated)
    assert int(suite.get("tests") or 0) == 3


def test_unknown_test_is_a_usage_error(db_url: str, cli: Callable[..., Any]) -> None:
    first, second = _two_runs(db_url, worse=False)
    result = cli("compare", str(first), str(second), "--test", "z-test", "--db", db_url)
    assert result.exit_code == 2 and "randomization, t-test, wilcoxon" in result.stderr


def test_baseline_history_and_unjudged_commands(db_url: str, cli: Callable[..., Any]) -> None:
    first, second = _two_runs(db_url, worse=True)
    shown = cli("baseline", "show", "engine", "--json", "--db", db_url)
    assert shown.exit_code == 0 and json.loads(shown.stdout)[0]["run_id"] == first
    pinned = cli("baseline", "set", "engine", str(second), "--db", db_url)
    assert pinned.exit_code == 0 and f"run {second} (pinned)" in pinned.stdout
    compared = cli("compare", str(first), "engine@baseline", "--json", "--db", db_url)
    assert compared.exit_code == 0  # a regression without --fail-on-regression exits 0
    history = cli("history", "engine", "--metric", "nDCG@10", "--json", "--db", db_url)
    points = json.loads(history.stdout)
    assert [p["run_id"] for p in points] == [first, second]
    assert points[1]["is_baseline"] and points[0]["verdict"] is None
    pool = cli("unjudged", str(first), "--k", "10", "--db", db_url)
    assert pool.exit_code == 0
    assert pool.stdout.splitlines()[0] == "query_id,query,doc_id,rank,title,text"
    assert len(pool.stdout.splitlines()) == 1  # every retrieved document is judged


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--alpha", "1.5"), "alpha must be in (0, 1), got 1.5"),
        (("--max-drop", "-0.1"), "max_drop must be 0 or more, got -0.1"),
        (("--max-relative-drop", "-1"), "max_relative_drop must be 0 or more"),
        (("--metric", "nDCG@20"), "has no scores for nDCG@20 on small@1: score it with `evalplat"),
    ],
)
def test_bad_compare_options_are_exit_2_and_store_no_comparison(
    db_url: str, cli: Callable[..., Any], options: tuple[str, ...], message: str
) -> None:
    first, second = _two_runs(db_url, worse=True)
    result = cli("compare", str(first), str(second), *options, "--db", db_url)
    assert result.exit_code == 2
    assert message in result.stderr
    with Store.open(db_url) as store:
        assert store.history("engine", None)[1].verdict is None


def test_a_drop_smaller_than_the_relative_threshold_is_not_a_regression(
    db_url: str, cli: Callable[..., Any]
) -> None:
    first, second = _two_runs(db_url, worse=True)
    args = ("compare", str(first), str(second), "-m", "nDCG@10", "--json", "--db", db_url)
    strict = json.loads(cli(*args, "--max-relative-drop", "0.05").stdout)
    lenient = json.loads(cli(*args, "--max-relative-drop", "0.9").stdout)
    [row] = strict["metrics"]
    assert row["verdict"] == "regression" and -row["delta"] / row["baseline"] < 0.9
    assert [m["verdict"] for m in lenient["metrics"]] == ["unchanged"]
    assert lenient["verdict"] != "regression"
