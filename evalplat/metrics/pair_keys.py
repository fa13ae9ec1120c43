"""(topic, doc) pairs as 64-bit keys, checked for repeats on both cores.

A pair's key is its doc id's fingerprint (:class:`~evalplat.metrics.doc_keys.StringColumn`)
mixed with a scaled topic code. Equal pairs always get equal keys; a key shared by two different
pairs (a clash, probability ~2^-64 per pair) is told apart from a real repeat on the strings.

The run's keys are made, looked up among the judgments' keys and sorted in one pass
(:func:`match_pairs`): in two parts of a million rows or more, one per core (NumPy releases the
GIL in each step), each part in blocks small enough to stay in the cache. The second part
takes a thread of its own only where pyarrow's CPU budget (``pyarrow.cpu_count()``: the cores
the process may run on, ``OMP_NUM_THREADS``, or ``pyarrow.set_cpu_count``) has a second
core, the budget the parse of the run's text runs on too. Repeats inside a part
show in its sorted keys; across parts only when a topic has rows in both, which a run written
topic by topic never has, because the parts are cut where the topic changes. Anything suspicious
goes to the full check on all keys, which names the pair.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalplat.metrics.arrow_columns import arrow, booleans, combined

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.doc_keys import StringColumn
    from evalplat.metrics.key_table import KeyTable

_TOPIC_STEP = np.uint64(0xD6E8FEB86659FD93)
# below this many rows one core keys the pairs: a thread costs more than it saves
_PARALLEL_ROWS = 1 << 20
# rows keyed and looked up at a time: their temporaries (0.5 MB each) stay in the cache
_BLOCK_ROWS = 1 << 16


class DuplicateError(Exception):
    """Internal: a duplicate pair was found; the caller names the line or the pair."""

    def __init__(self, kind: str, query_id: str, doc_id: str) -> None:
        super().__init__(kind, query_id, doc_id)
        self.kind = kind
        self.query_id = query_id
        self.doc_id = doc_id


class Collision(Exception):
    """Internal: two different (topic, doc) pairs share a key; use the exact path."""


def pair_keys(
    topic: NDArray[np.int32], docs: StringColumn, out: NDArray[np.uint64] | None = None
) -> NDArray[np.int64]:
    """The key of each (topic, doc) row, written into ``out`` when given."""
    salt = topic.astype(np.uint64)
    salt *= _TOPIC_STEP
    keys: NDArray[np.int64] = docs.fingerprint(salt, out=out).view(np.int64)
    return keys


def unique_pair_keys(
    topic: NDArray[np.int32], docs: StringColumn, table: pa.Table, kind: str
) -> NDArray[np.int64]:
    """:func:`pair_keys` of every row; raises ``DuplicateError`` when a pair repeats and
    ``Collision`` when two different pairs share a key."""
    keys = pair_keys(topic, docs)
    check_unique(keys, table, topic, kind)
    return keys


def match_pairs(
    topic: NDArray[np.int32], docs: StringColumn, table: pa.Table, kind: str, judged: KeyTable
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(rows, positions in ``judged``) of the rows whose key is in ``judged``; raises as
    :func:`unique_pair_keys` does.

    Each block of rows is keyed and looked up while it is in the cache, with temporaries the
    size of a block that the allocator hands out again (a fresh 10M-element array is 80 MB
    of pages for the kernel to zero). When each topic's rows are one stretch (a run written
    topic by topic), blocks end where topics end and each is sorted in place for the check
    while it is in the cache; otherwise each part's keys are sorted whole.
    """
    n = len(topic)
    split = _split_point(topic) if n >= _PARALLEL_ROWS and _cores() > 1 else 0
    changes = np.flatnonzero(topic[1:] != topic[:-1]) + 1  # rows where a new topic starts
    # each topic in one stretch of rows: a repeat stays inside its topic's block
    grouped = n == 0 or np.bincount(topic[np.append(0, changes)]).max() <= 1

    def part(start: int, stop: int) -> tuple[bool, NDArray[np.int64], list[NDArray[np.int64]]]:
        keys = np.empty(stop - start, dtype=np.int64)
        repeats = False
        found: list[NDArray[np.int64]] = [np.zeros((2, 0), dtype=np.int64)]
        for low, high in _blocks(changes if grouped else None, start, stop):
            block = keys[low - start : high - start]
            rows, where = judged.find(pair_keys(topic[low:high], docs.part(slice(low, high)),
                                                block.view(np.uint64)))  # fmt: skip
            found.append(np.stack((rows + low, where)))
            if grouped:  # sorted while in the cache
                block.sort()
                repeats = repeats or _repeats(block)
        if not grouped:
            keys.sort()
            repeats = _repeats(keys)
        return repeats, keys, found

    if split == 0:
        parts = [part(0, n)]
    else:
        with ThreadPoolExecutor(1) as pool:
            later = pool.submit(part, split, n)
            parts = [part(0, split), later.result()]
    suspect = any(repeats for repeats, _, _ in parts)
    if not suspect and split and not grouped and _share_topics(topic, split):
        suspect = _meet(parts[0][1], parts[1][1])
    joined = np.concatenate([pair for _, _, found in parts for pair in found], axis=1)
    del parts
    rows, matched = joined[0], joined[1]
    if suspect:  # the full check names the pair, or says two pairs share a key
        check_unique(pair_keys(topic, docs), table, topic, kind)
    return rows, matched


def _cores() -> int:
    """pyarrow's CPU budget: the threads the parse and the key-making may keep busy."""
    return int(pa.cpu_count())


def _blocks(changes: NDArray[np.int64] | None, start: int, stop: int) -> list[tuple[int, int]]:
    """Row ranges of about ``_BLOCK_ROWS`` covering ``start:stop``; with ``changes`` (the rows
    where a topic starts) each range ends where a topic does, so it holds whole topics."""
    if changes is None:
        return [(low, min(low + _BLOCK_ROWS, stop)) for low in range(start, stop, _BLOCK_ROWS)]
    ranges = []
    low = start
    while low < stop:
        at = int(np.searchsorted(changes, low + _BLOCK_ROWS))
        high = min(int(changes[at]), stop) if at < len(changes) else stop
        ranges.append((low, high))
        low = high
    return ranges


def _split_point(topic: NDArray[np.int32]) -> int:
    """A row near the middle where the topic changes (0 when there is none)."""
    middle = len(topic) // 2
    window = 1 << 16
    for start in range(middle, len(topic), window):
        changes = np.flatnonzero(topic[start : start + window] != topic[start - 1])
        if len(changes):
            return start + int(changes[0])
    return 0  # one topic from the middle on: one part


def _repeats(ordered: NDArray[np.int64]) -> bool:
    return bool((ordered[1:] == ordered[:-1]).any())


def _share_topics(topic: NDArray[np.int32], split: int) -> bool:
    """Whether a topic has rows on both sides of ``split``."""
    width = int(topic.max(initial=-1)) + 1
    before = np.bincount(topic[:split], minlength=width) > 0
    after = np.bincount(topic[split:], minlength=width) > 0
    return bool((before & after).any())


def _meet(first: NDArray[np.int64], second: NDArray[np.int64]) -> bool:
    """Whether two sorted arrays share a value (sorted needles walk the table in order)."""
    if len(first) == 0 or len(second) == 0:
        return False
    position = np.searchsorted(first, second)
    position[position == len(first)] = 0
    return bool((first[position] == second).any())


def check_unique(
    keys: NDArray[np.int64], table: pa.Table, topic: NDArray[np.int32], kind: str
) -> None:
    """Raise ``DuplicateError`` (a real repeat) or ``Collision`` (a fingerprint clash).

    A plain sort (much cheaper than an argsort) decides; rows are located only on a clash.
    """
    ordered = np.sort(keys)
    if not _repeats(ordered):
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
