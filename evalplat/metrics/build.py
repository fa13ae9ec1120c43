"""From qrels and run tables to coded :class:`Judgments` and an ordered :class:`Ranking`.

Query ids become topic codes; a (topic, doc) pair becomes one 64-bit key, so the join of the run
to the qrels is a sort and a binary search, and the run is ordered once. The qrels are coded once
(``code_qrels``) for any number of runs joined to them (``build``).

Ordering (``ordering="score"``, trec_eval's): score descending, ties by doc id descending in byte
order (trec_eval compares docnos with ``strcmp``); the run's rank column is ignored.
``ordering="given"``: the ``rank`` column when present, else the row order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalplat.errors import InputError
from evalplat.metrics.arrow_columns import arrow, combined, numeric, topic_codes
from evalplat.metrics.doc_keys import StringColumn
from evalplat.metrics.key_table import KeyTable
from evalplat.metrics.ordering import score_order
from evalplat.metrics.pair_keys import (
    Collision,
    DuplicateError,
    match_pairs,
    same_pairs,
    unique_pair_keys,
)
from evalplat.metrics.ranking import UNJUDGED, Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray


def _dictionary(values: pa.ChunkedArray | pa.Array) -> tuple[NDArray[np.int64], pa.Array]:
    """(code per value, dictionary); one chunk first, so there is one dictionary to unify."""
    encoded = pc.dictionary_encode(combined(values))
    return numeric(encoded.indices, np.int64), encoded.dictionary


def _first_duplicate(keys: NDArray[np.int64]) -> int | None:
    """Index (into ``keys``) of a key that occurs twice, or None."""
    if len(keys) < 2:
        return None
    order = np.argsort(keys)
    ordered = keys[order]
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    return None if len(same) == 0 else int(order[same[0] + 1])


def _check_pairs(table: pa.Table, kind: str) -> None:
    """Raise ``DuplicateError`` when a (query_id, doc_id) pair repeats in ``table``."""
    query, _ = _dictionary(table.column("query_id"))
    doc, doc_dict = _dictionary(table.column("doc_id"))
    first = _first_duplicate(query * max(len(doc_dict), 1) + doc)
    if first is not None:
        raise DuplicateError(
            kind, str(table.column("query_id")[first]), str(table.column("doc_id")[first])
        )


def _raise_on_duplicate(keys: NDArray[np.int64], table: pa.Table, kind: str) -> None:
    first = _first_duplicate(keys)
    if first is not None:
        raise DuplicateError(
            kind, str(table.column("query_id")[first]), str(table.column("doc_id")[first])
        )


def _inside(table: pa.Table, topic: NDArray[np.int32], kind: str
            ) -> tuple[pa.Table, NDArray[np.int32], list[str]]:  # fmt: skip
    """Rows of known topics; rows of other queries are checked for duplicates, then dropped."""
    outside = topic < 0
    if not outside.any():
        return table, topic, []
    ignored = table.filter(arrow(outside))
    _check_pairs(ignored, kind)  # trec_eval refuses these too
    others = sorted(set(pc.unique(ignored.column("query_id")).to_pylist()))
    return table.filter(arrow(~outside)), topic[~outside], others


@dataclass(frozen=True)
class CodedQrels:
    """Qrels inside their topics, coded and keyed: the part of :func:`build` that is the same
    for every run scored against one set of judgments (twenty configs a night on one test set
    version code their judgments once)."""

    topics: pa.Array  # the topic ids, sorted
    given_topics: bool  # whether the topics were given, or are the queries of the qrels
    table: pa.Table  # the topics' judgments (``query_id, doc_id, grade``), doc ids in one chunk
    topic: NDArray[np.int32]  # each judgment's topic code
    grade: NDArray[np.int32]
    keys: KeyTable | None  # None when two different judged pairs share a key: the exact join

    @cached_property
    def judgments(self) -> Judgments:
        """The judgments as the measures read them (their ideal order is sorted once)."""
        return Judgments(len(self.topics), self.topic, self.grade)


def code_qrels(qrels: pa.Table, topics: pa.Array, *, given_topics: bool = True) -> CodedQrels:
    """Code ``qrels`` for :func:`build` over ``topics`` (sorted); judgments of other queries are
    checked for repeats, then dropped. Raises ``DuplicateError`` for a repeated judgment."""
    qrels, topic, _ = _inside(qrels, topic_codes(qrels.column("query_id"), topics), "judgment")
    qrels = _with_single_chunk(qrels, "doc_id")
    grade = numeric(qrels.column("grade"), np.int64)
    if grade.size and (grade.max() > np.iinfo(np.int32).max or grade.min() <= UNJUDGED):
        raise InputError("grades must fit in 32 bits")
    docs = StringColumn.of(combined(qrels.column("doc_id")))
    try:
        keys: KeyTable | None = KeyTable(unique_pair_keys(topic, docs, qrels, "judgment"))
    except Collision:
        keys = None
    return CodedQrels(topics, given_topics, qrels, topic, grade.astype(np.int32), keys)


def build(
    qrels: CodedQrels, run: pa.Table, *, ordering: str, with_docs: bool = False
) -> tuple[Judgments, Ranking, list[str]]:
    """Join the run to the coded qrels and order it: (judgments, ranking, run query ids that
    are not topics).

    A (topic, doc) pair becomes one 64-bit key (the doc id's fingerprint mixed with the topic
    code), so duplicate checks are a sort and the join is a lookup of the run's keys among the
    judgments' (``code_qrels``). Every match and every clash is verified on the strings; if a
    fingerprint ever collides, the exact path (one dictionary over all doc ids) takes over.
    Raises ``DuplicateError`` for a doc repeated in one ranking.
    """
    run, run_topic, run_only = _inside(
        run, topic_codes(run.column("query_id"), qrels.topics), "doc id in one ranking"
    )
    # one chunk per doc id column, made once: later steps take rows from it repeatedly
    run = _with_single_chunk(run, "doc_id")
    run_docs = StringColumn.of(combined(run.column("doc_id")))
    try:
        run_grade = _join_fingerprints(qrels, run, run_topic, run_docs)
    except Collision:
        run_grade = _join_exact(qrels.table, qrels.topic, qrels.grade, run, run_topic)
    # after the join, not beside it: the order's temporary arrays and the keys' together were
    # the evaluation's peak memory (docs/performance.md)
    order = _order(run, run_topic, run_docs, ordering)
    if order is not None:
        run_topic, run_grade = run_topic[order], run_grade[order]
    ranking = Ranking(len(qrels.topics), run_topic, run_grade)
    if with_docs:  # measures of documents need each row's doc id (``with_docs``)
        docs = combined(run.column("doc_id"))
        ranking.doc_ids = docs if order is None else docs.take(arrow(order))
    return qrels.judgments, ranking, run_only


def _with_single_chunk(table: pa.Table, name: str) -> pa.Table:
    index = table.column_names.index(name)
    return table.set_column(index, name, pa.chunked_array([combined(table.column(name))]))


def _join_fingerprints(
    qrels: CodedQrels, run: pa.Table, run_topic: NDArray[np.int32], run_docs: StringColumn
) -> NDArray[np.int32]:
    if qrels.keys is None:  # two judged pairs share a key: only the exact join tells them apart
        raise Collision
    result = np.full(run.num_rows, UNJUDGED, dtype=np.int32)
    rows, matched = match_pairs(run_topic, run_docs, run, "doc id in one ranking", qrels.keys)
    if not same_pairs(run, rows, qrels.table, matched, run_topic, qrels.topic).all():
        raise Collision
    result[rows] = qrels.grade[matched]
    return result


def _join_exact(
    qrels: pa.Table,
    qrels_topic: NDArray[np.int32],
    grades: NDArray[np.int32],
    run: pa.Table,
    run_topic: NDArray[np.int32],
) -> NDArray[np.int32]:
    """The reference join: one dictionary over the doc ids of both tables."""
    docs = pa.concat_arrays([combined(qrels.column("doc_id")), combined(run.column("doc_id"))])
    codes, dictionary = _dictionary(docs)
    width = max(len(dictionary), 1)
    qrels_keys = qrels_topic.astype(np.int64) * width + codes[: qrels.num_rows]
    run_keys = run_topic.astype(np.int64) * width + codes[qrels.num_rows :]
    _raise_on_duplicate(qrels_keys, qrels, "judgment")
    _raise_on_duplicate(run_keys, run, "doc id in one ranking")
    return _join(run_keys, qrels_keys, grades)


def _join(
    run_keys: NDArray[np.int64], qrels_keys: NDArray[np.int64], grades: NDArray[np.int32]
) -> NDArray[np.int32]:
    """Grade of each run row, UNJUDGED when its (topic, doc) pair has no judgment."""
    result = np.full(len(run_keys), UNJUDGED, dtype=np.int32)
    if len(qrels_keys) == 0 or len(run_keys) == 0:
        return result
    by_key = np.argsort(qrels_keys)
    sorted_keys = qrels_keys[by_key]
    position = np.searchsorted(sorted_keys, run_keys)
    position[position == len(sorted_keys)] = 0
    found = sorted_keys[position] == run_keys
    result[found] = grades[by_key[position[found]]]
    return result


def _order(
    run: pa.Table, topic: NDArray[np.int32], docs: StringColumn, ordering: str
) -> NDArray[np.int64] | None:
    if ordering == "score":
        score = numeric(run.column("score"), np.float64)
        if np.isnan(score).any():
            raise InputError("run has NaN scores")
        return score_order(topic, score, docs)
    if ordering == "given":
        if "rank" in run.column_names:
            rank = numeric(run.column("rank"), np.float64)
            return None if _in_order(topic, rank) else np.lexsort((rank, topic))
        return None if _in_order(topic) else np.argsort(topic, kind="stable")
    raise InputError(f"ordering must be 'score' or 'given', got {ordering!r}")


def _in_order(topic: NDArray[np.int32], rank: NDArray[np.float64] | None = None) -> bool:
    """Whether the rows are by topic and, within a topic, by ``rank`` already (a stored run
    is): the stable sort would leave them as they are, so it is not made."""
    if len(topic) < 2:
        return True
    step = np.diff(topic)
    if (step < 0).any():
        return False
    if rank is None:
        return True
    same_topic = step == 0
    return not (same_topic & (rank[1:] < rank[:-1])).any()
