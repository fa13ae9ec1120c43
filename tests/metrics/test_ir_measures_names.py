"""Every measure ir_measures registers, under the names ir_measures itself prints: each name
ir_measures computes parses here and gives ir_measures' values, but the one measure evalplat
does not offer, which it refuses by name. The intent-aware measures are compared on diversity
qrels (a subtopic per judgment) through ir_measures' pyndeval provider.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import subprocess
import warnings
from collections.abc import Iterator

import pandas as pd
import pytest

from evalplat.metrics import parse
from evalplat.metrics.evaluation import evaluate

ir_measures = pytest.importorskip("ir_measures")

# a representative value of each parameter ir_measures declares
SAMPLE: dict[str, object] = {
    "rel": 2, "judged_only": True, "p": 0.8, "T": 2, "min_rel": 1, "max_rel": 3, "beta": 0.5,
    "gains": {0: 0, 1: 1, 2: 3}, "dcg": "exp-log2", "recall": 0.5, "relative": True,
    "normalize": False, "alpha": 0.6,
}  # fmt: skip
# measures whose persistence defaults to 0.8 in ir_measures and to trec_eval's 0.9 here: a name
# without one is compared with ir_measures' persistence written out
PERSISTENCE_08 = ("RBP",)
# ndeval's measures, which read the subtopic of each judgment
INTENT_AWARE = ("ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP", "AP_IA", "P_IA",
                "StRecall")  # fmt: skip


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


def _diversity_case(seed: int) -> tuple[list[object], list[object], pd.DataFrame, pd.DataFrame]:
    """Diversity qrels and a run: one to six subtopics a topic, a document judged for several
    subtopics, negative, zero and graded judgments, a topic with no relevant judgment (q0),
    unjudged documents, runs of 1 to 60 documents with tied scores. ir_measures gets the run in
    evalplat's order (ties by doc id descending, trec_eval's) as distinct scores: pyndeval
    breaks ties the other way, which the measures' notes say."""
    draw = random.Random(seed)
    judged, ranked = [], []
    for number in range(6):
        topic, docs = f"q{number}", [f"d{i:02d}" for i in range(70)]
        for subtopic in range(1, draw.choice((1, 2, 3, 4, 6)) + 1):
            for doc in draw.sample(docs, draw.randint(2, 30)):
                grade = draw.choice((-1, 0, 0, 1, 1, 2, 3)) if number else 0
                judged.append((topic, subtopic, doc, grade))
        ranked += [(topic, d, float(draw.randint(0, 15)))
                   for d in draw.sample(docs, draw.randint(1, 60))]  # fmt: skip
    ours = pd.DataFrame(ranked, columns=["query_id", "doc_id", "score"])
    order = ours.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False])
    order = order.assign(score=-order.groupby("query_id").cumcount().astype(float))
    return (
        [ir_measures.Qrel(q, d, g, str(s)) for q, s, d, g in judged],
        [ir_measures.ScoredDoc(q, d, s) for q, d, s in order.itertuples(index=False)],
        pd.DataFrame(judged, columns=["query_id", "subtopic", "doc_id", "grade"]),
        ours,
    )


DIVERSITY = _diversity_case(56)


def _theirs(measure: object, qrels: list[object] = QRELS, run: list[object] = RUN
            ) -> dict[str, float] | None:  # fmt: skip
    """ir_measures' value per topic, or None when ir_measures refuses or cannot compute it."""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")  # and pyndeval's warning of one subtopic a topic
            return {
                m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)
            }
    except (AssertionError, ValueError, NotImplementedError, subprocess.CalledProcessError):
        return None  # gdeval (ir_measures' ERR) fails on grades below 0; ERR is checked apart
    except TypeError:  # ir_measures' judged_only filter for pyndeval fails on every input
        return None


def _agree(name: str, case: tuple[list[object], list[object], pd.DataFrame, pd.DataFrame]
           ) -> int:  # fmt: skip
    """Assert evalplat's value of ``name`` is ir_measures' for each topic ir_measures scores;
    the number of topics compared (0 when ir_measures refuses the name)."""
    qrels, run, judged, ranked = case
    theirs = _theirs(ir_measures.parse_measure(name), qrels, run)
    if theirs is None:
        return 0
    metric = parse(name)
    result = evaluate(judged, ranked, [metric])
    ours = dict(zip(result.query_ids, result.values[str(metric)], strict=True))
    for query_id, value in theirs.items():
        if math.isnan(value):  # ndeval's nNRBP of a topic without a relevant subtopic is 0/0,
            assert ours[query_id] == 0.0, name  # which scores 0 here, as every measure does
        else:
            assert ours[query_id] == pytest.approx(value, abs=1e-5), (name, query_id)
    return len(theirs)


def _params_of(name: str) -> list[str]:
    """The ``key=value`` parameters written in an ir_measures name."""
    inside = name.partition("(")[2].partition(")")[0]
    return [part for part in inside.split(",") if part]


CASES = [(alias, str(measure)) for alias, measure in _names()]


def test_the_registry_is_walked_whole() -> None:
    """Most names are compared by value, not only parsed (the test below returns early for
    the names ir_measures refuses and the measure not offered)."""
    assert len(ir_measures.measures.registry) >= 50
    offered = [
        name
        for alias, name in CASES
        if ir_measures.measures.registry[alias].NAME not in INTENT_AWARE
        and _theirs(ir_measures.parse_measure(name)) is not None
    ]
    assert len(offered) >= 85
    intent_aware = [
        name
        for alias, name in CASES
        if ir_measures.measures.registry[alias].NAME in INTENT_AWARE
        and _theirs(ir_measures.parse_measure(name), *DIVERSITY[:2]) is not None
    ]
    assert len(intent_aware) >= 20


@pytest.mark.parametrize(("alias", "name"), CASES)
def test_each_name_ir_measures_computes_parses_and_agrees(alias: str, name: str) -> None:
    measure = ir_measures.parse_measure(name)
    if ir_measures.measures.registry[alias].NAME in INTENT_AWARE:
        if _agree(name, DIVERSITY) == 0 and "@" in name:
            parse(name)  # ir_measures fails on judged_only=true; the name parses here
        return
    theirs = _theirs(measure)
    if theirs is None:  # ir_measures itself refuses the name (BPM without a cutoff, bare IPrec)
        return
    metric = parse(name)
    if measure.NAME in PERSISTENCE_08 and "p" not in measure.params:
        metric = parse(f"{measure.NAME}({','.join(['p=0.8', *_params_of(name)])})"
                       + (f"@{metric.cutoff}" if metric.cutoff else ""))  # fmt: skip
    result = evaluate(JUDGED, RANKED, [metric])
    ours = dict(zip(result.query_ids, result.values[str(metric)], strict=True))
    for query_id, value in theirs.items():
        if math.isnan(value):
            assert math.isnan(ours[query_id]), query_id
        else:
            assert ours[query_id] == pytest.approx(value, abs=1e-5), query_id


# ndeval's measures at cutoffs up to its deepest (20), with other alphas, betas and thresholds,
# each on diversity cases of several seeds
INTENT_AWARE_NAMES = ("ERR_IA@5", "ERR_IA@20", "nERR_IA@10", "nERR_IA(rel=2)@20", "alpha_DCG@10",
                      "alpha_DCG(alpha=0.3)@20", "alpha_nDCG@20", "alpha_nDCG(alpha=0.6)@20",
                      "alpha_nDCG(alpha=0.7)@17", "NRBP", "NRBP(beta=0.9)", "nNRBP",
                      "nNRBP(alpha=0.3,beta=0.8)", "AP_IA", "MAP_IA(rel=2)", "P_IA@20",
                      "P_IA(rel=3)@7", "StRecall@5", "StRecall(rel=2)@20")  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
def test_the_intent_aware_measures_agree_with_ndeval_on_diversity_qrels(seed: int) -> None:
    case = _diversity_case(seed)
    assert sum(_agree(name, case) for name in INTENT_AWARE_NAMES) >= 6 * len(INTENT_AWARE_NAMES)


def test_at_one_ndeval_leaves_err_ia_and_alpha_dcg_undivided_where_evalplat_divides() -> None:
    """The one documented difference of value: a first document covering one of two
    subtopics is 1 in ndeval at k = 1 (undivided by N = 2) and 1/2 here, as at every k."""
    qrels = [ir_measures.Qrel("q", "a", 1, "1"), ir_measures.Qrel("q", "b", 1, "2")]
    run = [ir_measures.ScoredDoc("q", "a", 1.0)]
    judged = pd.DataFrame([("q", 1, "a", 1), ("q", 2, "b", 1)],
                          columns=["query_id", "subtopic", "doc_id", "grade"])  # fmt: skip
    ranked = pd.DataFrame([("q", "a", 1.0)], columns=["query_id", "doc_id", "score"])
    for name in ("ERR_IA@1", "alpha_DCG@1"):
        assert _theirs(ir_measures.parse_measure(name), qrels, run) == {"q": 1.0}
        assert evaluate(judged, ranked, [name]).means[name] == 0.5
    assert _agree("ERR_IA@2", (qrels, run, judged, ranked)) == 1


@pytest.mark.parametrize(
    "name", ["RBP(rel=1)", "RBP(rel=3)", "RBP(rel=2,p=0.5)", "RBP(rel=1,p=0.95)"]
)
def test_binary_rbp_is_ir_measures_rbp_at_a_grade(name: str) -> None:
    """ir_measures' ``RBP(rel=k)``: gain 1 from grade k up, its persistence 0.8 unless given."""
    ours = name if "p=" in name else name.replace("(", "(p=0.8,")
    assert _agree_as(ours, name) == 3
    assert parse(name).params["rel"] == int(name.split("rel=")[1][0])


def _agree_as(ours: str, theirs: str) -> int:
    measure = ir_measures.parse_measure(theirs)
    values = _theirs(measure)
    assert values is not None, theirs
    metric = parse(ours)
    result = evaluate(JUDGED, RANKED, [metric])
    mine = dict(zip(result.query_ids, result.values[str(metric)], strict=True))
    for query_id, value in values.items():
        assert mine[query_id] == pytest.approx(value, abs=1e-9), query_id
    return len(values)
