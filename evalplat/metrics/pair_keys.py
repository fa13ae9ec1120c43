"""(topic, doc) pairs as 64-bit keys, checked for repeats.

A pair's key is its doc id's fingerprint (:class:`~evalplat.metrics.doc_keys.StringColumn`)
mixed with a scaled topic code. Equal pairs always get equal keys; a key shared by two different
pairs (a clash, probability ~2^-64 per pair) is told apart from a real repeat on the strings.

"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalplat.metrics.arrow_columns import arrow, booleans, combined

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.doc_keys import StringColumn

_TOPIC_STEP = np.uint64(0xD6E8FEB86659FD93)


class DuplicateError(Exception):
    """Internal: a duplicate pair was found; the caller names the line or the pair."""

    def __init__(self, kind: str, query_id: str, doc_id: str) -> None:
        super().__init__(kind, query_id, doc_id)
        self.kind = kind
        self.query_id = query_id
        self.doc_id = doc_id


class Collision(Exception):
    """Internal: two different (topic, doc) pairs share a key; use the exact path."""


def pair_keys(topic: NDArray[np.int32], docs: StringColumn) -> NDArray[np.int64]:
    """The key of each (topic, doc) row."""
    salt = topic.astype(np.uint64)
    salt *= _TOPIC_STEP
    keys: NDArray[np.int64] = docs.fingerprint(salt).view(np.int64)
    return keys


def unique_pair_keys(
    topic: NDArray[np.int32], docs: StringColumn, table: pa.Table, kind: str
) -> NDArray[np.int64]:
    """:func:`pair_keys` of every row; raises ``DuplicateError`` when a pair repeats and
    ``Collision`` when two different pairs share a key."""
    keys = pair_keys(topic, docs)
    check_unique(keys, table, topic, kind)
    return keys


def check_unique(
    keys: NDArray[np.int64], table: pa.Table, topic: NDArray[np.int32], kind: str
) -> None:
    """Raise ``DuplicateError`` (a real repeat) or ``Collision`` (a fingerprint clash).

    A plain sort (much cheaper than an argsort) decides; rows are located only on a clash.
    """
    ordered = np.sort(keys)
    if not (ordered[1:] == ordered[:-1]).any():
        return
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    clash = np.flatnonzero(ordered[1:] == ordered[:-1])
    first, second = order[clash], order[clash + 1]
    real = same_pairs(table, first, table, second, topic, topic)
    if real.any():
        row = int(second[np.argmax(real)])
        raise DuplicateError(
            kind, str(table.column("query_id")[row]), str(table.column("doc_id")[row])
        )
    raise Collision


def same_pairs(
    left: pa.Table,
    left_rows: NDArray[np.int64],
    right: pa.Table,
    right_rows: NDArray[np.int64],
    left_topic: NDArray[np.int32],
    right_topic: NDArray[np.int32],
) -> NDArray[np.bool_]:
    """Whether each (left row, right row) pair has the same topic and the same doc id."""
    if len(left_rows) == 0:
        return np.zeros(0, dtype=bool)
    docs_left = combined(left.column("doc_id")).take(arrow(left_rows))
    docs_right = combined(right.column("doc_id")).take(arrow(right_rows))
    same_doc = booleans(pc.equal(docs_left, docs_right))
    same: NDArray[np.bool_] = same_doc & (left_topic[left_rows] == right_topic[right_rows])
    return same
