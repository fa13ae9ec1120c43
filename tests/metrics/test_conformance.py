"""Every implemented measure against trec_eval's own outputs, per query and mean, at 4 decimals.

Data: NIST trec_eval test data (usnistgov/trec_eval), see tests/data/trec_eval/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalplat.metrics import Metric, parse
from evalplat.metrics.evaluation import Missing, evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
# trec_eval 10 rounds x·R to the nearest integer for interpolated precision where 9 (and
# pytrec_eval) take ⌊x·R + 0.9⌋; evalplat follows 9, so 10's outputs are read without these
V10_ROUNDING = ("iprec_at_recall_", "11pt_avg")


def read_expected(name: str) -> dict[str, dict[str, str]]:
    """trec_eval output as {measure: {query id or 'all': printed value}}."""
    expected: dict[str, dict[str, str]] = {}
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        measure, query_id, value = line.split("\t")
        expected.setdefault(measure.strip(), {})[query_id] = value.strip()
    return expected


def as_metric(trec_name: str, rel: int) -> Metric | None:
    """Our metric for a trec_eval measure name, or None when we do not implement it."""
    try:
        metric = parse(trec_name)
    except Exception:
        return None
    # trec_eval's -l sets the threshold of the binary measures; graded rbp does not read it
    if rel != 1 and "rel" in metric.spec.params and metric.param("rel") is not None:
        metric = Metric(metric.family, metric.cutoff, **{**metric.params, "rel": rel})
    return metric


def printed(measure: str, value: float) -> str:
    return str(round(value)) if measure in COUNTS else f"{value:.4f}"


CASES = [
    # expected file, qrels, run, relevance level, missing topics, results kept per query (-M)
    ("v9.out.test.aq", "qrels.test", "results.test", 1, "zero", None),
    ("v9.out.test.aqc", "qrels.test", "results.trunc", 1, "zero", None),
    ("v9.out.test.aql", "qrels.rel_level", "results.test", 2, "zero", None),
    ("v9.out.test.meas_params", "qrels.test", "results.test", 1, "zero", None),
    ("edge.out.v9.q.all_trec", "edge.qrels", "edge.run", 1, "zero", None),
    ("edge.out.v9.q.l2.all_trec", "edge.qrels", "edge.run", 2, "zero", None),
    ("edge.missingD.out.v9.qc.all_trec", "edge.qrels", "edge.run.missingD", 1, "zero", None),
    ("302.out.v9.q.all_trec", "qrels-302.test", "results-302.test", 1, "zero", None),
    ("out.test.aq", "qrels.test", "results.test", 1, "zero", None),
    ("out.test.aqc", "qrels.test", "results.trunc", 1, "zero", None),
    ("out.test.aql", "qrels.rel_level", "results.test", 2, "zero", None),
    ("out.test.meas_params", "qrels.test", "results.test", 1, "zero", None),
    ("edge.out.v10.q.all_trec", "edge.qrels", "edge.run", 1, "zero", None),
    ("edge.out.v10.q.l2.all_trec", "edge.qrels", "edge.run", 2, "zero", None),
    ("edge.missingD.out.v10.qc.all_trec", "edge.qrels", "edge.run.missingD", 1, "zero", None),
    ("edge.missingD.out.v9.q.all_trec", "edge.qrels", "edge.run.missingD", 1, "skip", None),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", 1, "skip", None),
    ("v9.out.test.aqcM", "qrels.test", "results.trunc", 1, "zero", 100),
]


@pytest.mark.parametrize(("expected_file", "qrels", "run", "rel", "missing", "max_results"), CASES)
def test_matches_trec_eval(
    expected_file: str, qrels: str, run: str, rel: int, missing: Missing, max_results: int | None
) -> None:
    expected = read_expected(expected_file)
    if ".v9." not in expected_file and not expected_file.startswith("v9."):
        expected = {m: v for m, v in expected.items() if not m.startswith(V10_ROUNDING)}
    wanted = {m: as_metric(m, rel) for m in expected}
    metrics = {m: metric for m, metric in wanted.items() if metric is not None}
    assert len(metrics) >= 3, "the file should exercise several implemented measures"
    result = evaluate(
        DATA / qrels, DATA / run, list(metrics.values()), missing=missing, max_results=max_results
    )
    frame = result.per_query
    got: dict[tuple[str, str], float] = {
        (m, q): v for q, m, v in frame.itertuples(index=False, name=None)
    }
    mismatches = []
    for measure, metric in metrics.items():
        for query_id, value in expected[measure].items():
            if query_id == "all":
                ours = result.means[str(metric)]
            else:
                ours = got.get((str(metric), query_id), float("nan"))
            if printed(measure, ours) != value:
                mismatches.append(f"{measure} {query_id}: trec_eval {value}, ours {ours}")
    assert not mismatches, "\n".join(mismatches[:20])


def test_every_trec_eval_equivalent_is_exercised() -> None:
    """Each registry family with a trec_eval name appears in at least one expected file."""
    seen = set()
    for expected_file, *_ in CASES:
        for measure in read_expected(expected_file):
            metric = as_metric(measure, 1)
            if metric is not None:
                seen.add(metric.family)
    from evalplat.metrics import FAMILIES

    with_trec = {f.name for f in FAMILIES.values() if f.trec_name or f.trec_name_no_cutoff}
    assert with_trec <= seen


def test_missing_topic_without_c_is_left_out_of_the_mean() -> None:
    """trec_eval 9 without -c: D (no results) is not averaged; v10 refuses, we record the option."""
    result = evaluate(DATA / "edge.qrels", DATA / "edge.run.missingD", ["AP"], missing="skip")
    assert result.query_ids == ["A", "B", "C"]
    assert result.options["missing"] == "skip"


def test_run_only_topic_is_ignored_with_a_warning() -> None:
    result = evaluate(DATA / "edge.qrels", DATA / "edge.run", ["P@5"])
    assert "Z" not in result.query_ids
    assert any("Z" in warning for warning in result.warnings)


def test_duplicate_doc_in_run_is_an_input_error_naming_the_line() -> None:
    from evalplat.errors import InputError

    with pytest.raises(InputError) as caught:
        evaluate(DATA / "edge.qrels", DATA / "edge.run.dup", ["AP"])
    assert caught.value.line is not None
    assert "duplicate doc id" in str(caught.value)


PEERS = json.loads((DATA / "edge.peer_values.json").read_text(encoding="utf-8"))

# (peer, peer's measure name, our metric, topics where the semantics agree). ranx breaks score
# ties by insertion order and ir_measures' RR@1 goes through a provider that breaks them by doc
# id ascending; topic A has ties at the top, so those comparisons leave A out.
PEER_CASES = [
    *[("ir_measures", name, name, "ABCD") for name in
      ("AP", "AP@5", "Judged@5", "P(rel=2)@5", "P@5", "R@5", "RR", "Success@1", "nDCG",
       "nDCG@5")],
    ("ir_measures", "RR@1", "RR@1", "BCD"),
    ("ranx", "precision@5", "P@5", "ABCD"),
    ("ranx", "recall@5", "R@5", "ABCD"),
    ("ranx", "map", "AP", "BCD"),
    ("ranx", "map@5", "AP@5", "BCD"),
    ("ranx", "mrr", "RR", "BCD"),
    ("ranx", "mrr@1", "RR@1", "BCD"),
    ("ranx", "hit_rate@1", "Success@1", "BCD"),
    ("ranx", "ndcg", "nDCG", "BCD"),
    ("ranx", "ndcg@5", "nDCG@5", "BCD"),
    ("ranx", "ndcg_burges@5", "nDCG(gain=exp)@5", "BCD"),
]  # fmt: skip


@pytest.mark.parametrize(("peer", "peer_name", "ours", "topics"), PEER_CASES)
def test_agrees_with_peers_where_semantics_agree(
    peer: str, peer_name: str, ours: str, topics: str
) -> None:
    result = evaluate(DATA / "edge.qrels", DATA / "edge.run", [ours])
    values = dict(zip(result.query_ids, result.values[str(parse(ours))], strict=True))
    for topic in topics:
        assert values[topic] == pytest.approx(PEERS[peer][peer_name][topic], abs=1e-6), topic


def test_ties_make_ranx_and_trec_eval_differ_on_topic_a() -> None:
    """The documented disagreement: score ties are broken by doc id descending, not file order."""
    result = evaluate(DATA / "edge.qrels", DATA / "edge.run", ["AP"])
    ours = dict(zip(result.query_ids, result.values["AP"], strict=True))["A"]
    assert ours == pytest.approx(0.584524, abs=1e-6)
    assert PEERS["ranx"]["map"]["A"] != pytest.approx(ours, abs=1e-3)


def test_every_all_trec_measure_of_trec_eval_9_is_computed() -> None:
    """Each name trec_eval 9.0.8's ``-m all_trec`` prints parses, but the run id and relstring."""
    names = set(read_expected("v9.out.test.aq"))
    unknown = {name for name in names if as_metric(name, 1) is None}
    assert unknown == {"runid", "relstring"}


IR_MEASURES_SPELLINGS = [
    "SetP", "SetR", "SetF", "SetAP", "SetRelP", "IPrec@0.5", "infAP", "Judged", "NumRet(rel=1)",
    "nDCG(dcg='exp-log2')@10", "Rprec", "Bpref",
]  # fmt: skip


@pytest.mark.parametrize("name", IR_MEASURES_SPELLINGS)
def test_ir_measures_names_give_ir_measures_values(name: str) -> None:
    """The name as ir_measures spells it, scored by ir_measures and by evalplat per topic (its
    exponential nDCG agrees to 1e-5, the precision its provider keeps)."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels = list(ir_measures.read_trec_qrels(str(DATA / "qrels.test")))
    run = list(ir_measures.read_trec_run(str(DATA / "results.test")))
    theirs = {
        m.query_id: m.value
        for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)
    }
    result = evaluate(DATA / "qrels.test", DATA / "results.test", [name])
    ours = dict(zip(result.query_ids, result.values[str(parse(name))], strict=True))
    assert theirs.keys() == ours.keys()
    for query_id, value in theirs.items():
        assert ours[query_id] == pytest.approx(value, abs=1e-5), query_id
