"""Every measure of ``all_trec`` against pytrec_eval (which embeds trec_eval 9) on random graded
cases: score ties, unjudged documents, negative grades, topics without relevant documents.

Per topic at four decimals; ``gm_map`` and ``gm_bpref``, which trec_eval keeps per topic as a
logarithm, through the run's figure.
"""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from evalplat.metrics import Metric, parse
from evalplat.metrics.catalogue_trec import ALL_TREC
from evalplat.metrics.evaluation import evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")

GEOMETRIC = {"gm_map", "gm_bpref"}


def _case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels and a run over a few topics, every topic in both (pytrec_eval scores only those)."""
    draw = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(draw.randint(1, 8)):
        topic = f"q{t}"
        docs = [f"d{i}" for i in range(draw.randint(2, 40))]
        judged = draw.sample(docs, draw.randint(1, len(docs)))
        qrels[topic] = {doc: draw.choice((-1, 0, 0, 1, 1, 2, 3)) for doc in judged}
        ranked = draw.sample(docs, draw.randint(1, len(docs)))
        # few distinct scores, so ties are common
        run[topic] = {doc: float(draw.randint(0, 6)) for doc in ranked}
    return qrels, run


def _frames(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
            ) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    judged = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    ranked = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return (
        pd.DataFrame(judged, columns=["query_id", "doc_id", "grade"]),
        pd.DataFrame(ranked, columns=["query_id", "doc_id", "score"]),
    )


@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", range(12))
def test_all_trec_agrees_with_pytrec_eval(seed: int, rel: int) -> None:
    qrels, run = _case(seed)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}, relevance_level=rel).evaluate(run)
    names = [name for name in ALL_TREC if name != "num_q"]
    metrics: dict[str, Metric] = {}
    for name in names:
        metric = parse(name)
        if rel != 1 and "rel" in metric.spec.params:
            metric = Metric(metric.family, metric.cutoff, **{**metric.params, "rel": rel})
        metrics[name] = metric
    judged, ranked = _frames(qrels, run)
    ours = evaluate(judged, ranked, list(dict.fromkeys(metrics.values())))
    mismatches = []
    for name, metric in metrics.items():
        values = dict(zip(ours.query_ids, ours.values[str(metric)], strict=True))
        if name in GEOMETRIC:
            expected = math.exp(sum(theirs[q][name] for q in qrels) / len(qrels))
            if f"{ours.means[str(metric)]:.4f}" != f"{expected:.4f}":
                mismatches.append(f"{name}: {expected} vs {ours.means[str(metric)]}")
            continue
        for query_id in qrels:
            expected = theirs[query_id][name]
            if math.isnan(expected):  # relative_P without relevant documents: nan there, 0 here
                assert values[query_id] == 0.0
                continue
            if f"{values[query_id]:.4f}" != f"{expected:.4f}":
                mismatches.append(f"{name} {query_id}: {expected} vs {values[query_id]}")
    assert not mismatches, "\n".join(mismatches[:20])
