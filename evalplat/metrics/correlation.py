"""Rank correlation between the retrieved order and the judged grades: Kendall tau-b, Spearman.

Per topic the pairs are the judged documents among the top k (all retrieved without a cutoff;
with ``judged_only`` the first k judged ones): x is the position (the higher a document is
ranked, the larger its x), y its grade. A negative grade counts as 0, as it gains 0 in DCG, so
"not relevant" and "judged but not pooled" tie. Unjudged documents take no part: a grade they do
not have cannot agree or disagree with their position.

A value of +1 says the engine ranked the judged documents exactly by grade, -1 exactly against
it. Both measures are 0 when fewer than two judged documents are in the top k or when all their
grades tie: there is then no order to agree with (SciPy answers NaN), and 0 — "no evidence either
way" — keeps every topic in means and paired tests, as a topic without results scores 0 in every
other measure.

Kernels are vectorised over topics: the selected rows stay grouped by topic in rank order, and
grades are coded as levels, so concordant pairs are running counts per level (a pass per
distinct grade, a handful on every graded scale) rather than a loop over pairs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide, view
from evalplat.metrics.ranking import UNJUDGED, Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


class _Pairs:
    """The judged documents of the top k of each topic, in rank order, grades as levels."""

    def __init__(self, ranking: Ranking, metric: Metric) -> None:
        ranked = view(ranking, metric)
        mask = ranked.grade != UNJUDGED
        if metric.cutoff is not None:
            mask &= ranked.rank < metric.cutoff
        grade = np.maximum(ranked.grade[mask], 0)
        # a Ranking of the selected rows gives positions and running counts within topics
        self.rows = Ranking(ranked.n_topics, ranked.topic[mask], grade)
        self.levels, self.level = np.unique(grade, return_inverse=True)
        self.level = self.level.reshape(-1).astype(np.int64)
        self.count = self.rows.num_ret  # n per topic
        width = max(len(self.levels), 1)
        keys = self.rows.topic.astype(np.int64) * width + self.level
        # one group per (topic, grade level): its size is the number of tied grades
        self.group_keys, self.group_of, self.group_size = np.unique(
            keys, return_inverse=True, return_counts=True
        )
        self.group_of = self.group_of.reshape(-1)
        self.group_topic = self.group_keys // width

    def tied_pairs(self) -> NDArray[np.float64]:
        """Pairs with equal grades, per topic: sum over grade levels of t (t - 1) / 2."""
        size = self.group_size.astype(float)
        return np.bincount(
            self.group_topic, weights=size * (size - 1) / 2, minlength=self.rows.n_topics
        ).astype(float)

    def lower_in_topic(self) -> NDArray[np.float64]:
        """Per row: how many rows of its topic have a lower grade."""
        size = self.group_size.astype(np.int64)
        before = np.cumsum(size) - size  # rows in earlier groups, across topics
        first = np.ones(len(size), dtype=bool)
        first[1:] = self.group_topic[1:] != self.group_topic[:-1]
        topic_first = np.maximum.accumulate(np.where(first, np.arange(len(size)), 0))
        lower: NDArray[np.float64] = (before - before[topic_first])[self.group_of].astype(float)
        return lower


def kendall_tau(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """tau_b = (C - D) / sqrt(n0 (n0 - T)) over the judged documents of the top k.

    A pair is concordant (C) when the higher-ranked document has the higher grade, discordant (D)
    when it has the lower one; tied grades are neither. n0 = n (n - 1) / 2 pairs, T = pairs with
    tied grades; positions never tie, so tau-b's other tie term is 0. 0 when n0 - T = 0 (fewer
    than two documents, or all grades equal).
    """
    pairs = _Pairs(ranking, metric)
    rows, level = pairs.rows, pairs.level
    higher_above = np.zeros(len(level), dtype=np.int64)  # earlier rows with a higher grade
    lower_above = np.zeros(len(level), dtype=np.int64)
    for code in range(len(pairs.levels)):
        at_level = level == code
        above = rows.cumulative_within(at_level) - at_level  # earlier rows at this level
        higher_above += np.where(level < code, above, 0)
        lower_above += np.where(level > code, above, 0)
    score = np.bincount(
        rows.topic, weights=(higher_above - lower_above).astype(float), minlength=rows.n_topics
    ).astype(float)
    all_pairs = pairs.count * (pairs.count - 1) / 2
    return safe_divide(score, np.sqrt(all_pairs * (all_pairs - pairs.tied_pairs())))


def spearman(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """rho = Pearson correlation of the position ranks and the grade ranks (average for ties).

    Over the n judged documents of the top k: the document ranked first gets position rank n,
    the last 1; grades are ranked ascending, tied grades sharing the average of their ranks.
    Both rank vectors have mean (n + 1) / 2. 0 when the grade ranks do not vary (fewer than
    two documents, or all grades equal).
    """
    pairs = _Pairs(ranking, metric)
    rows = pairs.rows
    n = pairs.count[rows.topic]
    centre = (n + 1) / 2
    x = n - rows.rank - centre
    size = pairs.group_size[pairs.group_of].astype(float)
    y = pairs.lower_in_topic() + (size + 1) / 2 - centre
    topics = rows.n_topics

    def per_topic(values: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(rows.topic, weights=values, minlength=topics).astype(float)

    spread = per_topic(x * x) * per_topic(y * y)
    return safe_divide(per_topic(x * y), np.sqrt(spread))
