"""Grade-to-gain maps: ``nDCG(gains={0:0,1:1,2:3,3:10})@10`` and the same for DCG and CG."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.metrics import parse
from evalplat.metrics.evaluation import evaluate
from evalplat.metrics.names import with_default_gains

GAINS = "gains={0:0,1:1,2:3,3:10}"
# One query, ranked grades 3 2 0 1 3 (d0..d4), every document judged.
QRELS = pd.DataFrame(
    {"query_id": "q", "doc_id": [f"d{i}" for i in range(5)], "grade": [3, 2, 0, 1, 3]}
)
RUN = pd.DataFrame(
    {"query_id": "q", "doc_id": [f"d{i}" for i in range(5)], "score": [5.0, 4, 3, 2, 1]}
)


def _value(name: str, qrels: pd.DataFrame = QRELS, run: pd.DataFrame = RUN) -> float:
    return float(evaluate(qrels, run, [name]).means[str(parse(name))])


def test_gain_map_name_is_canonical_and_round_trips() -> None:
    metric = parse("nDCG(gains={3:10.0, 2:3, 1:1, 0:0})@10")
    # identity entries say what the default says; ir_measures prints the same name
    assert str(metric) == "nDCG(gains={2:3,3:10})@10"
    assert parse(str(metric)) == metric == parse(f"nDCG({GAINS})@10")
    assert parse("DCG(gains={2:3.5},judged_only=true)@5").gains == {2: 3.5}
    assert str(parse("CG(gains={0:0,1:1})@5")) == "CG@5"  # an identity map is no map


def test_hand_computed_ndcg_with_a_gain_map() -> None:
    # gains 10 3 0 1 10; DCG@3 = 10/log2(2) + 3/log2(3) = 11.892789
    # ideal gains 10 10 3 1 0; IDCG@3 = 10 + 10/log2(3) + 3/log2(4) = 17.809298
    dcg3 = 10 + 3 / math.log2(3)
    idcg3 = 10 + 10 / math.log2(3) + 3 / 2
    assert _value(f"DCG({GAINS})@3") == pytest.approx(dcg3)
    assert _value(f"nDCG({GAINS})@3") == pytest.approx(dcg3 / idcg3)
    assert round(_value(f"nDCG({GAINS})@3"), 4) == 0.6678
    assert _value(f"CG({GAINS})@5") == pytest.approx(24.0)
    # the map changes the figure: linear gain gives nDCG@3 = 0.7232
    assert round(_value("nDCG@3"), 4) == 0.7232


def test_ideal_ranking_orders_by_mapped_gain_not_grade() -> None:
    # grade 1 is worth more than grade 2 here: the ideal puts the grade-1 document first
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "grade": [2, 1]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    assert _value("nDCG(gains={1:5,2:1})@2", qrels, run) == pytest.approx(1.0)
    assert _value("nDCG@2", qrels, run) < 1.0


def test_unmapped_grades_keep_their_grade_as_gain() -> None:
    assert _value("CG(gains={3:10})@5") == pytest.approx(10 + 2 + 0 + 1 + 10)


def test_gain_map_agrees_with_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = pd.DataFrame(
        {
            "query_id": ["a"] * 5 + ["b"] * 3 + ["c"] * 2,
            "doc_id": ["d0", "d1", "d2", "d3", "d4", "e0", "e1", "e2", "f0", "f1"],
            "grade": [3, 2, 0, 1, 3, 1, 0, 2, 0, 0],
        }
    )
    run = pd.DataFrame(
        {
            "query_id": ["a"] * 5 + ["b"] * 4 + ["c"],
            "doc_id": ["d0", "d1", "d2", "d3", "d4", "x", "e2", "e0", "e1", "f0"],
            "score": [5.0, 4, 3, 2, 1, 4, 3, 2, 1, 1],
        }
    )
    names = [f"nDCG({GAINS})@3", f"nDCG({GAINS})", "nDCG(gains={1:4,2:2,3:7})@10"]
    ours = evaluate(qrels, run, names)
    peer_qrels = {
        q: dict(zip(g.doc_id, map(int, g.grade), strict=True)) for q, g in qrels.groupby("query_id")
    }
    peer_run = {q: dict(zip(g.doc_id, g.score, strict=True)) for q, g in run.groupby("query_id")}
    for name in names:
        measure = ir_measures.parse_measure(name)
        assert str(measure) == str(parse(name))  # the same canonical spelling
        peer = {m.query_id: m.value for m in ir_measures.iter_calc([measure], peer_qrels, peer_run)}
        values = dict(zip(ours.query_ids, ours.values[str(parse(name))], strict=True))
        for query_id, value in peer.items():
            assert values[query_id] == pytest.approx(value, abs=1e-9), (name, query_id)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("nDCG(gains={a:1})@10", "is not grade:gain"),
        ("nDCG(gains={1.5:1})@10", "is not grade:gain"),
        ("nDCG(gains={1:-1})@10", "finite and ≥ 0"),
        ("nDCG(gains={1:1,1:2})@10", "names grade 1 twice"),
        ("nDCG(gains=3)@10", "must be a map"),
        ("nDCG(gain=exp,gains={1:5})@10", "not both"),
        ("P(gains={1:2})@10", "takes no parameter 'gains'"),
    ],
)
def test_bad_gain_maps_are_input_errors_naming_the_metric(name: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(name)
    assert problem in str(caught.value)
    assert name.split("(")[0] in str(caught.value)


def test_default_gain_map_applies_to_gain_measures_without_their_own() -> None:
    gains = ((2, 3), (3, 10))
    assert str(with_default_gains(parse("nDCG@10"), gains)) == "nDCG(gains={2:3,3:10})@10"
    assert str(with_default_gains(parse("nDCG(gains={1:2})@10"), gains)) == "nDCG(gains={1:2})@10"
    assert str(with_default_gains(parse("nDCG(gain=exp)@10"), gains)) == "nDCG(gain=exp)@10"
    assert str(with_default_gains(parse("P@10"), gains)) == "P@10"
