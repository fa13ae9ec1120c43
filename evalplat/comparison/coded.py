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


def code_pair(
    judgments: pd.DataFrame,
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    topics: Sequence[str],
) -> CodedPair:
    """Code ``judgments`` (``query_id, doc_id, grade``) and both runs' results (``query_id,
    doc_id, rank``) over one set of codes; ``topics`` are the test set version's query ids."""
    import numpy as np
    import pyarrow as pa

    frames = (judgments, baseline, candidate)
    columns = [_strings(frame["query_id"]) for frame in frames]
    queries = sorted({str(t) for t in topics}.union(*(_group_ids(c) for c in columns)))
    position = {query: code for code, query in enumerate(queries)}
    doc_ids = pa.concat_arrays([_strings(frame["doc_id"]) for frame in frames])
    doc_codes, docs = _doc_codes(doc_ids)
    rows = []
    start = 0
    for frame, column, value in zip(frames, columns, ("grade", "rank", "rank"), strict=True):
        end = start + len(frame)
        rows.append(
            CodedRows(
                _query_codes(column, position),
                doc_codes[start:end],
                frame[value].to_numpy(dtype=np.int64),
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


def _doc_codes(doc_ids: pa.Array) -> tuple[NDArray[np.int64], int]:
    """(dense code per id, number of distinct ids), exact whatever the fingerprints do."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalplat.metrics.doc_keys import StringColumn

    if len(doc_ids) == 0:
        return np.zeros(0, dtype=np.int64), 0
    codes, uniques = pd.factorize(StringColumn.of(doc_ids).fingerprint())
    first = np.empty(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    same = pc.equal(doc_ids, doc_ids.take(pa.array(first[codes])))
    if same.null_count == 0 and pc.all(same).as_py():
        return codes.astype(np.int64), len(uniques)
    encoded: Any = pc.dictionary_encode(doc_ids)
    exact = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return exact, len(encoded.dictionary)


def coded_bound(
    coded: CodedPair, by_depth: dict[int, list[str]]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int], dict[str, int], dict[str, int],
           dict[str, int]] | None:  # fmt: skip
    """``optimistic_bound`` from the codes: the fields of its ``BoundScores`` (metrics grouped
    by depth ``k``), or None when the scoring must be left to ``evaluate`` on the text."""
    import numpy as np
    import pandas as pd

    from evalplat.metrics.coded_run import CodedScorer, find_sorted

    judged = coded.judgments.pairs(coded.docs)
    known = np.sort(judged)
    sides = {"baseline": coded.baseline, "candidate": coded.candidate}
    keys = {side: rows.pairs(coded.docs) for side, rows in sides.items()}

    open_rows = {side: ~find_sorted(known, keys[side])[1] for side in sides}

    def unjudged(side: str, k: int) -> NDArray[np.int64]:
        new: NDArray[np.int64] = keys[side][(sides[side].value <= k) & open_rows[side]]
        return new

    runs = [(coded.topic[rows.query], keys[side], rows.value) for side, rows in sides.items()]
    scorer = CodedScorer.of(
        coded.topics, (coded.topic[coded.judgments.query], judged, coded.judgments.value), runs
    )
    if scorer is None:
        return None
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
