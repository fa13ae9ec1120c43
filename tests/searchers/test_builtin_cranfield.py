"""The builtin searcher on the bundled Cranfield collection lands where BM25 should.

Reference points (scored with ``evalplat.evaluate``, trec_eval semantics): porter/or gives
nDCG@10 = 0.367 over title, text, author and bibliography (0.362 over title and text only);
AND of every query word matches almost nothing on these long queries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalplat
from evalplat.formats.testset_files import read_documents, read_queries
from evalplat.resources import bundled_testset
from evalplat.searchers import SearchContext, get_kind

CRANFIELD = bundled_testset("cranfield")


@pytest.fixture(scope="module")
def collection() -> tuple[pd.DataFrame, pd.DataFrame]:
    return read_documents(CRANFIELD / "docs.jsonl"), read_queries(CRANFIELD / "queries.tsv")


def ndcg_at_10(collection: tuple[pd.DataFrame, pd.DataFrame], cache: Path, **params: Any) -> float:
    documents, queries = collection
    context = SearchContext(documents=documents, corpus_key="cranfield", cache_dir=cache)
    with get_kind("builtin").create(params, context) as searcher:
        rows = [
            (query_id, doc_id, score)
            for query_id, text in zip(queries["query_id"], queries["text"], strict=True)
            for doc_id, score in searcher.search(query_id, text, 100)
        ]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return float(evalplat.evaluate(CRANFIELD / "qrels.txt", run, ["nDCG@10"]).means["nDCG@10"])


def test_default_bm25_on_cranfield_scores_near_036(
    collection: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    assert ndcg_at_10(collection, tmp_path) == pytest.approx(0.367, abs=0.01)


def test_and_operator_on_long_cranfield_queries_finds_almost_nothing(
    collection: tuple[pd.DataFrame, pd.DataFrame], tmp_path: Path
) -> None:
    assert ndcg_at_10(collection, tmp_path, operator="and") < 0.05
