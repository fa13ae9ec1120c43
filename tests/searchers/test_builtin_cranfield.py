"""The builtin searcher on the bundled Cranfield collection lands where BM25 should.

The nDCG@10 figures below are regression pins, not external references: they were taken from
evalplat's own output (porter/or: 0.367 over title, text, author and bibliography; 0.362 over
title and text only) and guard against an unnoticed change in the searcher. The scoring half of
them is checked independently: the same run scored by trec_eval's code (pytrec_eval) must agree
with evalplat to four decimals. AND of every query word matches almost nothing on these long
queries.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalplat
from evalplat.formats.testset_files import read_documents, read_queries
from evalplat.resources import bundled_testset
from evalplat.searchers import SearchContext, get_kind
from evalplat.testsets.content import load_testset

CRANFIELD = bundled_testset("cranfield")


@pytest.fixture(scope="module")
def collection() -> tuple[pd.DataFrame, pd.DataFrame]:
    return read_documents(CRANFIELD / "docs.jsonl"), read_queries(CRANFIELD / "queries.tsv")


def cranfield_run(
    collection: tuple[pd.DataFrame, pd.DataFrame], cache: Path, **params: Any
) -> pd.DataFrame:
    documents, queries = collection
    context = SearchContext(documents=documents, corpus_key="cranfield", cache_dir=cache)
    with get_kind("builtin").create(params, context) as searcher:
        rows = [
            (query_id, doc_id, score)
            for query_id, text in zip(queries["query_id"], queries["text"], strict=True)
            for doc_id, score in searcher.search(query_id, text, 100)
        ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def ndcg_at_10(run: pd.DataFrame) -> float:
    return float(evalplat.evaluate(CRANFIELD / "qrels.txt", run, ["nDCG@10"]).means["nDCG@10"])


@pytest.fixture(scope="module")
def default_run(
    collection: tuple[pd.DataFrame, pd.DataFrame], tmp_path_factory: pytest.TempPathFactory
) -> pd.DataFrame:
    return cranfield_run(collection, tmp_path_factory.mktemp("cache"))


def test_default_bm25_on_cranfield_scores_near_036(default_run: pd.DataFrame) -> None:
    # Regression pin (evalplat's own output when the searcher was written), not a reference.
    assert ndcg_at_10(default_run) == pytest.approx(0.367, abs=0.01)


def test_cranfield_ndcg_agrees_with_trec_eval_on_the_same_run(
    default_run: pd.DataFrame, trec_eval_reference: Callable[..., dict[str, float]]
) -> None:
    qrels = load_testset(CRANFIELD / "qrels.txt").judgments
    theirs = trec_eval_reference(qrels, default_run, "nDCG@10")
    ours = evalplat.evaluate(CRANFIELD / "qrels.txt", default_run, ["nDCG@10"])
    assert sorted(ours.query_ids) == sorted(theirs) and len(theirs) == 225
    per_query = dict(zip(ours.query_ids, ours.values["nDCG@10"], strict=True))
    assert {q: round(v, 4) for q, v in per_query.items()} == {
        q: round(v, 4) for q, v in theirs.items()
    }
    assert round(ours.means["nDCG@10"], 4) == round(sum(theirs.values()) / len(theirs), 4)


def test_and_operator_on_long_cranfield_queries_finds_almost_nothing(
    collection: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    assert ndcg_at_10(cranfield_run(collection, tmp_path, operator="and")) < 0.05
