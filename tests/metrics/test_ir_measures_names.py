"""Every measure ir_measures registers, under the names ir_measures itself prints: each name
ir_measures computes parses here and gives ir_measures' values, but the measures evalplat does
not offer, which it refuses by name.
"""

from __future__ import annotations

import math
import random
import subprocess
import warnings
from collections.abc import Iterator

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.metrics import parse
from evalplat.metrics.evaluation import evaluate

ir_measures = pytest.importorskip("ir_measures")

# a representative value of each parameter ir_measures declares
SAMPLE: dict[str, object] = {
    "rel": 2, "judged_only": True, "p": 0.8, "T": 2, "min_rel": 1, "max_rel": 3, "beta": 0.5,
    "gains": {0: 0, 1: 1, 2: 3}, "dcg": "exp-log2", "recall": 0.5, "relative": True,
    "normalize": False, "alpha": 0.6,
}  # fmt: skip
# measures of intent-aware (subtopic) judgments, which evalplat does not read, and ir_measures'
# binary RBP(rel=k) with its own persistence 0.8, where evalplat's RBP is trec_eval's graded rbp
NOT_OFFERED = ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP", "AP_IA", "P_IA",
               "StRecall", "RBP")  # fmt: skip


def _names() -> Iterator[tuple[str, object]]:
    """(registry name, measure): the bare measure, each parameter alone, and a cutoff of 10."""
    for alias, base in ir_measures.measures.registry.items():
        params = [k for k in base.SUPPORTED_PARAMS if k != "cutoff"]
        required = {k: SAMPLE[k] for k in params if k == "max_rel"}
        plain = base(**required) if required else base
        yield alias, plain
        for key in params:
            yield alias, base(**{**required, key: SAMPLE[key]})
        if "cutoff" in base.SUPPORTED_PARAMS:
            yield alias, plain @ 10


def _case() -> tuple[list[object], list[object], pd.DataFrame, pd.DataFrame]:
    """Graded judgments with unjudged and negative documents; distinct scores, since the
    providers ir_measures delegates to order tied documents each its own way (trec_eval's order
    is checked against trec_eval and pytrec_eval)."""
    draw = random.Random(56)
    judged, ranked = [], []
    for topic in ("q1", "q2", "q3"):
        docs = [f"d{i}" for i in range(25)]
        judged += [(topic, d, draw.choice((-1, 0, 0, 1, 2, 3))) for d in draw.sample(docs, 18)]
        ranked += [(topic, d, float(20 - i)) for i, d in enumerate(draw.sample(docs, 20))]
    qrels = [ir_measures.Qrel(q, d, g) for q, d, g in judged]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in ranked]
    return (
        qrels,
        run,
        pd.DataFrame(judged, columns=["query_id", "doc_id", "grade"]),
        pd.DataFrame(ranked, columns=["query_id", "doc_id", "score"]),
    )


QRELS, RUN, JUDGED, RANKED = _case()


def _theirs(measure: object) -> dict[str, float] | None:
    """ir_measures' value per topic, or None when ir_measures refuses or cannot compute it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {
                m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], QRELS, RUN)
            }
    except (AssertionError, ValueError, NotImplementedError, subprocess.CalledProcessError):
        return None  # gdeval (ir_measures' ERR) fails on grades below 0; ERR is checked apart


CASES = [(alias, str(measure)) for alias, measure in _names()]


def test_the_registry_is_walked_whole() -> None:
    """Most names are compared by value, not only parsed (the test below returns early for
    the names ir_measures refuses and the measures not offered)."""
    assert len(ir_measures.measures.registry) >= 50
    offered = [
        name
        for alias, name in CASES
        if ir_measures.measures.registry[alias].NAME not in NOT_OFFERED
        and _theirs(ir_measures.parse_measure(name)) is not None
    ]
    assert len(offered) >= 85


@pytest.mark.parametrize(("alias", "name"), CASES)
def test_each_name_ir_measures_computes_parses_and_agrees(alias: str, name: str) -> None:
    measure = ir_measures.parse_measure(name)
    theirs = _theirs(measure)
    if theirs is None:  # ir_measures itself refuses the name (BPM without a cutoff, bare IPrec)
        return
    if ir_measures.measures.registry[alias].NAME in NOT_OFFERED:
        with pytest.raises(InputError):
            parse(name)
        return
    metric = parse(name)
    result = evaluate(JUDGED, RANKED, [metric])
    ours = dict(zip(result.query_ids, result.values[str(metric)], strict=True))
    for query_id, value in theirs.items():
        if math.isnan(value):
            assert math.isnan(ours[query_id]), query_id
        else:
            assert ours[query_id] == pytest.approx(value, abs=1e-5), query_id
