"""Two runs and their judgments with the text ids coded to integers once per comparison.

A stored comparison reads a million results per run and as many judgments; the rank overlap,
the unjudged documents of the optimistic bound and the bound's scoring all ask the same
question of them: is this (query, document) the same as that one? Coding the text ids is the
costly part, so it is done here once and the steps share the codes:

- **query codes** index ``CodedPair.queries``, every query id seen (the topics, the judgments'
  and both runs' queries) in sorted order. Stored rows come grouped by query, so only the first
  id of each group is looked up.
- **doc codes** are dense: equal doc ids get equal codes, different ones different codes. They
  come from a 64-bit fingerprint of each id (``evalplat.metrics.doc_keys``), numbered in order
  of first appearance; every id is then checked against the first id that got its code, and
  should two different ids ever share a fingerprint, an exact dictionary of the strings takes
  over.

A (query, document) pair is then the integer ``query * docs + doc``.

The judgments come first in the numbering, so their codes do not depend on the runs: a test set
version's judgments are coded once (``JudgedIds``) and every comparison on it, twenty configs a
night, codes only its two runs against them. The codes are the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from numpy.typing import NDArray


@dataclass(frozen=True)
class CodedRows:
    """One frame's rows, in the frame's order: query and doc codes, and the frame's ``rank``
    (results) or ``grade`` (judgments) column."""

    query: NDArray[np.int64]
    doc: NDArray[np.int64]
    value: NDArray[np.int64]

    def pairs(self, docs: int) -> NDArray[np.int64]:
        """One integer per (query, document) pair."""
        keys: NDArray[np.int64] = self.query * max(docs, 1) + self.doc
        return keys


@dataclass(frozen=True)
class CodedPair:
    """The judgments (``value`` = grade) and both runs' results (``value`` = rank), coded."""

    queries: list[str]
    topics: list[str]
    topic: NDArray[np.int64]  # query code -> index in ``topics``, -1 for a query not a topic
    docs: int
    judgments: CodedRows
    baseline: CodedRows
    candidate: CodedRows


@dataclass(frozen=True)
class JudgedIds:
    """Judgments (``query_id, doc_id, grade``) with their doc ids coded on their own: the part
    of ``code_pair``'s work that is the same for every comparison on one test set version."""

    query_ids: pa.Array
    groups: list[str]  # the query id of each run of equal ids, in order
    sizes: NDArray[np.int64]  # and the length of each run
    doc_ids: pa.Array
    codes: NDArray[np.int64] | None  # None when two judged ids share a fingerprint
    fingerprints: pd.Index  # of each code's id, in code order (looked up, never changed)
    firsts: pa.Array  # each code's first id, in code order
    grade: NDArray[np.int64]


def judged_ids(judgments: pd.DataFrame) -> JudgedIds:
    """Code ``judgments``' ids for ``code_pair``; the frame is not kept."""
    import numpy as np
    import pandas as pd

    from evalplat.metrics.doc_keys import StringColumn

    query_ids, doc_ids = _strings(judgments["query_id"]), _strings(judgments["doc_id"])
    starts = _group_starts(query_ids)
    groups = [str(v) for v in query_ids.take(_indices(starts)).to_pylist()]
    sizes = np.diff(np.append(starts, len(query_ids))).astype(np.int64)
    fingerprints = StringColumn.of(doc_ids).fingerprint() if len(doc_ids) else _no_keys()
    codes, uniques = pd.factorize(fingerprints)
    first = _first_rows(codes.astype(np.int64), len(uniques))
    exact = _same(doc_ids, doc_ids.take(_indices(first[codes])))
    return JudgedIds(
        query_ids,
        groups,
        sizes,
        doc_ids,
        codes.astype(np.int64) if exact else None,
        pd.Index(uniques),
        doc_ids.take(_indices(first)),
        judgments["grade"].to_numpy(dtype=np.int64),
    )


def code_pair(
    judgments: pd.DataFrame | JudgedIds,
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    topics: Sequence[str],
) -> CodedPair:
    """Code ``judgments`` (``query_id, doc_id, grade``, or ``judged_ids`` of them) and both
    runs' results (``query_id, doc_id, rank``) over one set of codes; ``topics`` are the test
    set version's query ids."""
    import numpy as np

    judged = judgments if isinstance(judgments, JudgedIds) else judged_ids(judgments)
    runs = (baseline, candidate)
    columns = [_strings(frame["query_id"]) for frame in runs]
    queries = sorted(
        {str(t) for t in topics}.union(judged.groups, *(_group_ids(c) for c in columns))
    )
    position = {query: code for code, query in enumerate(queries)}
    run_docs = _concat([_strings(frame["doc_id"]) for frame in runs])
    doc_codes, docs = _doc_codes(judged, run_docs)
    judged_query = np.repeat(
        np.array([position[g] for g in judged.groups], dtype=np.int64), judged.sizes
    )
    rows = [CodedRows(judged_query, doc_codes[: len(judged.doc_ids)], judged.grade)]
    start = len(judged.doc_ids)
    for frame, column in zip(runs, columns, strict=True):
        end = start + len(frame)
        rows.append(
            CodedRows(
                _query_codes(column, position),
                doc_codes[start:end],
                frame["rank"].to_numpy(dtype=np.int64),
            )
        )
        start = end
    topic_ids = sorted({str(t) for t in topics})
    topic = np.full(len(queries), -1, dtype=np.int64)
    topic[[position[t] for t in topic_ids]] = np.arange(len(topic_ids))
    return CodedPair(queries, topic_ids, topic, docs, *rows)


def _strings(column: pd.Series) -> pa.Array:
    """A text column as one Arrow string array."""
    import pyarrow as pa

    array = pa.array(column, from_pandas=True)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], pa.string())
    if not pa.types.is_string(array.type):
        array = array.cast(pa.string())
    return array


def _group_starts(column: pa.Array) -> NDArray[np.int64]:
    """Rows where a new run of equal ids begins."""
    import numpy as np
    import pyarrow.compute as pc

    if len(column) == 0:
        return np.zeros(0, dtype=np.int64)
    changed = pc.not_equal(column[1:], column[:-1]).to_numpy(zero_copy_only=False)
    return np.flatnonzero(np.concatenate(([True], changed))).astype(np.int64)


def _group_ids(column: pa.Array) -> set[str]:
    import pyarrow as pa

    return {str(v) for v in column.take(pa.array(_group_starts(column))).to_pylist()}


def _query_codes(column: pa.Array, position: dict[str, int]) -> NDArray[np.int64]:
    import numpy as np
    import pyarrow as pa

    starts = _group_starts(column)
    first = column.take(pa.array(starts)).to_pylist()
    codes = np.array([position[str(v)] for v in first], dtype=np.int64)
    return np.repeat(codes, np.diff(np.append(starts, len(column))))


def _doc_codes(judged: JudgedIds, run_docs: pa.Array) -> tuple[NDArray[np.int64], int]:
    """(dense code per id, number of distinct ids) of the judgments' ids then ``run_docs``,
    numbered in order of first appearance, exact whatever the fingerprints do."""
    import numpy as np
    import pandas as pd
    import pyarrow.compute as pc

    from evalplat.metrics.doc_keys import StringColumn

    known = len(judged.fingerprints)
    if judged.codes is not None:
        fingerprints = StringColumn.of(run_docs).fingerprint() if len(run_docs) else _no_keys()
        codes = judged.fingerprints.get_indexer(pd.Index(fingerprints)).astype(np.int64)
        new = codes < 0
        added, uniques = pd.factorize(fingerprints[new])
        codes[new] = known + added
        first = _first_rows(added.astype(np.int64), len(uniques))
        firsts = _concat([judged.firsts, run_docs.filter(_mask(new)).take(_indices(first))])
        if _same(run_docs, firsts.take(_indices(codes))):
            return np.concatenate([judged.codes, codes]), known + len(uniques)
    every = _concat([judged.doc_ids, run_docs])
    if len(every) == 0:
        return np.zeros(0, dtype=np.int64), 0
    encoded: Any = pc.dictionary_encode(every)
    exact = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return exact, len(encoded.dictionary)


def _first_rows(codes: NDArray[np.int64], count: int) -> NDArray[np.int64]:
    """The row where each of ``count`` codes first appears."""
    import numpy as np

    first = np.empty(count, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return first


def _same(ids: pa.Array, others: pa.Array) -> bool:
    import pyarrow.compute as pc

    if len(ids) == 0:
        return True
    same = pc.equal(ids, others)
    return bool(same.null_count == 0 and pc.all(same).as_py())


def _concat(arrays: list[pa.Array]) -> pa.Array:
    import pyarrow as pa

    return pa.concat_arrays([a.cast(pa.string()) for a in arrays])


def _indices(rows: NDArray[np.int64]) -> pa.Array:
    import pyarrow as pa

    return pa.array(rows, type=pa.int64())


def _mask(mask: NDArray[np.bool_]) -> pa.Array:
    import pyarrow as pa

    return pa.array(mask, type=pa.bool_())


def _no_keys() -> NDArray[np.uint64]:
    import numpy as np

    return np.zeros(0, dtype=np.uint64)


def coded_bound(
    coded: CodedPair, by_depth: dict[int, list[str]]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int], dict[str, int], dict[str, int],
           dict[str, int]] | None:  # fmt: skip
    """``optimistic_bound`` from the codes: the fields of its ``BoundScores`` (metrics grouped
    by depth ``k``), or None when the scoring must be left to ``evaluate`` on the text."""
    import numpy as np
    import pandas as pd

    from evalplat.metrics.coded_run import CodedScorer, find_sorted
    from evalplat.metrics.ranking import UNJUDGED

    judged = coded.judgments.pairs(coded.docs)
    sides = {"baseline": coded.baseline, "candidate": coded.candidate}
    keys = {side: rows.pairs(coded.docs) for side, rows in sides.items()}
    runs = [(coded.topic[rows.query], keys[side], rows.value) for side, rows in sides.items()]
    scorer = CodedScorer.of(
        coded.topics, (coded.topic[coded.judgments.query], judged, coded.judgments.value), runs
    )
    if scorer is None:
        return None
    # the rows without a judgment: the scorer looked up the grades of every row of a topic;
    # rows of other queries (a run of another version of the test set) are looked up here
    open_rows: dict[str, NDArray[np.bool_]] = {}
    known: NDArray[np.int64] | None = None  # every judgment's key, sorted once if needed
    for side, rows, (_, grade, _) in zip(sides, scorer.rows, scorer.runs, strict=True):
        open_side = np.zeros(len(keys[side]), dtype=bool)
        open_side[rows] = grade == UNJUDGED
        outside = np.ones(len(keys[side]), dtype=bool)
        outside[rows] = False
        if outside.any():
            known = np.sort(judged) if known is None else known
            open_side[outside] = ~find_sorted(known, keys[side][outside])[1]
        open_rows[side] = open_side

    def unjudged(side: str, k: int) -> NDArray[np.int64]:
        new: NDArray[np.int64] = keys[side][(sides[side].value <= k) & open_rows[side]]
        return new

    frames: dict[str, list[pd.DataFrame]] = {"baseline": [], "candidate": []}
    depths: dict[str, int] = {}
    counts: tuple[dict[str, int], dict[str, int], dict[str, int]] = ({}, {}, {})
    width = max(coded.docs, 1)
    for k, names in by_depth.items():
        new, base_new = unjudged("candidate", k), unjudged("baseline", k)
        # each pair once, the candidate's first; grade 1
        extra = pd.unique(np.concatenate([new, base_new]))
        scored = scorer.score(names, (coded.topic[extra // width], extra))
        if scored is None:
            return None
        for side, frame in zip(sides, scored, strict=True):
            frames[side].append(frame)
        for name in names:
            depths[name] = k
            counts[0][name] = len(new)
            counts[1][name] = len(np.unique(new // width))
            counts[2][name] = len(base_new)
    return (
        pd.concat(frames["baseline"], ignore_index=True),
        pd.concat(frames["candidate"], ignore_index=True),
        depths,
        *counts,
    )
