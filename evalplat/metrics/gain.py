"""Graded measures: CG, DCG, nDCG (trec_eval's ndcg, ndcg_cut_k) and ERR.

Gain of grade g: ``g`` (linear, trec_eval's default) or ``2^g - 1`` (exp, Burges et al.), or
what a grade-to-gain map (``gains={0:0,1:1,2:3,3:10}``) gives it, a grade the map does not name
gaining its grade (trec_eval's and ir_measures' rule); negative grades and unjudged documents gain
0 unless the map names them. Discount at 1-based rank r: ``1 / log2(r + 1)``.
The ideal ranking sorts every judgment of the topic by gain, retrieved or not, so nDCG is 0
when no document has a positive grade. The relevance threshold ``rel`` plays no part here,
as in trec_eval (``-l2`` leaves ndcg unchanged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide, view
from evalplat.metrics.ranking import UNJUDGED, Judgments, Ranking, ranks_within

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


def gains(
    grade: NDArray[np.int32], kind: str, mapped: dict[int, float] | None = None
) -> NDArray[np.float64]:
    """Gain per document; grades <= 0 (and UNJUDGED) give 0 unless ``mapped`` names them."""
    positive: NDArray[np.float64] = np.maximum(grade, 0).astype(float)
    if kind == "exp":
        exponential: NDArray[np.float64] = np.power(2.0, positive) - 1.0
        return exponential
    for mapped_grade, gain in (mapped or {}).items():  # a handful of grades, not documents
        positive[grade == mapped_grade] = gain
    return positive


def _gain_of(grade: NDArray[np.int32], metric: Metric) -> NDArray[np.float64]:
    return gains(grade, metric.gain, metric.gains)


def _ideal(judgments: Judgments, metric: Metric
           ) -> tuple[NDArray[np.int32], NDArray[np.float64], NDArray[np.int64]]:  # fmt: skip
    """(topic, gain, 0-based rank) of the judgments in ideal order: gain descending."""
    if not metric.gains:  # gain grows with grade: the shared grade order serves
        topic, grade, rank = judgments.ideal
        return topic, _gain_of(grade, metric), rank
    gain = _gain_of(judgments.grade, metric)
    order = np.lexsort((-gain, judgments.topic))
    topic = judgments.topic[order]
    return topic, gain[order], ranks_within(topic)


def _discounted(rank: NDArray[np.int64], gain: NDArray[np.float64]) -> NDArray[np.float64]:
    discounted: NDArray[np.float64] = gain / np.log2(rank + 2.0)
    return discounted


def dcg(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """DCG@k = sum over r <= k of gain(g_r) / log2(r + 1)."""
    ranked = view(ranking, metric)
    rows, gain = _gaining(ranked, metric)
    values = _discounted(ranked.rank[rows], gain)
    return np.bincount(ranked.topic[rows], weights=values, minlength=ranked.n_topics).astype(float)


def _gaining(ranked: Ranking, metric: Metric) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """(rows, gains) of the judged documents within the cutoff that gain something, in row
    order. Gains are computed for the judged rows only: a handful per query, not every row."""
    mask = ranked.grade != UNJUDGED
    if metric.cutoff is not None:
        mask &= ranked.rank < metric.cutoff
    rows = np.flatnonzero(mask)
    gain = _gain_of(ranked.grade[rows], metric)
    positive = gain > 0
    return rows[positive], gain[positive]


def ideal_dcg(judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """DCG@k of the ideal ranking of all judgments of each topic."""
    topic, gain, rank = _ideal(judgments, metric)
    mask = gain > 0
    if metric.cutoff is not None:
        mask &= rank < metric.cutoff
    values = _discounted(rank[mask], gain[mask])
    return np.bincount(topic[mask], weights=values, minlength=judgments.n_topics).astype(float)


def ndcg(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """nDCG@k = DCG@k / IDCG@k; 0 when IDCG@k = 0."""
    return safe_divide(dcg(ranking, judgments, metric), ideal_dcg(judgments, metric))


def err(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """ERR@k = sum_{r<=k} (1/r) p_r prod_{i<r} (1 - p_i), p = (2^g - 1) / 2^gmax.

    gmax is the ``gmax`` parameter: 4 by default, as gdeval and ir_measures fix it, or the
    highest grade in the qrels with ``gmax=qrels``; grades above gmax are capped at it, negative
    grades and unjudged documents give p = 0.
    """
    ranked = view(ranking, metric)
    gmax = judgments.max_grade if metric.gmax == "qrels" else int(metric.gmax)
    if gmax <= 0 or len(ranked.grade) == 0:
        return np.zeros(ranked.n_topics)
    grade = np.clip(ranked.grade, 0, gmax).astype(float)
    stop = (np.exp2(grade) - 1.0) / 2.0**gmax
    # prod_{i<r}(1 - p_i) as the exp of an exclusive running sum of logs within the topic
    log_continue = np.log1p(-stop)
    running = np.cumsum(log_continue)
    before_segment = np.concatenate(([0.0], running))[ranked.segment_start]
    exclusive = running - before_segment - log_continue
    values = stop * np.exp(exclusive) / (ranked.rank + 1.0)
    mask = stop > 0
    if metric.cutoff is not None:
        mask &= ranked.rank < metric.cutoff
    return ranked.per_topic(values, mask)


def cg(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """CG@k = sum over r <= k of gain(g_r): DCG without the discount, so order within k is moot."""
    ranked = view(ranking, metric)
    rows, gain = _gaining(ranked, metric)
    return np.bincount(ranked.topic[rows], weights=gain, minlength=ranked.n_topics).astype(float)
