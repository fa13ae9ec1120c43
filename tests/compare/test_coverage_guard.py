"""The judged-coverage guard tells more unjudged documents from fewer documents."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalplat.comparison.verdicts import Gate, compare_scores

QUERIES = [f"q{i}" for i in range(60)]


def frame(ndcg: np.ndarray, judged: np.ndarray, retrieved: np.ndarray) -> pd.DataFrame:
    rows = []
    for q, n, j, r in zip(QUERIES, ndcg, judged, retrieved, strict=True):
        rows += [(q, "nDCG@10", n), (q, "Judged@10", j), (q, "NumRet", r)]
    return pd.DataFrame(rows, columns=["query_id", "metric", "value"])


def verdict(candidate: pd.DataFrame, baseline: pd.DataFrame) -> str:
    gates = [Gate(metric="nDCG@10", max_drop=0.01)]
    return compare_scores(baseline, candidate, ["nDCG@10"], gates).metric("nDCG@10").verdict


rng = np.random.default_rng(3)
BASE_NDCG = rng.uniform(0.4, 0.9, len(QUERIES))
BASELINE = frame(BASE_NDCG, np.full(60, 0.8), np.full(60, 100))


def test_drop_with_unjudged_documents_in_the_top_k_needs_judgments() -> None:
    # same number of results, but half of the top 10 now unjudged
    candidate = frame(BASE_NDCG - 0.2, np.full(60, 0.4), np.full(60, 100))
    assert verdict(candidate, BASELINE) == "needs_judgments"


def test_drop_from_returning_nothing_is_a_regression() -> None:
    # most queries return no results: Judged@10 falls to 0, but nothing unjudged is shown
    retrieved = np.where(np.arange(60) % 5 == 0, 3, 0)
    judged = np.where(retrieved > 0, 1.0, 0.0)
    candidate = frame(np.where(retrieved > 0, BASE_NDCG * 0.5, 0.0), judged, retrieved)
    assert verdict(candidate, BASELINE) == "regression"
