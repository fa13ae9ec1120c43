"""ir_measures' own measures (the C/W/L family it computes through cwl_eval, Compat and
Accuracy) against ir_measures itself, per topic, to 1e-9.

ir_measures breaks score ties by the order of the run (Compat by doc id ascending), evalplat
by doc id descending as trec_eval does. ir_measures is therefore given evalplat's ranking, with
distinct positive scores in its order: the comparison is of the measures on the same rankings,
ties included, not of two tie-breaking rules. Data: trec_eval's conformance files
(tests/data/trec_eval/README.md) and a seeded random set with -1 grades, unjudged documents,
ties, a topic missing from the run and a ranking longer than cwl_eval's 1000-document depth.
"""

from __future__ import annotations

import logging
import math
import random
from pathlib import Path

import pytest

from evalplat.metrics import parse
from evalplat.metrics.evaluation import evaluate

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl", reason="ir_measures computes the C/W/L measures with cwl-eval")

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
TOLERANCE = 1e-9


def measures(max_rel: int) -> list[str]:
    """The names as ir_measures spells them (its float parameters written as floats)."""
    cwl = [
        "SDCG({})@5", "SDCG(dcg='log2',{})@10", "SDCG({})@2000", "NERR8({})@1", "NERR8({})@10",
        "NERR9({})@20", "NERR10({})", "NERR10(p=0.5,{})", "NERR11({})", "NERR11(T=2.0,{})",
        "INST({})", "INST(T=0.5,{})", "INST(T=3.0,{})", "INSQ({})", "INSQ(T=2.0,{})",
        "BPM({})@10", "BPM(T=2.0,{})@100", "BPM(T=1000.0,{})@10",
    ]  # fmt: skip
    names = [name.format(f"max_rel={max_rel}") for name in cwl]
    if max_rel > 1:
        names += [f"NERR10(min_rel=1,max_rel={max_rel})", f"INST(min_rel=1,max_rel={max_rel})"]
    return [*names, "Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Accuracy",
            "Accuracy@100", "Accuracy(rel=2)@10"]  # fmt: skip


CONFORMANCE = [
    # qrels, run, the top grade of the qrels' scale
    ("qrels.test", "results.test", 1),
    ("qrels.rel_level", "results.test", 4),
    ("qrels.test", "results.trunc", 1),
    ("qrels-302.test", "results-302.test", 1),
    ("qrels.comment.test", "results.comment.test", 3),
    ("edge.qrels", "edge.run", 3),
    ("edge.qrels", "edge.run.missingD", 3),
]


def read_run(path: Path) -> list[tuple[str, str, float]]:
    """(query id, doc id, score) of a TREC run file; extra fields after the run id ignored."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 6:
            rows.append((fields[0], fields[2], float(fields[4])))
    return rows


def as_ranked(rows: list[tuple[str, str, float]]) -> list[object]:
    """The run as evalplat ranks it (score descending, ties by doc id descending in byte
    order), scored n, n - 1, ... 1 per query for ir_measures."""
    by_query: dict[str, list[tuple[float, str]]] = {}
    for query_id, doc_id, score in rows:
        by_query.setdefault(query_id, []).append((score, doc_id))
    ranked = []
    for query_id, docs in by_query.items():
        docs.sort(key=lambda d: (d[0], d[1].encode()), reverse=True)
        for position, (_, doc_id) in enumerate(docs):
            ranked.append(ir_measures.ScoredDoc(query_id, doc_id, float(len(docs) - position)))
    return ranked


def theirs(names: list[str], qrels: list[object], run: list[object]) -> dict[str, dict[str, float]]:
    """ir_measures' values per topic (NaN where it gives none)."""
    logging.getLogger("ir_measures").setLevel(logging.ERROR)  # its max_rel advice per call
    values: dict[str, dict[str, float]] = {name: {} for name in names}
    together = [name for name in names if not name.startswith("Accuracy")]
    parsed = {ir_measures.parse_measure(name): name for name in together}
    for metric in ir_measures.iter_calc(list(parsed), qrels, run):
        values[parsed[metric.measure]][metric.query_id] = float(metric.value)
    for name in names:
        if name.startswith("Accuracy"):
            values[name] = accuracy(ir_measures.parse_measure(name), qrels, run)
    return values


def accuracy(measure: object, qrels: list[object], run: list[object]) -> dict[str, float]:
    """ir_measures' Accuracy asked alone and topic by topic: beside other measures it fills the
    topics it leaves out with 0, and it divides by zero on a topic whose top k is all relevant
    (no value here, as in evalplat)."""
    values = {}
    for query_id in {q.query_id for q in qrels}:
        topic_qrels = [q for q in qrels if q.query_id == query_id]
        topic_run = [d for d in run if d.query_id == query_id]
        try:
            found = list(ir_measures.iter_calc([measure], topic_qrels, topic_run))
        except ZeroDivisionError:
            found = []
        values[query_id] = float(found[0].value) if found else math.nan
    return values


def assert_agrees(qrels_path: Path, run_path: Path, names: list[str]) -> None:
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    expected = theirs(names, qrels, as_ranked(read_run(run_path)))
    result = evaluate(qrels_path, run_path, names)
    mismatches = []
    for name in names:
        metric = str(parse(name))
        ours = dict(zip(result.query_ids, result.values[metric], strict=True))
        for query_id, value in ours.items():
            want = expected[name].get(query_id, math.nan)
            if not (abs(value - want) <= TOLERANCE or (math.isnan(value) and math.isnan(want))):
                mismatches.append(f"{name} {query_id}: ir_measures {want}, ours {value}")
        known = [v for v in expected[name].values() if not math.isnan(v)]
        mean = sum(known) / len(known) if known else 0.0
        if abs(result.means[metric] - mean) > TOLERANCE:
            mismatches.append(f"{name} mean: ir_measures {mean}, ours {result.means[metric]}")
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize(("qrels", "run", "max_rel"), CONFORMANCE)
def test_agrees_with_ir_measures_on_trec_eval_files(qrels: str, run: str, max_rel: int) -> None:
    assert_agrees(DATA / qrels, DATA / run, measures(max_rel))


def write_random_case(folder: Path, seed: int) -> tuple[Path, Path]:
    """Graded qrels (-1 to 3) and a run with ties, unjudged documents, a topic without
    relevant judgments, a topic missing from the run and one ranking of 1,200 documents."""
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for topic in range(12):
        docs = [f"d{topic}-{i}" for i in range(rng.randint(3, 40))]
        for doc in rng.sample(docs, k=len(docs) * 2 // 3):
            grade = 0 if topic == 3 else rng.choice((-1, 0, 0, 1, 1, 2, 3))
            qrels_lines.append(f"t{topic} 0 {doc} {grade}")
        if topic == 5:
            continue  # judged, never retrieved
        ranked = docs + [f"x{topic}-{i}" for i in range(1200 if topic == 7 else 10)]
        for doc in rng.sample(ranked, k=len(ranked) if topic == 7 else rng.randint(1, len(ranked))):
            score = rng.choice((1.0, 2.0, 2.0, 3.5, rng.uniform(0, 5)))  # ties on purpose
            run_lines.append(f"t{topic} Q0 {doc} 0 {score!r} run")
    (qrels_path := folder / "qrels").write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    (run_path := folder / "run").write_text("\n".join(run_lines) + "\n", encoding="utf-8")
    return qrels_path, run_path


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_agrees_with_ir_measures_on_random_graded_cases(tmp_path: Path, seed: int) -> None:
    qrels, run = write_random_case(tmp_path, seed)
    assert_agrees(qrels, run, measures(3))


def test_accuracy_without_a_non_relevant_document_is_unknown_and_left_out() -> None:
    """ir_measures divides by zero there; evalplat has no value and leaves the topic out."""
    import pandas as pd

    qrels = pd.DataFrame(
        {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "y"], "grade": [1, 1, 1, 0]}
    )
    run = pd.DataFrame(
        {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "y", "x"], "score": [2.0, 1, 2, 1]}
    )
    result = evaluate(qrels, run, ["Accuracy"])
    values = dict(zip(result.query_ids, result.values["Accuracy"], strict=True))
    assert math.isnan(values["a"]) and values["b"] == 0.0
    assert result.means["Accuracy"] == 0.0


def test_ir_measures_spellings_parse_to_canonical_names() -> None:
    assert str(parse("NERR10(p=0.8,max_rel=3)")) == "NERR10(max_rel=3,persist=0.8)"
    assert str(parse("Compat(p=0.95)")) == "Compat"  # Compat's own default persistence
    assert str(parse("Compat(p=0.9)")) == "Compat(persist=0.9)"
    assert str(parse("BPM(T=1000,max_rel=3)@10")) == "BPM(T=1000,max_rel=3)@10"
    assert str(parse("INST(T=1.0,max_rel=2)")) == "INST(max_rel=2)"
    assert parse("SDCG(dcg='log2',max_rel=3)@10") == parse("SDCG(max_rel=3)@10")
    for name in ("SDCG(max_rel=3)@10", "NERR8(max_rel=1)@5", "Accuracy(rel=2)@5"):
        assert parse(str(parse(name))) == parse(name)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("SDCG@10", "needs the parameter 'max_rel'"),
        ("NERR10(max_rel=3)@10", "takes no cutoff"),
        ("NERR8(max_rel=3)", "needs a cutoff"),
        ("INST(min_rel=2,max_rel=2)", "min_rel must be below max_rel"),
        ("SDCG(dcg='exp-log2',max_rel=3)@10", "SDCG's dcg can only be log2"),
    ],
)
def test_c_w_l_names_without_what_ir_measures_requires_are_refused(name: str, problem: str) -> None:
    from evalplat.errors import InputError

    with pytest.raises(InputError, match=problem):
        parse(name)
