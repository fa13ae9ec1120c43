"""The review loop: a judge's grades go out as CSV, people confirm or correct them, and the file
comes back as grades of their own source, which calibration then measures the judge against."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store

from .chat_server import ChatServer
from .planted import UNJUDGED, Planted, build


@pytest.fixture
def planted(db_url: str, tmp_path: Path, cli: Callable[..., Any], server: ChatServer) -> Planted:
    p = build(tmp_path, db_url, cli, server.url)
    judged = cli("judge", "stub", "-t", "planted", "--unjudged-of", str(p.candidate),
                 "-p", str(p.project), "--db", p.url)  # fmt: skip
    assert judged.exit_code == 0, judged.stderr
    return p


def test_exported_grades_come_back_as_the_reviewers_source_and_calibration_measures_them(
    planted: Planted, cli: Callable[..., Any], tmp_path: Path
) -> None:
    out = tmp_path / "review.csv"
    exported = cli("judge", "export", "stub", "-t", "planted", "--out", str(out), "--db",
                   planted.url)  # fmt: skip
    assert exported.exit_code == 0, exported.stderr
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == UNJUDGED
    assert list(rows[0]) == [
        "query_id", "query", "doc_id", "grade", "source", "judge_grade", "rationale"
    ]  # fmt: skip
    assert rows[0]["query"] == "question q01" and rows[0]["doc_id"] == "q01-u0"
    assert {(r["grade"], r["judge_grade"], r["source"]) for r in rows} == {("0", "0", "review")}
    assert {r["rationale"] for r in rows} == {"the marker says so"}

    # a reviewer confirms most grades and corrects the first ten
    for row in rows[:10]:
        row["grade"] = "2"
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    imported = cli("testset", "import", "planted", "--qrels", str(out), "--add", "--db",
                   planted.url, "--json")  # fmt: skip
    assert imported.exit_code == 0, imported.stderr
    info = json.loads(imported.stdout)
    assert (info["version"], info["created"]) == (3, True)

    with Store.open(planted.url) as store:
        judgments = store.load_test_set("planted@3").judgments
        queries_before = len(store.load_test_set("planted@2").queries)
        queries_after = len(store.load_test_set("planted@3").queries)
    by_source = judgments.groupby("source")["grade"].agg(["count", "sum"])
    # people's first grades, the model's, and the reviewers' beside them
    assert by_source.loc["human", "count"] == 300 and by_source.loc["llm:stub", "count"] == 90
    assert (by_source.loc["review", "count"], by_source.loc["review", "sum"]) == (90, 20)
    assert queries_after == queries_before

    calibrated = cli("judge", "calibrate", "stub", "-t", "planted", "--sample", "1000",
                     "-p", str(planted.project), "--db", planted.url, "--json")  # fmt: skip
    assert calibrated.exit_code == 0, calibrated.stderr
    sources = {s["source"]: s for s in json.loads(calibrated.stdout)["sources"]}
    assert sources["human"]["exact"] == 1.0
    review = sources["review"]
    assert review["pairs"] == UNJUDGED and review["exact"] == pytest.approx(80 / 90)
    assert review["weighted_kappa"] is not None and review["weighted_kappa"] < 1.0

    again = cli("testset", "import", "planted", "--qrels", str(out), "--add", "--db",
                planted.url, "--json")  # fmt: skip
    assert json.loads(again.stdout)["created"] is False  # the same review adds nothing


def test_add_refuses_grades_of_queries_the_test_set_does_not_have(
    planted: Planted, cli: Callable[..., Any], tmp_path: Path
) -> None:
    extra = tmp_path / "extra.csv"
    extra.write_text("query_id,doc_id,grade,source\nq99,x,1,review\n")
    result = cli("testset", "import", "planted", "--qrels", str(extra), "--add", "--db",
                 planted.url)  # fmt: skip
    assert result.exit_code == 2
    assert "extra.csv line 2: query 'q99' is not in the test set: --add" in result.stderr
    with Store.open(planted.url) as store:
        assert store.test_set_version("planted").version == 2


def test_export_refuses_a_reviewer_source_that_looks_like_a_model(
    planted: Planted, cli: Callable[..., Any]
) -> None:
    result = cli("judge", "export", "stub", "-t", "planted", "--source", "llm:me", "--db",
                 planted.url)  # fmt: skip
    assert result.exit_code == 2 and "cannot look like a model's" in result.stderr
