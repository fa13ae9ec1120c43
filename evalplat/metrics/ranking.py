"""Judged rankings as flat numpy arrays: the one structure every metric kernel reads.

Query ids and doc ids become integer codes once; the run is joined to the qrels on a single int64
key (topic code x qrels doc code) and ordered once. Rows of one topic are contiguous and in rank
order, so every measure is a vectorised reduction over segments (``np.bincount`` on the topic
code, cumulative sums within segments) — no per-query Python loop.

Ordering (``ordering="score"``, trec_eval's): score descending, ties by doc id descending in byte
order (trec_eval compares docnos with ``strcmp``); the run's rank column is ignored.
``ordering="given"``: the ``rank`` column when present, else the row order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalplat.errors import InputError

if TYPE_CHECKING:
    from numpy.typing import NDArray

UNJUDGED = np.iinfo(np.int32).min  # grade of a retrieved document that has no judgment


class DuplicateError(Exception):
    """Internal: a duplicate pair was found; the caller names the line or the pair."""

    def __init__(self, kind: str, query_id: str, doc_id: str) -> None:
        super().__init__(kind, query_id, doc_id)
        self.kind = kind
        self.query_id = query_id
        self.doc_id = doc_id


@dataclass
class Judgments:
    """Qrels restricted to the topics, as codes: one row per judgment."""

    n_topics: int
    topic: NDArray[np.int32]
    grade: NDArray[np.int32]

    def relevant_count(self, rel: int) -> NDArray[np.float64]:
        """R per topic: judgments with grade >= rel."""
        return np.bincount(self.topic[self.grade >= rel], minlength=self.n_topics).astype(float)

    def nonrelevant_count(self, rel: int) -> NDArray[np.float64]:
        """N per topic: judged non-relevant (0 <= grade < rel); negative grades are not counted."""
        mask = (self.grade >= 0) & (self.grade < rel)
        return np.bincount(self.topic[mask], minlength=self.n_topics).astype(float)

    @cached_property
    def ideal(self) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int64]]:
        """(topic, grade, 0-based rank) of the judgments in ideal order: grade descending."""
        order = np.lexsort((-self.grade.astype(np.int64), self.topic))
        topic = self.topic[order]
        return topic, self.grade[order], _ranks_within(topic)

    @cached_property
    def max_grade(self) -> int:
        """Highest grade in the judgments (0 when there are none)."""
        return int(self.grade.max()) if len(self.grade) else 0


@dataclass
class Ranking:
    """Retrieved documents of the topics: rows grouped by topic, in rank order within a topic."""

    n_topics: int
    topic: NDArray[np.int32]
    grade: NDArray[np.int32]  # UNJUDGED when the document has no judgment
    _judged_view: Ranking | None = field(default=None, repr=False)

    @cached_property
    def rank(self) -> NDArray[np.int64]:
        """0-based rank of each row within its topic."""
        return _ranks_within(self.topic)

    @cached_property
    def num_ret(self) -> NDArray[np.float64]:
        """Number of retrieved documents per topic."""
        return np.bincount(self.topic, minlength=self.n_topics).astype(float)

    @cached_property
    def segment_start(self) -> NDArray[np.int64]:
        """Index of the first row of each row's topic segment."""
        return np.arange(len(self.topic)) - self.rank

    def judged_only(self) -> Ranking:
        """The ranking with unjudged documents removed (trec_eval ``-J``)."""
        if self._judged_view is None:
            keep = self.grade != UNJUDGED
            self._judged_view = Ranking(self.n_topics, self.topic[keep], self.grade[keep])
        return self._judged_view

    def cumulative_within(self, flags: NDArray[np.bool_]) -> NDArray[np.int64]:
        """Inclusive running count of ``flags`` within each topic segment."""
        total = np.cumsum(flags, dtype=np.int64)
        before = np.concatenate(([0], total))[self.segment_start]
        return total - before

    def per_topic(self, values: NDArray[np.float64] | NDArray[np.bool_], mask: NDArray[np.bool_]
                  ) -> NDArray[np.float64]:  # fmt: skip
        """Sum of ``values`` over the rows selected by ``mask``, per topic."""
        weights = values[mask].astype(float)
        return np.bincount(self.topic[mask], weights=weights, minlength=self.n_topics).astype(float)


def _ranks_within(topic: NDArray[np.int32]) -> NDArray[np.int64]:
    """0-based position within runs of equal consecutive topic codes."""
    n = len(topic)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(topic[1:], topic[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, n))
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


def topic_codes(ids: pa.ChunkedArray | pa.Array, topics: pa.Array) -> NDArray[np.int32]:
    """Code of each id in ``topics`` (sorted unique strings), -1 when absent."""
    codes = pc.index_in(ids, value_set=topics)
    return _filled(codes)


def _filled(codes: pa.ChunkedArray | pa.Array) -> NDArray[np.int32]:
    if isinstance(codes, pa.ChunkedArray):
        codes = codes.combine_chunks() if codes.num_chunks != 1 else codes.chunk(0)
    return np.asarray(pc.fill_null(codes, -1).to_numpy(zero_copy_only=False), dtype=np.int32)


def _dictionary(values: pa.ChunkedArray | pa.Array) -> tuple[NDArray[np.int64], pa.Array]:
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.unify_dictionaries().combine_chunks() if encoded.num_chunks else None
    if encoded is None:
        return np.zeros(0, dtype=np.int64), pa.array([], pa.string())
    return encoded.indices.to_numpy().astype(np.int64), encoded.dictionary


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


def build_judgments(
    qrels: pa.Table, topics: pa.Array
) -> tuple[Judgments, NDArray[np.int64], NDArray[np.int32], pa.Array]:
    """Code the qrels: (judgments, sorted join keys, grades along the keys, doc dictionary).

    Judgments of queries outside ``topics`` are dropped. Raises ``DuplicateError``.
    """
    _check_pairs(qrels, "judgment")
    topic = topic_codes(qrels.column("query_id"), topics)
    doc, doc_dict = _dictionary(qrels.column("doc_id"))
    grade = np.asarray(qrels.column("grade").to_numpy(), dtype=np.int64)
    keys = topic.astype(np.int64) * max(len(doc_dict), 1) + doc
    keep = topic >= 0
    topic, keys, grade = topic[keep], keys[keep], grade[keep]
    if grade.size and (grade.max() > np.iinfo(np.int32).max or grade.min() <= UNJUDGED):
        raise InputError("grades must fit in 32 bits")
    order = np.argsort(keys)
    grade32 = grade.astype(np.int32)
    return Judgments(len(topics), topic, grade32), keys[order], grade32[order], doc_dict


def build_ranking(
    run: pa.Table,
    topics: pa.Array,
    judged_keys: NDArray[np.int64],
    judged_grades: NDArray[np.int32],
    qrels_docs: pa.Array,
    *,
    ordering: str,
) -> tuple[Ranking, list[str]]:
    """Join the run to the qrels and order it; returns the ranking and the run-only query ids.

    Raises ``DuplicateError`` when a doc id occurs twice in one query's ranking.
    """
    topic = topic_codes(run.column("query_id"), topics)
    outside = topic < 0
    run_only: list[str] = []
    if outside.any():
        ignored = run.filter(pa.array(outside))
        _check_pairs(ignored, "doc id in one ranking")  # trec_eval refuses these too
        run_only = sorted(set(pc.unique(ignored.column("query_id")).to_pylist()))
        inside = ~outside
        run = run.filter(pa.array(inside))
        topic = topic[inside]
    doc, doc_dict = _dictionary(run.column("doc_id"))
    first = _first_duplicate(topic.astype(np.int64) * max(len(doc_dict), 1) + doc)
    if first is not None:
        raise DuplicateError("doc id in one ranking", str(run.column("query_id")[first]),
                             str(doc_dict[int(doc[first])]))  # fmt: skip
    grade = _join_grades(topic, doc, doc_dict, judged_keys, judged_grades, qrels_docs)
    if ordering == "score":
        score = np.asarray(run.column("score").to_numpy(), dtype=np.float64)
        if np.isnan(score).any():
            raise InputError("run has NaN scores")
        order = _score_order(topic, score, doc, doc_dict)
    elif ordering == "given":
        if "rank" in run.column_names:
            rank = np.asarray(run.column("rank").to_numpy(), dtype=np.float64)
            order = np.lexsort((rank, topic))
        else:
            order = np.argsort(topic, kind="stable")
    else:
        raise InputError(f"ordering must be 'score' or 'given', got {ordering!r}")
    if order is not None:
        topic, grade = topic[order], grade[order]
    return Ranking(len(topics), topic, grade), run_only


def _join_grades(
    topic: NDArray[np.int32],
    doc: NDArray[np.int64],
    doc_dict: pa.Array,
    judged_keys: NDArray[np.int64],
    judged_grades: NDArray[np.int32],
    qrels_docs: pa.Array,
) -> NDArray[np.int32]:
    """Grade of each run row from the qrels, UNJUDGED when the pair is not judged."""
    grade = np.full(len(topic), UNJUDGED, dtype=np.int32)
    if len(judged_keys) == 0 or len(topic) == 0:
        return grade
    # map the run's doc dictionary onto qrels doc codes once, then per row through it
    to_qrels = _filled(pc.index_in(doc_dict, value_set=qrels_docs)).astype(np.int64)
    qdoc = to_qrels[doc]
    candidates = np.flatnonzero(qdoc >= 0)
    keys = topic[candidates].astype(np.int64) * max(len(qrels_docs), 1) + qdoc[candidates]
    position = np.searchsorted(judged_keys, keys)
    position[position == len(judged_keys)] = 0
    found = judged_keys[position] == keys
    grade[candidates[found]] = judged_grades[position[found]]
    return grade


def _score_order(
    topic: NDArray[np.int32], score: NDArray[np.float64], doc: NDArray[np.int64], doc_dict: pa.Array
) -> NDArray[np.int64] | None:
    """Permutation into (topic segments, score desc, doc id desc); None when already in order.

    Most run files are already grouped by topic and sorted by score, so the common case costs
    two vectorised comparisons; only tied rows need doc-id strings, and only theirs are sorted.
    """
    n = len(topic)
    same_topic = topic[1:] == topic[:-1]
    segments = n - int(same_topic.sum()) if n else 0
    contiguous = segments == len(np.unique(topic)) if n else True
    order: NDArray[np.int64] | None = None
    if not (contiguous and not (same_topic & (score[1:] > score[:-1])).any()):
        order = np.lexsort((-score, topic))
        topic, score, doc = topic[order], score[order], doc[order]
        same_topic = topic[1:] == topic[:-1]
    tie = same_topic & (score[1:] == score[:-1])
    if not tie.any():
        return order
    in_tie = np.zeros(n, dtype=bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    rows = np.flatnonzero(in_tie)
    new_group = np.ones(len(rows), dtype=bool)
    new_group[1:] = ~tie[rows[1:] - 1]
    group = np.cumsum(new_group)
    unique_docs, inverse = np.unique(doc[rows], return_inverse=True)
    by_text = pc.array_sort_indices(doc_dict.take(pa.array(unique_docs))).to_numpy()
    text_rank = np.empty(len(unique_docs), dtype=np.int64)
    text_rank[by_text] = np.arange(len(unique_docs))
    key = group.astype(np.int64) * len(unique_docs) + (len(unique_docs) - 1 - text_rank[inverse])
    within = rows[np.argsort(key, kind="stable")]
    fix = np.arange(n, dtype=np.int64)
    fix[rows] = within
    return fix if order is None else order[fix]
