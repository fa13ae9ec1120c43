"""Rank-sensitive binary measures: RR, AP and infAP (trec_eval's recip_rank, map, map_cut_k and
infAP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide, view
from evalplat.metrics.ranking import UNJUDGED, Judgments, Ranking, ranks_within

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


# trec_eval's INFAP_EPSILON: keeps infAP's estimate defined before any judged document
INFAP_EPSILON = 0.00001


def inferred_ap(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """infAP (Yilmaz and Aslam 2006), as trec_eval computes it.

    Documents without a judgment are outside the pool and skipped; a negative grade marks a
    pooled document left unjudged (trec_eval reads every negative grade so). A relevant
    document at 0-based position j > 0 adds 1/(j+1) + j/(j+1) · (above pooled / j) ·
    (rel above + ε) / (judged above + 2ε), the first one 1; the sum is divided by R.
    """
    ranked = view(ranking, metric)
    grade = ranked.grade
    unjudged_pooled = (grade < 0) & (grade != UNJUDGED)
    nonrelevant = (grade >= 0) & (grade < metric.rel)
    relevant = grade >= metric.rel
    rel_above = (ranked.cumulative_within(relevant) - relevant)[relevant].astype(float)
    non_above = (ranked.cumulative_within(nonrelevant) - nonrelevant)[relevant].astype(float)
    pool_above = (ranked.cumulative_within(unjudged_pooled) - unjudged_pooled)[relevant]
    j = ranked.rank[relevant].astype(float)
    pooled = rel_above + non_above + pool_above
    estimate = (rel_above + INFAP_EPSILON) / (rel_above + non_above + 2 * INFAP_EPSILON)
    safe_j = np.where(j > 0, j, 1.0)
    terms = np.where(j > 0, 1 / (j + 1) + j / (j + 1) * (pooled / safe_j) * estimate, 1.0)
    total = np.bincount(ranked.topic[relevant], weights=terms, minlength=ranked.n_topics)
    r = judgments.relevant_count(metric.rel)
    return np.where(r > 0, safe_divide(total.astype(float), r), total)
