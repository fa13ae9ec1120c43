"""Judged rankings as flat numpy arrays: the one structure every metric kernel reads.

Rows of one topic are contiguous and in rank order (``evalplat.metrics.build`` makes them), so
every measure is a vectorised reduction over segments (``np.bincount`` on the topic code,
cumulative sums within segments) — no per-query Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

UNJUDGED = np.iinfo(np.int32).min  # grade of a retrieved document that has no judgment


@dataclass
class Judgments:
    """Qrels restricted to the topics, as codes: one row per judgment."""

    n_topics: int
    topic: NDArray[np.int32]
    grade: NDArray[np.int32]
    # R per topic by ``rel``, counted once: one version's judgments score every run of a night
    _relevant: dict[int, NDArray[np.float64]] = field(default_factory=dict, repr=False)

    def relevant_count(self, rel: int) -> NDArray[np.float64]:
        """R per topic: judgments with grade >= rel (read only: the array is kept)."""
        count = self._relevant.get(rel)
        if count is None:
            mask = self.grade >= rel
            count = np.bincount(self.topic[mask], minlength=self.n_topics).astype(float)
            count.flags.writeable = False
            self._relevant[rel] = count
        return count

    def nonrelevant_count(self, rel: int) -> NDArray[np.float64]:
        """N per topic: judged non-relevant (0 <= grade < rel); negative grades are not counted."""
        mask = (self.grade >= 0) & (self.grade < rel)
        return np.bincount(self.topic[mask], minlength=self.n_topics).astype(float)

    @cached_property
    def ideal(self) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int64]]:
        """(topic, grade, 0-based rank) of the judgments in ideal order: grade descending."""
        order = np.lexsort((-self.grade.astype(np.int64), self.topic))
        topic = self.topic[order]
        return topic, self.grade[order], ranks_within(topic)

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
    # the doc id of each row (an Arrow string array), kept only for measures of documents
    doc_ids: Any = field(default=None, repr=False)

    @cached_property
    def rank(self) -> NDArray[np.int64]:
        """0-based rank of each row within its topic."""
        rank = np.arange(len(self.topic), dtype=np.int64)
        rank -= self.segment_start
        return rank

    @cached_property
    def num_ret(self) -> NDArray[np.float64]:
        """Number of retrieved documents per topic."""
        return np.bincount(self.topic, minlength=self.n_topics).astype(float)

    @cached_property
    def segment_start(self) -> NDArray[np.int64]:
        """Index of the first row of each row's topic segment."""
        return segment_starts(self.topic)

    def judged_only(self) -> Ranking:
        """The ranking with unjudged documents removed, as trec_eval's ``-J`` removes them: a
        document graded below zero counts as unjudged and goes too (``UNJUDGED`` is below
        zero)."""
        if self._judged_view is None:
            keep = self.grade >= 0
            self._judged_view = Ranking(self.n_topics, self.topic[keep], self.grade[keep])
        return self._judged_view

    def top(self, k: int) -> Ranking:
        """The first ``k`` documents of each topic (trec_eval's ``-M``)."""
        keep = self.rank < k
        doc_ids = None if self.doc_ids is None else self.doc_ids.filter(keep)
        return Ranking(self.n_topics, self.topic[keep], self.grade[keep], doc_ids=doc_ids)

    def cumulative_within(self, flags: NDArray[np.bool_] | NDArray[np.int64]
                          ) -> NDArray[np.int64]:  # fmt: skip
        """Inclusive running count of ``flags`` (or sum of whole numbers) within each topic
        segment; exact."""
        total = np.cumsum(flags, dtype=np.int64)
        before = np.concatenate(([0], total))[self.segment_start]
        return total - before

    def running_sum_within(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Inclusive running sum of ``values`` within each topic segment."""
        total = np.cumsum(values)
        before = np.concatenate(([0.0], total))[self.segment_start]
        within: NDArray[np.float64] = total - before
        return within

    def per_topic(self, values: NDArray[np.float64] | NDArray[np.bool_], mask: NDArray[np.bool_]
                  ) -> NDArray[np.float64]:  # fmt: skip
        """Sum of ``values`` over the rows selected by ``mask``, per topic."""
        weights = values[mask].astype(float)
        return np.bincount(self.topic[mask], weights=weights, minlength=self.n_topics).astype(float)


def segment_starts(topic: NDArray[np.int32]) -> NDArray[np.int64]:
    """Index of the first row of each row's run of equal consecutive topic codes."""
    n = len(topic)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(topic[1:], topic[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return np.repeat(starts, np.diff(np.append(starts, n)))


def ranks_within(topic: NDArray[np.int32]) -> NDArray[np.int64]:
    """0-based position within runs of equal consecutive topic codes."""
    rank = np.arange(len(topic), dtype=np.int64)
    rank -= segment_starts(topic)
    return rank
