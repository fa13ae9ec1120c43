"""Property tests: ranges, invariance to doc-id renaming, monotonicity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.metrics import FAMILIES, parse
from evalplat.metrics.evaluation import evaluate

BOUNDED = [
    "P@5", "R@5", "F1@5", "Success@3", "RR", "RR@3", "AP", "AP@5", "nDCG", "nDCG@5",
    "nDCG(gain=exp)@5", "Rprec", "Bpref", "ERR@5", "Judged@5", "AUC", "P(rel=2)@3",
    "ZeroResult", "Coverage", "SetP", "SetR", "SetF", "SetAP", "SetRelP", "RelP@5",
    "IPrec@0.5", "IPrecAvg", "GMAP", "GMBpref", "infAP", "binG", "G", "nDCGRel", "RnDCG",
    "RBP", "RBPResid", "Unjudged@5", "Judged", "Rprec(mult=0.5)", "SDCG(max_rel=3)@5",
    "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@5", "NERR10(max_rel=3)", "NERR11(max_rel=3)",
    "INST(T=0.3,max_rel=2)", "INSQ(max_rel=3)", "BPM(T=2,max_rel=3)@5", "Compat",
    "Compat(normalize=false)", "Accuracy@5",
]  # fmt: skip


@st.composite
def collections(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random qrels and run over a few queries; scores with ties; some unjudged documents."""
    queries = draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=4, unique=True))
    qrels_rows, run_rows = [], []
    for query in queries:
        docs = [f"{query}{i}" for i in range(draw(st.integers(1, 8)))]
        for doc in docs:
            if draw(st.booleans()):
                qrels_rows.append((query, doc, draw(st.integers(-1, 3))))
        ranked = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        for doc in ranked:
            run_rows.append((query, doc, float(draw(st.integers(0, 3)))))
    if not qrels_rows:
        qrels_rows.append((queries[0], f"{queries[0]}0", 1))
    if not run_rows:
        run_rows.append((queries[0], f"{queries[0]}0", 1.0))
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "grade"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    return qrels, run


@given(collections())
def test_bounded_metrics_stay_in_unit_interval(data: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    qrels, run = data
    frame = evaluate(qrels, run, BOUNDED).per_query
    values = frame["value"]
    # a measure with unknown values (Accuracy without a pair to order) may have none
    may_be_unknown = frame["metric"].map(lambda name: parse(name).spec.unknown_values)
    assert (((values >= 0) & (values <= 1 + 1e-12)) | (values.isna() & may_be_unknown)).all()


@given(collections())
def test_renaming_docs_keeping_their_order_changes_nothing(
    data: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    qrels, run = data
    # an order-preserving renaming keeps trec_eval's tie-break (doc id descending) intact
    rename = {
        doc: f"doc-{index:04d}"
        for index, doc in enumerate(sorted(set(qrels["doc_id"]) | set(run["doc_id"])))
    }
    before = evaluate(qrels, run, BOUNDED).per_query
    qrels2 = qrels.assign(doc_id=qrels["doc_id"].map(rename))
    run2 = run.assign(doc_id=run["doc_id"].map(rename))
    after = evaluate(qrels2, run2, BOUNDED).per_query
    assert before.equals(after)


@given(collections(), st.integers(1, 6))
def test_cutoff_monotone_measures_grow_with_k(
    data: tuple[pd.DataFrame, pd.DataFrame], k: int
) -> None:
    qrels, run = data
    for family in ("R", "Success", "DCG", "AP"):
        low = evaluate(qrels, run, [f"{family}@{k}"]).values[str(parse(f"{family}@{k}"))]
        high = evaluate(qrels, run, [f"{family}@{k + 1}"]).values[str(parse(f"{family}@{k + 1}"))]
        assert (high >= low - 1e-12).all(), family


@given(collections())
def test_moving_a_relevant_document_to_the_top_never_hurts(
    data: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    qrels, run = data
    is_relevant = qrels["grade"] >= 1
    relevant = set(
        zip(qrels.loc[is_relevant, "query_id"], qrels.loc[is_relevant, "doc_id"], strict=True)
    )
    pairs = zip(run["query_id"], run["doc_id"], strict=True)
    rows = [i for i, pair in enumerate(pairs) if pair in relevant]
    if not rows:
        return
    boosted = run.copy()
    boosted.loc[rows[-1], "score"] = run["score"].max() + 1.0
    # binary measures only: with grades, lifting a grade-1 document above a grade-3 one hurts
    names = ["P@3", "R@3", "RR", "AP", "Success@1", "Rprec"]
    before = evaluate(qrels, run, names).values
    after = evaluate(qrels, boosted, names).values
    for name in names:
        assert (after[name] >= before[name] - 1e-12).all(), name


# the intent-aware measures read judgments per subtopic: their own collections below
INTENT_AWARE = [
    "ERR_IA@1", "ERR_IA@5", "nERR_IA@5", "alpha_DCG@5", "alpha_nDCG@5", "alpha_nDCG(alpha=1)@3",
    "NRBP", "nNRBP(alpha=0.2,beta=0.9)", "AP_IA", "P_IA@3", "StRecall@3",
    "P_IA(judged_only=true)@2",
]  # fmt: skip


@st.composite
def diversity_collections(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random diversity qrels (a document judged for one to three subtopics) and a run."""
    qrels, run = draw(collections())
    rows = [
        (query, subtopic, doc, draw(st.integers(-1, 3)) if subtopic else grade)
        for query, doc, grade in qrels.itertuples(index=False)
        for subtopic in sorted(draw(st.sets(st.integers(0, 3), min_size=1, max_size=3)))
    ]
    return pd.DataFrame(rows, columns=["query_id", "subtopic", "doc_id", "grade"]), run


@given(diversity_collections())
def test_intent_aware_measures_stay_in_unit_interval_and_ignore_renaming(
    data: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    qrels, run = data
    before = evaluate(qrels, run, INTENT_AWARE).per_query
    assert ((before["value"] >= 0) & (before["value"] <= 1 + 1e-12)).all()
    # an order-preserving renaming keeps both tie rules (the run's and the ideal ranking's)
    docs = sorted(set(qrels["doc_id"]) | set(run["doc_id"]))
    rename = {doc: f"doc-{index:04d}" for index, doc in enumerate(docs)}
    qrels2 = qrels.assign(doc_id=qrels["doc_id"].map(rename))
    after = evaluate(qrels2, run.assign(doc_id=run["doc_id"].map(rename)), INTENT_AWARE)
    assert before.equals(after.per_query)


def test_every_bounded_family_is_covered_by_the_range_property() -> None:
    covered = {parse(name).family for name in BOUNDED + INTENT_AWARE}
    # session measures have their own range property (tests/metrics/test_online.py)
    assert {f.name for f in FAMILIES.values() if f.bounded and f.unit == "query"} <= covered


@given(
    st.lists(st.integers(0, 2**40), min_size=1, max_size=200, unique=True),
    st.lists(st.integers(0, 2**40), max_size=200),
)
def test_key_lookup_finds_exactly_the_table_keys(table: list[int], probes: list[int]) -> None:
    """The join's direct-address lookup, including keys that share a slot (same low bits)."""
    import numpy as np

    from evalplat.metrics.key_table import KeyTable

    table_keys = np.array(table + [k + (1 << 30) for k in table[:3]], dtype=np.int64)
    table_keys = np.unique(table_keys)
    keys = np.array(probes + table_keys.tolist()[::2], dtype=np.int64)
    rows, matched = KeyTable(table_keys).find(keys)
    where = {int(k): i for i, k in enumerate(table_keys)}
    expected = {i: where[int(k)] for i, k in enumerate(keys) if int(k) in where}
    assert dict(zip(rows.tolist(), matched.tolist(), strict=True)) == expected


@pytest.mark.parametrize("size", [10, 10_000, 200_000])
def test_key_lookup_finds_exactly_the_keys_a_dictionary_finds(size: int) -> None:
    """Direct-address slots and the sorted search of shared slots answer like a dict."""
    from evalplat.metrics.key_table import KeyTable

    rng = np.random.default_rng(size)
    table = np.unique(rng.integers(-(2**62), 2**62, size=size))
    rng.shuffle(table)
    absent = rng.integers(-(2**62), 2**62, size=size)
    keys = np.concatenate([rng.choice(table, size=2 * size), absent])
    rng.shuffle(keys)
    rows, matched = KeyTable(table).find(keys)
    where = {int(key): position for position, key in enumerate(table)}
    expected = {row: where[int(key)] for row, key in enumerate(keys) if int(key) in where}
    assert dict(zip(rows.tolist(), matched.tolist(), strict=True)) == expected
    assert len(rows) == len(expected)  # each row once


@pytest.mark.parametrize("offset", [0, 3, 8, 13])
def test_booleans_unpack_any_slice_of_a_bitmap(offset: int) -> None:
    import pyarrow as pa

    from evalplat.metrics.arrow_columns import booleans

    values = np.random.default_rng(offset).random(41) < 0.5
    array = pa.array(values).slice(offset)
    assert booleans(array).tolist() == values[offset:].tolist()
