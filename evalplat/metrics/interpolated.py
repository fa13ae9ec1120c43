"""Interpolated precision at recall levels (trec_eval's iprec_at_recall_x and 11pt_avg).

The interpolated precision at recall level x is the highest precision at any rank at or below
the rank where ⌊x · R + 0.9⌋ relevant documents have been found (trec_eval 9's rounding; at
least the first relevant document), and 0 when the run never finds that many. Computed over all
topics at once: the precision at each relevant retrieved document, then a running maximum from
the bottom of each topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import view
from evalplat.metrics.ranking import Judgments, Ranking, ranks_within

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


def _interpolated(ranking: Ranking, judgments: Judgments, metric: Metric,
                  levels: tuple[float, ...]) -> NDArray[np.float64]:  # fmt: skip
    """Interpolated precision per (level, topic): one row per recall level."""
    ranked = view(ranking, metric)
    rows = np.flatnonzero(ranked.grade >= metric.rel)
    topic = ranked.topic[rows]
    nth = ranks_within(topic)  # 0-based: the n-th relevant document of its topic
    precision = (nth + 1) / (ranked.rank[rows] + 1.0)
    best = _suffix_max(topic, precision)
    found = np.bincount(topic, minlength=ranked.n_topics)
    first = np.full(ranked.n_topics, -1, dtype=np.int64)
    first[topic[::-1]] = np.arange(len(topic) - 1, -1, -1)
    r = judgments.relevant_count(metric.rel)
    out = np.zeros((len(levels), ranked.n_topics))
    for i, level in enumerate(levels):
        needed = np.maximum(np.floor(level * r + 0.9).astype(np.int64), 1)
        reached = needed <= found
        out[i, reached] = best[first[reached] + needed[reached] - 1]
    return out


def _suffix_max(topic: NDArray[np.int32], values: NDArray[np.float64]) -> NDArray[np.float64]:
    """The maximum of ``values`` from each position to the end of its topic's segment.

    Values lie in [0, 1]: each segment is lifted 2 above every segment after it, so one running
    maximum over the reversed array never carries from one segment into the next.
    """
    if not len(values):
        return values
    segment = np.concatenate(([0], np.cumsum(topic[1:] != topic[:-1])))
    lifted = values - 2.0 * segment
    best = np.maximum.accumulate(lifted[::-1])[::-1]
    return best + 2.0 * segment


def iprec_at_recall(ranking: Ranking, judgments: Judgments, metric: Metric
                    ) -> NDArray[np.float64]:  # fmt: skip
    """IPrec@x: interpolated precision at recall level x (the ``recall`` parameter)."""
    level = float(metric.param("recall"))  # type: ignore[arg-type]
    values: NDArray[np.float64] = _interpolated(ranking, judgments, metric, (level,))[0]
    return values


def eleven_point_average(ranking: Ranking, judgments: Judgments, metric: Metric
                         ) -> NDArray[np.float64]:  # fmt: skip
    """The mean of IPrec at the ``levels`` parameter's recall levels, by default 0.0, 0.1, ...,
    1.0 (trec_eval's 11pt_avg)."""
    levels: tuple[float, ...] = metric.param("levels")  # type: ignore[assignment]
    values: NDArray[np.float64] = _interpolated(ranking, judgments, metric, levels)
    mean: NDArray[np.float64] = values.mean(axis=0)
    return mean
