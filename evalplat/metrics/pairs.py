"""Pairwise measures: Bpref (trec_eval) and AUC over judged documents, and ir_measures'
Accuracy over retrieved ones.

In Bpref and AUC only judged documents take part: relevant means grade >= rel, judged
non-relevant means 0 <= grade < rel. Negative grades (trec_eval's "judged but not in the pool")
and unjudged documents are ignored. Accuracy counts every retrieved document not relevant as
non-relevant, as ir_measures does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide
from evalplat.metrics.ranking import Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


def _flags(ranking: Ranking, rel: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    relevant = ranking.grade >= rel
    nonrelevant = (ranking.grade >= 0) & (ranking.grade < rel)
    return relevant, nonrelevant


def bpref(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Bpref = (1/R) sum over retrieved relevant d of (1 - min(n_d, R) / min(R, N)).

    n_d counts judged non-relevant documents ranked above d; a term is 1 when n_d = 0 (so also
    when N = 0). 0 when R = 0. This is trec_eval's bpref.
    """
    relevant, nonrelevant = _flags(ranking, metric.rel)
    r = judgments.relevant_count(metric.rel)
    n = judgments.nonrelevant_count(metric.rel)
    above = ranking.cumulative_within(nonrelevant)[relevant].astype(float)
    topic = ranking.topic[relevant]
    r_row, n_row = r[topic], n[topic]
    penalty = safe_divide(np.minimum(above, r_row), np.minimum(r_row, n_row))
    terms = np.where(above > 0, 1.0 - penalty, 1.0)
    total = np.bincount(topic, weights=terms, minlength=ranking.n_topics).astype(float)
    return safe_divide(total, r)


def auc(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """AUC = (pairs ordered right + ties / 2) / (R N) over (relevant, judged non-relevant) pairs.

    Unretrieved judged documents rank below every retrieved one and tie among themselves, so a
    relevant document left out of the ranking ties with the non-relevant ones also left out.
    0 when R = 0 or N = 0.
    """
    relevant, nonrelevant = _flags(ranking, metric.rel)
    r = judgments.relevant_count(metric.rel)
    n = judgments.nonrelevant_count(metric.rel)
    topic_count = ranking.n_topics
    n_ret = np.bincount(ranking.topic[nonrelevant], minlength=topic_count).astype(float)
    r_ret = np.bincount(ranking.topic[relevant], minlength=topic_count).astype(float)
    above = ranking.cumulative_within(nonrelevant)[relevant].astype(float)
    topic = ranking.topic[relevant]
    # non-relevant below a retrieved relevant doc: the rest of the retrieved ones + unretrieved
    below = n[topic] - above
    right = np.bincount(topic, weights=below, minlength=topic_count).astype(float)
    ties = (r - r_ret) * (n - n_ret) / 2.0
    return safe_divide(right + ties, r * n)


def accuracy(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Accuracy@k = 1 - sum over relevant d in the top k of (non-relevant above d) / (R_k N_k).

    The share of (relevant, non-relevant) pairs of the top k ordered right, where non-relevant
    is any retrieved document below ``rel``, unjudged and negative grades included (ir_measures'
    Accuracy). NaN, an unknown value left out of the mean, when the top k has no relevant or
    no non-relevant document.
    """
    within = np.ones(len(ranking.grade), dtype=bool)
    if metric.cutoff is not None:
        within = ranking.rank < metric.cutoff
    relevant = within & (ranking.grade >= metric.rel)
    nonrelevant = within & (ranking.grade < metric.rel)
    above = ranking.cumulative_within(nonrelevant)[relevant].astype(float)
    topic = ranking.topic[relevant]
    count = ranking.n_topics
    r = np.bincount(topic, minlength=count).astype(float)
    n = np.bincount(ranking.topic[nonrelevant], minlength=count).astype(float)
    wrong = np.bincount(topic, weights=above, minlength=count).astype(float)
    pairs = r * n
    return np.where(pairs > 0, 1.0 - safe_divide(wrong, pairs), np.nan)
