"""Judgments coded once (``coded_qrels``) for several runs, and runs already in their order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.errors import InputError
from evalplat.metrics.evaluation import coded_qrels, evaluate
from evalplat.running.run_scoring import _coded_qrels, evaluation_record
from evalplat.testsets.content import TestSetContent

from .test_properties import BOUNDED, collections


def _ranked(run: pd.DataFrame) -> pd.DataFrame:
    """The run with a rank per query (by score, then doc id), rows in file order."""
    ranked = run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False])
    rank = ranked.groupby("query_id").cumcount() + 1
    return run.assign(rank=rank.reindex(run.index).astype(float))


@given(collections(), collections(), st.lists(st.sampled_from("abcde"), min_size=1, unique=True))
def test_coded_judgments_score_each_run_as_the_judgments_themselves(
    first: tuple[pd.DataFrame, pd.DataFrame],
    second: tuple[pd.DataFrame, pd.DataFrame],
    topics: list[str],
) -> None:
    qrels, run = first
    other_run = second[1]
    coded = coded_qrels(qrels, topics)
    for each in (run, other_run, run):
        expected = evaluate(qrels, each, BOUNDED, topics=topics)
        got = evaluate(coded, each, BOUNDED)
        assert got.query_ids == expected.query_ids
        assert got.means == pytest.approx(expected.means, nan_ok=True)
        assert got.options == expected.options


@given(collections(), st.integers(0, 2**31))
def test_a_given_order_scores_the_same_whatever_order_the_rows_come_in(
    data: tuple[pd.DataFrame, pd.DataFrame], seed: int
) -> None:
    qrels, run = data
    ranked = _ranked(run)
    in_order = ranked.sort_values(["query_id", "rank"]).reset_index(drop=True)
    shuffled = ranked.sample(frac=1.0, random_state=np.random.RandomState(seed))
    expected = evaluate(qrels, shuffled, BOUNDED, ordering="given").per_query
    got = evaluate(qrels, in_order, BOUNDED, ordering="given").per_query
    pd.testing.assert_frame_equal(got, expected)


def test_coded_judgments_refuse_other_topics() -> None:
    qrels = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d1", "d2"], "grade": [1, 0]})
    run = pd.DataFrame({"query_id": ["a"], "doc_id": ["d1"], "score": [1.0]})
    coded = coded_qrels(qrels, ["a", "b"])
    assert evaluate(coded, run, ["P@1"], topics=["b", "a"]).means["P@1"] == 0.5
    with pytest.raises(InputError, match="topics differ"):
        evaluate(coded, run, ["P@1"], topics=["a"])


def test_a_repeated_judgment_names_its_line_when_coded(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 3"):
        coded_qrels(qrels)


def test_a_test_set_versions_judgments_are_coded_once_for_its_runs() -> None:
    queries = pd.DataFrame({"query_id": ["a", "b"], "text": ["x", "y"], "weight": [None, None]})
    judgments = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d1", "d2"], "grade": [2, 1]})
    content = TestSetContent(queries, judgments)
    results = pd.DataFrame(
        {"query_id": ["a", "b"], "doc_id": ["d1", "d9"], "rank": [1, 1], "score": [1.0, 1.0]}
    )
    first = evaluation_record(content, results, ["P@1"], 1)
    coded = _coded_qrels(content)
    second = evaluation_record(content, results, ["P@1"], 1)
    assert _coded_qrels(content) is coded
    assert first.means == second.means == {"P@1": (0.5, 2)}
    other = TestSetContent(queries, judgments.assign(grade=[0, 1]))
    assert evaluation_record(other, results, ["P@1"], 1).means == {"P@1": (0.0, 2)}
    assert _coded_qrels(other) is not coded
