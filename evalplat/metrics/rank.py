"""Rank-sensitive binary measures: RR and AP (trec_eval's recip_rank, map and map_cut_k)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide, view
from evalplat.metrics.ranking import Judgments, Ranking, ranks_within

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


def reciprocal_rank(ranking: Ranking, judgments: Judgments, metric: Metric
                    ) -> NDArray[np.float64]:  # fmt: skip
    """RR@k = 1 / rank of the first relevant document at rank <= k; 0 when there is none."""
    ranked = view(ranking, metric)
    mask = ranked.grade >= metric.rel
    if metric.cutoff is not None:
        mask &= ranked.rank < metric.cutoff
    rows = np.flatnonzero(mask)
    topic = ranked.topic[rows]
    # rows are in rank order within a topic: the first hit of each topic is where it changes
    first = np.ones(len(rows), dtype=bool)
    first[1:] = topic[1:] != topic[:-1]
    out = np.zeros(ranked.n_topics)
    out[topic[first]] = 1.0 / (ranked.rank[rows[first]] + 1)
    return out


def average_precision(ranking: Ranking, judgments: Judgments, metric: Metric
                      ) -> NDArray[np.float64]:  # fmt: skip
    """AP@k = (1/R) * sum over relevant d at rank r <= k of P@r; 0 when R = 0.

    R counts every judged relevant document, retrieved or not (trec_eval's map).
    """
    ranked = view(ranking, metric)
    mask = ranked.grade >= metric.rel
    if metric.cutoff is not None:
        mask &= ranked.rank < metric.cutoff
    # only relevant rows add: the n-th of its topic's (in rank order) adds n / its rank
    rows = np.flatnonzero(mask)
    topic = ranked.topic[rows]
    precision_at_hit = (ranks_within(topic) + 1) / (ranked.rank[rows] + 1.0)
    total = np.bincount(topic, weights=precision_at_hit, minlength=ranked.n_topics).astype(float)
    return safe_divide(total, judgments.relevant_count(metric.rel))
