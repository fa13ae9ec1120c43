"""Compatibility (Clarke, Vtyurina and Smucker, "Assessing top-k preferences", TOIS 2021; arXiv
2020), as ir_measures' compat provider computes it: the rank-biased overlap of a ranking with
an ideal ranking of the topic's relevant documents.

The RBO of rankings a and b to depth D, with persistence p, is::

    RBO = sum_{d<=D} p^(d-1) |a[:d] ∩ b[:d]| / d  /  sum_{d<=D} p^(d-1)

with D = max(|run|, |ideal|). A relevant document at run position x and ideal position y is
in both prefixes from depth m = max(x, y) on, so the overlap sum is, per such document,
F(D) - F(m - 1) with F(n) = sum_{d<=n} p^(d-1) / d: no per-depth loop. Normalised, Compat
divides by the ideal's RBO with itself, whose overlap at depth d is min(d, R).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide
from evalplat.metrics.ranking import Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

# the grade from which a document enters the ideal ranking (ir_measures: relevance > 0)
RELEVANT = 1


def compat(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Compat = RBO(run, ideal) / RBO(ideal, ideal); 0 without relevant judgments or results.

    The ideal ranking sorts the judged documents of grade ≥ 1 by grade, and within a grade puts
    the retrieved ones in the run's order, then those not retrieved.
    """
    p = float(metric.param("persist"))  # type: ignore[arg-type]
    retrieved = ranking.num_ret.astype(np.int64)
    r = judgments.relevant_count(RELEVANT).astype(np.int64)
    depth = np.maximum(retrieved, r)
    weights = np.power(p, np.arange(int(depth.max(initial=0)), dtype=float))
    by_depth = np.concatenate(([0.0], np.cumsum(weights / np.arange(1, len(weights) + 1))))
    plain = np.concatenate(([0.0], np.cumsum(weights)))

    rows = np.flatnonzero(ranking.grade >= RELEVANT)
    topic = ranking.topic[rows]
    first_shared = np.maximum(ranking.rank[rows] + 1, _ideal_positions(ranking, judgments, rows))
    terms = by_depth[depth[topic]] - by_depth[first_shared - 1]
    overlap = np.bincount(topic, weights=terms, minlength=ranking.n_topics).astype(float)
    if metric.param("normalize"):
        best = plain[r] + r * (by_depth[depth] - by_depth[r])
        return safe_divide(overlap, best)
    return safe_divide(overlap, plain[depth])


def _ideal_positions(ranking: Ranking, judgments: Judgments, rows: NDArray[np.int64]
                     ) -> NDArray[np.int64]:  # fmt: skip
    """1-based ideal position of each retrieved relevant row: the topic's judgments of a higher
    grade, plus the retrieved ones of its grade ranked above it, plus one."""
    grade = ranking.grade[rows].astype(np.int64)
    topic = ranking.topic[rows].astype(np.int64)
    top = max(judgments.max_grade, int(grade.max(initial=0)))
    span = top - min(int(judgments.grade.min(initial=0)), 0) + 1
    # judgments sorted by topic, grade descending: one key orders them, searchsorted counts
    judged_topic, judged_grade, _ = judgments.ideal
    keys = judged_topic.astype(np.int64) * span + (top - judged_grade.astype(np.int64))
    higher = np.searchsorted(keys, topic * span + (top - grade)) - np.searchsorted(
        keys, topic * span
    )
    order = np.lexsort((ranking.rank[rows], -grade, topic))
    group = (topic * span + (top - grade))[order]
    new = np.ones(len(group), dtype=bool)
    new[1:] = group[1:] != group[:-1]
    starts = np.flatnonzero(new)
    within = np.arange(len(group)) - np.repeat(starts, np.diff(np.append(starts, len(group))))
    same_above = np.empty(len(group), dtype=np.int64)
    same_above[order] = within
    positions: NDArray[np.int64] = higher + same_above + 1
    return positions
