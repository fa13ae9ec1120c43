"""``import-run``: one ranking stored, scored and copied; writes that name a run that exists."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalplat.errors import NotFoundError
from evalplat.metrics.evaluation import evaluate
from evalplat.running import runner
from evalplat.running.ranked_file import rank_run_file
from evalplat.store import QueryOutcome, Store
from evalplat.testsets.content import TestSetContent

QUERIES = [f"t{n:03d}" for n in range(300)]
METRICS = ["nDCG@10", "AP", "P@5", "RR"]


def _content() -> TestSetContent:
    rng = random.Random(3)
    rows = [(q, f"doc{d}", rng.randint(0, 3), None) for q in QUERIES for d in range(0, 30, 3)]
    judgments = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade", "source"])
    queries = pd.DataFrame(
        {
            "query_id": QUERIES,
            "text": QUERIES,
            "weight": [float("nan")] * len(QUERIES),
            "tags": [None] * len(QUERIES),
        }
    )
    return TestSetContent(queries=queries, judgments=judgments)


def _run_file(path: Path) -> pd.DataFrame:
    """A run with lines shuffled, scores tied in threes, one test set query left out and two
    queries the test set does not have; returns its lines as a frame."""
    rng = random.Random(5)
    lines = []
    for q in [*QUERIES[1:], "zz1", "zz2"]:
        for d in rng.sample(range(40), 12):
            lines.append((q, f"doc{d}", float(rng.randint(0, 3))))
    rng.shuffle(lines)
    path.write_text("".join(f"{q} Q0 {d} 1 {s} tag\n" for q, d, s in lines))
    return pd.DataFrame(lines, columns=["query_id", "doc_id", "score"])


def test_imported_ranking_is_trec_order_and_its_scores_are_evaluates(
    db_url: str, store: Store, tmp_path: Path
) -> None:
    content = _content()
    store.import_test_set("topics", content)
    lines = _run_file(tmp_path / "run.txt")
    info = runner.import_run(store, tmp_path / "run.txt", "engine", "topics", metrics=METRICS)
    assert info.status == "complete" and info.queries_done == len(QUERIES)
    assert info.options["run_only_queries"] == 2 and info.depth == 12
    expected = lines[lines["query_id"].isin(QUERIES)].sort_values(
        ["query_id", "score", "doc_id"], ascending=[True, False, False]
    )
    expected["rank"] = expected.groupby("query_id").cumcount() + 1
    expected = expected[["query_id", "doc_id", "rank", "score"]].reset_index(drop=True)
    with Store.open(db_url) as fresh:  # the copy, as a later command reads it
        pd.testing.assert_frame_equal(fresh.load_results(info.id), expected, check_dtype=False)
    with Store.open(db_url) as fresh:  # the table itself, read by query
        table = fresh.load_results(info.id, queries=QUERIES)
        pd.testing.assert_frame_equal(table, expected, check_dtype=False)
    outcomes = store.run_outcomes(info.id)
    counts = dict(zip(outcomes["query_id"], outcomes["results_count"], strict=True))
    assert counts[QUERIES[0]] == 0 and counts[QUERIES[1]] == 12
    assert set(outcomes["status"]) == {"ok"}
    reference = evaluate(content.judgments, tmp_path / "run.txt", METRICS, topics=QUERIES)
    for name in METRICS:
        assert info.means[name] == pytest.approx(reference.means[name], abs=1e-12)


def test_ranking_a_file_counts_every_query_and_numbers_ranks_from_one(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("b Q0 x 1 1.0 t\na Q0 y 1 2.0 t\nb Q0 z 1 1.0 t\nc Q0 x 1 3.0 t\n")
    ranked = rank_run_file(path, ["b", "a", "d"])
    assert ranked.query_ids == ["a", "b", "d"] and ranked.run_only == ["c"]
    assert ranked.counts.tolist() == [1, 2, 0] and ranked.depth == 2
    assert ranked.results.column("doc_id").to_pylist() == ["y", "z", "x"]
    assert ranked.results.column("rank").to_pylist() == [1, 1, 2]


def test_a_scoring_failure_after_the_write_leaves_a_running_run_not_a_complete_one(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.import_test_set("topics", _content())
    _run_file(tmp_path / "run.txt")

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "evaluation_record", broken)
    with pytest.raises(KeyboardInterrupt):
        runner.import_run(store, tmp_path / "run.txt", "engine", "topics", metrics=METRICS)
    (info,) = store.list_runs()
    assert info.status == "running" and info.means == {}


def test_results_of_a_run_that_does_not_exist_are_refused(store: Store) -> None:
    results = pa.table({"query_id": ["q"], "doc_id": ["d"], "rank": [1], "score": [1.0]})
    with pytest.raises(NotFoundError, match="no run with id 77"):
        store.record_ranked(77, ["q"], np.array([1]), results)
    with pytest.raises(NotFoundError, match="no run with id 77"):
        store.record_outcomes(77, [QueryOutcome("q", "ok", [("d", 1.0)])])
    with pytest.raises(NotFoundError):
        store.load_results(77)


def test_a_stored_version_without_a_grade_rule_is_known_to_grade_each_pair_once(
    store: Store,
) -> None:
    store.import_test_set("topics", _content())
    content = store.load_test_set("topics", documents=False)
    assert content.grade_rule is None
    assert "several_grades" in content.__dict__ and not content.several_grades
    assert content.qrels is content.judgments
