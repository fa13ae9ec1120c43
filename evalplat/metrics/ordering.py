"""trec_eval's order of a run: topic segments, score descending, ties by doc id descending.

trec_eval compares doc ids with ``strcmp``, so ties are broken in byte order; here the ids are
compared as big-endian 8-byte words (:class:`~evalplat.metrics.doc_keys.StringColumn`), and only
the tied rows are looked at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.doc_keys import StringColumn


def score_order(
    topic: NDArray[np.int32], score: NDArray[np.float64], docs: StringColumn
) -> NDArray[np.int64] | None:
    """Permutation into (topic segments, score desc, doc id desc); None when already in order.

    Most run files are already grouped by topic and sorted by score, so the common case costs
    a few vectorised comparisons. Only tied rows need their doc ids, compared as big-endian words
    (byte order, as trec_eval's ``strcmp``); groups already descending stay, groups written
    ascending (a common tool convention) are reversed, anything else is sorted.
    """
    n = len(topic)
    if n == 0:
        return None
    same_topic = topic[1:] == topic[:-1]
    segment_topics = topic[np.flatnonzero(np.concatenate(([True], ~same_topic)))]
    contiguous = np.bincount(segment_topics).max() <= 1
    order: NDArray[np.int64] | None = None
    if not (contiguous and not (same_topic & (score[1:] > score[:-1])).any()):
        order = np.lexsort((-score, topic))
        topic, score = topic[order], score[order]
        same_topic = topic[1:] == topic[:-1]
    tie = same_topic & (score[1:] == score[:-1])
    pairs = np.flatnonzero(tie)  # row i ties with row i + 1
    if len(pairs) == 0:
        return order
    source = (lambda rows: rows) if order is None else (lambda rows: order[rows])
    in_tie = np.zeros(n, dtype=bool)
    in_tie[pairs] = True
    in_tie[pairs + 1] = True
    rows = np.flatnonzero(in_tie)
    longest = int(docs.lengths[source(rows)].max())
    above = [docs.word(source(pairs), index) for index in range((longest + 7) // 8)]
    below = [docs.word(source(pairs + 1), index) for index in range((longest + 7) // 8)]
    direction = compare_words(above, below)
    if (direction > 0).all():
        return order
    new_group = np.ones(len(rows), dtype=bool)
    new_group[1:] = ~tie[rows[1:] - 1]
    if (direction < 0).all():
        # each group written ascending: reverse it in place (row first + last - i for row i)
        starts = np.flatnonzero(new_group)
        ends = np.append(starts[1:], len(rows))
        mirror = np.repeat(starts + ends - 1, ends - starts)
        mirror -= np.arange(len(rows))
        within = rows[mirror]
    else:
        keys = docs.sort_words(source(rows))
        within = rows[np.lexsort([~word for word in reversed(keys)] + [np.cumsum(new_group)])]
    if order is None:
        order = np.arange(n, dtype=np.int64)
    order[rows] = order[within]
    return order


def compare_words(
    left: list[NDArray[np.uint64]], right: list[NDArray[np.uint64]]
) -> NDArray[np.int8]:
    """Per row: 1 when the left id sorts after the right one in byte order, -1 before, 0 same."""
    result = np.zeros(len(left[0]) if left else 0, dtype=np.int8)
    undecided = np.ones(len(result), dtype=bool)
    for a, b in zip(left, right, strict=True):
        result[undecided & (a > b)] = 1
        result[undecided & (a < b)] = -1
        undecided &= a == b
    return result
