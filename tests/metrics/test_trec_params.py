"""trec_eval's measure parameters (``-m P.5,7,3``, ``-m 11pt_avg..25,.5,.75``, ``set_F.0.5``)
against trec_eval 9.0.8's output and pytrec_eval, which embeds trec_eval.

Data: NIST trec_eval test data (usnistgov/trec_eval), see tests/data/trec_eval/README.md.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.metrics import parse, parse_all
from evalplat.metrics.evaluation import evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
Cli = Callable[..., Any]  # the ``cli`` fixture (tests/conftest.py)


def test_trec_evals_parameter_test_gives_its_values(cli: Cli) -> None:
    """trec_eval's own ``out.test.meas_params`` command line, every ``-m`` as typed there but
    ``ndcg_cut.10,20,23.4`` (a fractional cutoff, refused here; trec_eval truncates it to 23)."""
    measures = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000",
                "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
                "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23", "success.2,5,20"]  # fmt: skip
    result = cli(
        *["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.test"),
         "-q", "--format", "trec", *[f"-m{m}" for m in measures]],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    expected = (DATA / "v9.out.test.meas_params").read_text(encoding="utf-8").splitlines()
    # trec_eval prints the levels as typed, evalplat in its canonical spelling; nDCG with a
    # gain map has no trec_eval name here and is printed under evalplat's
    renamed = {"11pt_avg_.25,.5,.75": "11pt_avg_0.25,0.5,0.75",
               "ndcg_1=3,2=9,4=4.5": "nDCG(gains={1:3,2:9,4:4.5})"}  # fmt: skip
    wanted = []
    for line in expected:
        name, rest = line.split("\t", 1)
        wanted.append(f"{renamed.get(name.strip(), name.strip()):<22}\t{rest}")
    assert len(wanted) == 22 * 4
    assert sorted(result.stdout.splitlines()) == sorted(wanted)


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("11pt_avg.0.2,0.5,0.8", "IPrecAvg(levels={0.2,0.5,0.8})"),
        ("11pt_avg..25,.5,.75", "IPrecAvg(levels={0.25,0.5,0.75})"),
        ("11pt_avg_0.25,0.5,0.75", "IPrecAvg(levels={0.25,0.5,0.75})"),
        ("IPrecAvg(levels={0,.5,1})", "IPrecAvg(levels={0,0.5,1})"),
        ("11pt_avg.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1", "IPrecAvg"),
        ("set_F.0.5", "SetF(beta=0.5)"),
        ("set_F_0.5", "SetF(beta=0.5)"),
        ("iprec_at_recall_.10", "IPrec(recall=0.1)"),
    ],
)
def test_trec_eval_parameter_spellings_parse(written: str, canonical: str) -> None:
    metric = parse(written)
    assert str(metric) == canonical
    assert parse(str(metric)) == metric
    assert parse(metric.trec_name or "") == metric


def test_a_trec_eval_list_is_one_metric_per_value() -> None:
    names = ["P.5,7,3", "iprec_at_recall..10,.25", "Rprec_mult.0.5,2", "nDCG(gain=exp)@10"]
    assert [str(m) for m in parse_all(names)] == [
        "P@5", "P@7", "P@3", "IPrec(recall=0.1)", "IPrec(recall=0.25)", "Rprec(mult=0.5)",
        "Rprec(mult=2)", "nDCG(gain=exp)@10",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("written", "problem"),
    [
        ("11pt_avg.0.5,0.2", "increasing order"),
        ("IPrecAvg(levels={0.2,1.5})", "1.5 is not a number from 0 to 1"),
        ("IPrecAvg(levels=0.2)", "must be a list"),
    ],
)
def test_bad_recall_levels_are_refused(written: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        parse(written)


# pytrec_eval's spelling of each parameterised measure, and the names it reports them under
PARAMETERISED = {
    "P.3,7": {"P_3": "P@3", "P_7": "P@7"},
    "recall.3,7": {"recall_3": "R@3", "recall_7": "R@7"},
    "iprec_at_recall.0.25,0.33": {"iprec_at_recall_0.25": "IPrec@0.25",
                                  "iprec_at_recall_0.33": "IPrec@0.33"},
    "11pt_avg.0.2,0.5,0.8": {"11pt_avg": "IPrecAvg(levels={0.2,0.5,0.8})"},
    "Rprec_mult.0.5,3.0": {"Rprec_mult_0.50": "Rprec(mult=0.5)",
                           "Rprec_mult_3.00": "Rprec(mult=3)"},
    "ndcg_cut.3,7": {"ndcg_cut_3": "nDCG@3", "ndcg_cut_7": "nDCG@7"},
    "map_cut.3,7": {"map_cut_3": "AP@3", "map_cut_7": "AP@7"},
    "relative_P.3,7": {"relative_P_3": "RelP@3", "relative_P_7": "RelP@7"},
    "success.2,3": {"success_2": "Success@2", "success_3": "Success@3"},
    "set_F.0.5": {"set_F": "SetF(beta=0.5)"},
}  # fmt: skip


def _case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    draw = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(draw.randint(1, 6)):
        docs = [f"d{i}" for i in range(draw.randint(2, 30))]
        judged = draw.sample(docs, draw.randint(1, len(docs)))
        qrels[f"q{t}"] = {doc: draw.choice((-1, 0, 0, 1, 1, 2, 3)) for doc in judged}
        ranked = draw.sample(docs, draw.randint(1, len(docs)))
        run[f"q{t}"] = {doc: float(draw.randint(0, 5)) for doc in ranked}  # ties
    return qrels, run


@pytest.mark.parametrize("seed", range(10))
def test_parameterised_measures_agree_with_pytrec_eval(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _case(seed)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(PARAMETERISED)).evaluate(run)
    names = {trec: ours for each in PARAMETERISED.values() for trec, ours in each.items()}
    judged = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                          columns=["query_id", "doc_id", "grade"])  # fmt: skip
    ranked = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                          columns=["query_id", "doc_id", "score"])  # fmt: skip
    result = evaluate(judged, ranked, list(names.values()))
    mismatches = []
    for trec, ours in names.items():
        values = dict(zip(result.query_ids, result.values[str(parse(ours))], strict=True))
        for query_id in qrels:
            expected = theirs[query_id][trec]
            if math.isnan(expected):  # relative_P without relevant documents: nan there, 0 here
                assert values[query_id] == 0.0
            elif f"{values[query_id]:.4f}" != f"{expected:.4f}":
                mismatches.append(f"{trec} {query_id}: {expected} vs {values[query_id]}")
    assert not mismatches, "\n".join(mismatches[:20])
