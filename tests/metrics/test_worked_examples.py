"""Hand-checked examples, including ERR and AUC which trec_eval does not compute."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.metrics import parse
from evalplat.metrics.evaluation import evaluate


def _frames(grades: list[int], extra_judgments: dict[str, int] | None = None
            ) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """A one-query run ranking docs d0..dn with the given grades (scores strictly falling)."""
    docs = [f"d{i}" for i in range(len(grades))]
    judged = dict(zip(docs, grades, strict=True)) | (extra_judgments or {})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": list(judged), "grade": list(judged.values())})
    run = pd.DataFrame(
        {"query_id": "q", "doc_id": docs, "score": [10.0 - i for i in range(len(docs))]}
    )
    return qrels, run


def _value(qrels: pd.DataFrame, run: pd.DataFrame, name: str) -> float:
    result = evaluate(qrels, run, [name])
    return float(result.means[str(parse(name))])


BINARY = [1, 0, 1, 0, 1]  # R N R N R, 3 relevant in total


@pytest.mark.parametrize(("k", "expected"), [(1, 1.0), (2, 0.5), (3, 0.6667), (4, 0.5), (5, 0.6)])
def test_binary_example_precision(k: int, expected: float) -> None:
    assert round(_value(*_frames(BINARY), f"P@{k}"), 4) == expected


@pytest.mark.parametrize(
    ("k", "expected"), [(1, 0.3333), (2, 0.3333), (3, 0.6667), (4, 0.6667), (5, 1.0)]
)
def test_binary_example_recall(k: int, expected: float) -> None:
    assert round(_value(*_frames(BINARY), f"R@{k}"), 4) == expected


def test_binary_example_average_precision() -> None:
    assert round(_value(*_frames(BINARY), "AP"), 4) == 0.7556


# Graded [3, 2, 3, 0, 1], ideal from grades {3, 3, 2, 1}, linear gain. The seed example printed
# 0.9777 at k=3 and 0.9723 at k=5: those are truncations; rounded they are 0.9778 and 0.9724
# (0.977781 and 0.972364).
@pytest.mark.parametrize(
    ("k", "expected"), [(1, 1.0), (2, 0.8710), (3, 0.9778), (4, 0.9112), (5, 0.9724)]
)
def test_graded_example_ndcg(k: int, expected: float) -> None:
    qrels, run = _frames([3, 2, 3, 0, 1])
    assert round(_value(qrels, run, f"nDCG@{k}"), 4) == expected


def test_exp_gain_uses_two_to_the_grade_minus_one() -> None:
    qrels, run = _frames([1, 3])
    dcg = 1 / math.log2(2) + 7 / math.log2(3)
    ideal = 7 / math.log2(2) + 1 / math.log2(3)
    assert _value(qrels, run, "nDCG(gain=exp)@2") == pytest.approx(dcg / ideal)


def test_err_follows_the_cascade_formula_with_gmax_from_the_qrels() -> None:
    # grades 2, 0, 1 with gmax 2 (the highest grade judged): p = 3/4, 0, 1/4
    qrels, run = _frames([2, 0, 1])
    expected = 0.75 / 1 + 0 + (0.25 / 3) * (1 - 0.75) * 1
    assert _value(qrels, run, "ERR(gmax=qrels)@3") == pytest.approx(expected)
    assert _value(qrels, run, "ERR(gmax=qrels)@1") == pytest.approx(0.75)


def test_err_defaults_to_gmax_4_as_gdeval_and_ir_measures() -> None:
    # same grades with gmax 4: p = 3/16, 0, 1/16
    qrels, run = _frames([2, 0, 1])
    expected = 3 / 16 + (1 / 16 / 3) * (1 - 3 / 16)
    assert _value(qrels, run, "ERR@3") == pytest.approx(expected)
    assert _value(qrels, run, "ERR(gmax=4)@3") == pytest.approx(expected)
    assert str(parse("ERR(gmax=4)@3")) == "ERR@3"
    assert str(parse("ERR(gmax=QRELS)@3")) == "ERR(gmax=qrels)@3"
    assert str(parse("ERR(gmax=3)@3")) == "ERR(gmax=3)@3"
    with pytest.raises(InputError, match="gmax must be an integer"):
        parse("ERR(gmax=max)@3")


def test_auc_counts_ordered_pairs_and_half_ties_among_unretrieved() -> None:
    # ranking R N R; unretrieved: one relevant (r9) and one non-relevant (n9)
    qrels, run = _frames([1, 0, 1], {"r9": 1, "n9": 0})
    # relevant d0: above d1 and n9 -> 2; d2: above n9 -> 1; r9 vs n9 tie -> 0.5
    assert _value(qrels, run, "AUC") == pytest.approx((2 + 1 + 0.5) / (3 * 2))


def test_f1_is_the_harmonic_mean_of_precision_and_recall() -> None:
    qrels, run = _frames(BINARY)
    p, r = 2 / 3, 2 / 3
    assert _value(qrels, run, "F1@3") == pytest.approx(2 * p * r / (p + r))


def test_judged_only_drops_unjudged_documents_before_ranking() -> None:
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "grade": [1, 1]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["x", "a", "y", "b"], "score": [4.0, 3, 2, 1]})
    assert _value(qrels, run, "P@2") == 0.5
    assert _value(qrels, run, "P(judged_only=true)@2") == 1.0


def test_weighted_mean_uses_query_weights() -> None:
    qrels = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d", "d"], "grade": [1, 1]})
    run = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d", "x"], "score": [1.0, 1.0]})
    result = evaluate(qrels, run, ["P@1"], weights={"a": 3.0, "b": 1.0})
    assert result.means["P@1"] == pytest.approx(0.75)
    assert result.options["weighted"] is True


def test_given_ordering_keeps_the_engine_rank() -> None:
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a"], "grade": [1]})
    run = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 2]})
    assert evaluate(qrels, run, ["RR"], ordering="given").means["RR"] == 1.0
    assert evaluate(qrels, run, ["RR"]).means["RR"] == 0.5


def test_exclude_no_relevant_drops_topics_without_relevant_judgments() -> None:
    qrels = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d", "d"], "grade": [1, 0]})
    run = pd.DataFrame({"query_id": ["a", "b"], "doc_id": ["d", "d"], "score": [1.0, 1.0]})
    assert evaluate(qrels, run, ["P@1"]).means["P@1"] == 0.5
    result = evaluate(qrels, run, ["P@1"], exclude_no_relevant=True)
    assert result.means["P@1"] == 1.0
    assert result.query_ids == ["a"]


def test_topics_missing_from_the_run_score_zero_and_count() -> None:
    qrels = pd.DataFrame({"query_id": ["a"], "doc_id": ["d"], "grade": [1]})
    run = pd.DataFrame({"query_id": ["a"], "doc_id": ["d"], "score": [1.0]})
    result = evaluate(qrels, run, ["P@1", "NumQ"], topics=["a", "b"])
    assert result.means["P@1"] == 0.5
    assert result.means["NumQ"] == 2


def test_duplicate_doc_in_a_dataframe_run_is_an_input_error() -> None:
    from evalplat.errors import InputError

    qrels = pd.DataFrame({"query_id": ["a"], "doc_id": ["d"], "grade": [1]})
    run = pd.DataFrame({"query_id": ["a", "a"], "doc_id": ["d", "d"], "score": [1.0, 0.5]})
    with pytest.raises(InputError, match="duplicate doc id"):
        evaluate(qrels, run, ["P@1"])


def test_to_frame_ends_with_the_means() -> None:
    qrels, run = _frames(BINARY)
    frame = evaluate(qrels, run, ["P@1", "AP"]).to_frame()
    assert list(frame.columns) == ["query_id", "metric", "value"]
    assert frame.tail(2)["query_id"].tolist() == ["all", "all"]


def test_fingerprint_collisions_fall_back_to_the_exact_join(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Forcing every doc id to one fingerprint must not change a single value."""
    import numpy as np

    from evalplat.metrics.doc_keys import StringColumn

    data = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
    names = ["AP", "P@10", "nDCG@10", "Bpref", "NumRelRet"]
    expected = evaluate(data / "qrels.test", data / "results.test", names).means

    def one_fingerprint(
        self: StringColumn, salt: object = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        result = np.zeros(len(self.starts), np.uint64) if out is None else out
        result[...] = 0
        return result

    monkeypatch.setattr(StringColumn, "fingerprint", one_fingerprint)
    assert evaluate(data / "qrels.test", data / "results.test", names).means == expected


def test_doc_ids_sharing_long_prefixes_break_ties_in_byte_order() -> None:
    prefix = "msmarco_v2.1_doc_00_880019750#"
    docs = [f"{prefix}{i}_x" for i in (3, 10, 2, 1)]
    qrels = pd.DataFrame({"query_id": "q", "doc_id": [f"{prefix}3_x"], "grade": [1]})
    run = pd.DataFrame({"query_id": "q", "doc_id": docs, "score": 1.0})
    # descending byte order: ...3_x > ...2_x > ...1_x > ...10_x ("0" < "_")
    assert evaluate(qrels, run, ["RR"]).means["RR"] == 1.0
    qrels2 = qrels.assign(doc_id=[f"{prefix}10_x"])
    assert evaluate(qrels2, run, ["RR"]).means["RR"] == 0.25


def test_err_matches_ir_measures_gdeval() -> None:
    """ir_measures (a dev dependency) computes ERR with gdeval.pl, whose maximum grade is 4."""
    import shutil

    import ir_measures

    if shutil.which("perl") is None:
        pytest.skip("ir_measures' ERR runs gdeval.pl, and perl is not installed")
    grades = {"a": 3, "b": 0, "c": 1, "d": 2, "e": 4}
    scores = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}
    qrels = [ir_measures.Qrel("1", doc, grade) for doc, grade in grades.items()]
    run = [ir_measures.ScoredDoc("1", doc, score) for doc, score in scores.items()]
    theirs = {
        str(m.measure): m.value
        for m in ir_measures.iter_calc([ir_measures.ERR @ 3, ir_measures.ERR @ 10], qrels, run)
    }
    ours = evaluate(
        pd.DataFrame({"query_id": "1", "doc_id": list(grades), "grade": list(grades.values())}),
        pd.DataFrame({"query_id": "1", "doc_id": list(scores), "score": list(scores.values())}),
        ["ERR@3", "ERR@10"],
    ).means
    assert ours["ERR@3"] == pytest.approx(theirs["ERR@3"], abs=1e-5)
    assert ours["ERR@10"] == pytest.approx(theirs["ERR@10"], abs=1e-5)


@pytest.mark.parametrize(
    "written",
    [["d1", "d2", "d3"], ["d3", "d2", "d1"], ["d2", "d3", "d1"]],
    ids=["ascending", "descending", "mixed"],
)
def test_tied_scores_rank_doc_ids_descending_whatever_the_file_order(written: list[str]) -> None:
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["d3", "d1"], "grade": [1, 1]})
    run = pd.DataFrame(
        {"query_id": "q", "doc_id": ["top", *written, "x"], "score": [9.0, 5, 5, 5, 1]}
    )
    # ranking: top, d3, d2, d1, x -> relevant at ranks 2 and 4
    result = evaluate(qrels, run, ["RR", "AP"]).means
    assert result["RR"] == 0.5
    assert result["AP"] == pytest.approx((1 / 2 + 2 / 4) / 2)


# CG over the graded example [3, 2, 3, 0, 1]: the gains are summed, with no discount
@pytest.mark.parametrize(
    ("name", "expected"),
    [("CG@1", 3.0), ("CG@3", 3 + 2 + 3), ("CG@5", 9.0), ("CG", 9.0), ("CG(gain=exp)@3", 7 + 3 + 7)],
)
def test_graded_example_cumulative_gain(name: str, expected: float) -> None:
    assert _value(*_frames([3, 2, 3, 0, 1]), name) == expected


def test_cumulative_gain_ignores_order_within_k_and_negative_grades() -> None:
    qrels, run = _frames([0, -1, 2, 1])
    assert _value(qrels, run, "CG@4") == 3.0
    assert _value(*_frames([2, 1, 0, -1]), "CG@4") == 3.0
    assert _value(*_frames([2, 1, 0, -1]), "DCG@4") > _value(qrels, run, "DCG@4")
    # d1 (-1) counts as unjudged (trec_eval -J): the top two judged are d0 (0) and d2 (2)
    assert _value(qrels, run, "CG(judged_only=true)@2") == 2.0


@pytest.mark.parametrize(
    "measure",
    ["RR", "P@2", "P@3", "nDCG", "nDCG@2", "AP", "R@2", "Success@1", "Rprec"],
)
def test_judged_only_drops_documents_graded_below_zero_as_trec_eval_j_does(
    trec_eval_reference: Callable[..., dict[str, float]], measure: str
) -> None:
    """A document judged below zero counts as unjudged under ``-J``: the first document, graded
    -1, goes with the unjudged ``u``, and the relevant ``d2`` leads the judged ranking."""
    qrels, run = _frames([-1, 0, 1, 0], {"d9": 2})
    run = pd.concat([pd.DataFrame({"query_id": ["q"], "doc_id": ["u"], "score": [20.0]}), run])
    metric = f"{measure.split('@')[0]}(judged_only=true)" + (
        f"@{measure.split('@')[1]}" if "@" in measure else ""
    )
    ours = _value(qrels, run, metric)
    reference = trec_eval_reference(qrels, run, metric.replace("true", "True"))["q"]
    assert ours == pytest.approx(reference)
    if measure == "RR":
        assert ours == 0.5  # d2, second of the judged ranking d1 d2 d3 once d0 and u are gone
