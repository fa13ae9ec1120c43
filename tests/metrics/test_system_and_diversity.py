"""Worked examples, computed by hand, for the measures that read more than judgments:
Latency (run records), ZeroResult and Coverage (the ranking), Diversity (document fields)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalplat import evaluate
from evalplat.errors import InputError

QRELS = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "b", "c"], "grade": 1})
# q1 retrieves four documents, q2 two, q3 nothing
RUN = pd.DataFrame(
    {"query_id": ["q1"] * 4 + ["q2"] * 2, "doc_id": ["a", "b", "c", "d", "b", "e"],
     "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0]}
)  # fmt: skip
RECORDS = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "latency_ms": [10.0, 30.0, None]})
DOCUMENTS = pd.DataFrame(
    {"query_id": ["q1"] * 4 + ["q2"] * 2, "doc_id": ["a", "b", "c", "d", "b", "e"],
     "field": "site", "value": ["x", "x", "y", "z", "w", "w"]}
)  # fmt: skip


def test_latency_mean_and_percentiles_leave_out_the_query_without_a_latency() -> None:
    names = ["Latency", "Latency(p=50)", "Latency(p=90)"]
    result = evaluate(QRELS, RUN, names, records=RECORDS, topics=["q1", "q2", "q3"])
    assert result.means["Latency"] == 20.0  # (10 + 30) / 2: q3 failed and has no latency
    # nearest rank over 10, 30: p50 is rank ceil(0.5 * 2) = 1, p90 rank ceil(1.8) = 2
    assert result.means["Latency(p=50)"] == 10.0
    assert result.means["Latency(p=90)"] == 30.0
    assert math.isnan(result.values["Latency"][2])


def test_zero_result_and_coverage_read_the_ranking() -> None:
    result = evaluate(QRELS, RUN, ["ZeroResult", "Coverage"], topics=["q1", "q2", "q3"])
    assert result.values["ZeroResult"].tolist() == [0.0, 0.0, 1.0]
    assert result.means["ZeroResult"] == pytest.approx(1 / 3)
    assert result.means["Coverage"] == pytest.approx(2 / 3)


def test_diversity_is_the_entropy_of_the_field_over_the_top_k() -> None:
    names = ["Diversity(field=site)@4", "Diversity(field=site,norm=true)@4",
             "Diversity(field=site)@2", "Diversity(field=site)"]  # fmt: skip
    result = evaluate(QRELS, RUN, names, documents=DOCUMENTS, topics=["q1", "q2", "q3"])
    # q1's top 4: x, x, y, z -> shares 1/2, 1/4, 1/4 -> 0.5 + 0.5 + 0.5 = 1.5 bits
    assert result.values["Diversity(field=site)@4"].tolist() == [1.5, 0.0, 0.0]
    # normalised by log2(3 distinct values)
    assert result.values["Diversity(field=site,norm=true)@4"][0] == pytest.approx(
        1.5 / math.log2(3)
    )
    # top 2: x, x -> one value, no spread; q2 has one value (w) twice
    assert result.values["Diversity(field=site)@2"].tolist() == [0.0, 0.0, 0.0]
    assert result.values["Diversity(field=site)"].tolist() == [1.5, 0.0, 0.0]


def test_a_document_without_a_value_is_left_out() -> None:
    documents = DOCUMENTS[DOCUMENTS["doc_id"] != "a"]  # q1: -, x, y, z
    result = evaluate(QRELS, RUN, ["Diversity(field=site)@4"], documents=documents)
    assert result.values["Diversity(field=site)@4"][0] == pytest.approx(math.log2(3))


def test_missing_inputs_and_fields_are_named() -> None:
    with pytest.raises(InputError, match="needs run records"):
        evaluate(QRELS, RUN, ["Latency"])
    with pytest.raises(InputError, match="needs document field values"):
        evaluate(QRELS, RUN, ["Diversity(field=site)@4"])
    with pytest.raises(InputError, match="no field 'colour'"):
        evaluate(QRELS, RUN, ["Diversity(field=colour)@4"], documents=DOCUMENTS)
    with pytest.raises(InputError, match="needs the parameter 'field'"):
        evaluate(QRELS, RUN, ["Diversity@4"], documents=DOCUMENTS)
