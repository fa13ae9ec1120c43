"""Set-based measures over the top k with binary relevance (grade >= rel): P, R, F1, Success,
Rprec and Judged.

All return one value per topic; a topic without results scores 0. Denominators follow trec_eval:
P@k divides by k even when fewer documents were retrieved, R@k and Rprec by R (the number of
judged relevant documents, 0 when R = 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.ranking import UNJUDGED, Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


def view(ranking: Ranking, metric: Metric) -> Ranking:
    """The ranking a metric reads: without unjudged documents when ``judged_only``."""
    return ranking.judged_only() if metric.judged_only else ranking


def safe_divide(numerator: NDArray[np.float64], denominator: NDArray[np.float64]
                ) -> NDArray[np.float64]:  # fmt: skip
    """numerator / denominator, 0 where the denominator is 0."""
    out = np.zeros_like(numerator, dtype=float)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def relevant_in_top(ranking: Ranking, rel: int, k: int | None) -> NDArray[np.float64]:
    """|relevant in top k| per topic (all retrieved when k is None)."""
    mask = ranking.grade >= rel
    if k is not None:
        mask &= ranking.rank < k
    return np.bincount(ranking.topic[mask], minlength=ranking.n_topics).astype(float)


def precision(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """P@k = |relevant in top k| / k."""
    k = int(metric.cutoff or 0)
    return relevant_in_top(view(ranking, metric), metric.rel, k) / k


def recall(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """R@k = |relevant in top k| / R; 0 when R = 0."""
    found = relevant_in_top(view(ranking, metric), metric.rel, metric.cutoff)
    return safe_divide(found, judgments.relevant_count(metric.rel))


def f1(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """F1@k = 2 P R / (P + R) = 2 |rel in top k| / (k + R); 0 when nothing relevant is found."""
    found = relevant_in_top(view(ranking, metric), metric.rel, metric.cutoff)
    total = float(metric.cutoff or 0) + judgments.relevant_count(metric.rel)
    return safe_divide(2 * found, total)


def success(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Success@k = 1 when a relevant document is in the top k."""
    found = relevant_in_top(view(ranking, metric), metric.rel, metric.cutoff)
    return (found > 0).astype(float)


def r_precision(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Rprec = |relevant in top c| / c, c = ⌊mult · R + 0.9⌋ (trec_eval's rounding; c = R at
    the default mult = 1), R = judged relevant; 0 when c = 0."""
    ranked = view(ranking, metric)
    mult = float(metric.param("mult"))  # type: ignore[arg-type]
    cut = np.floor(mult * judgments.relevant_count(metric.rel) + 0.9)
    mask = (ranked.grade >= metric.rel) & (ranked.rank < cut[ranked.topic])
    found = np.bincount(ranked.topic[mask], minlength=ranked.n_topics).astype(float)
    return safe_divide(found, cut)


def judged(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Judged@k = |judged in top k| / min(k, retrieved), over all retrieved without k; any
    grade, negative too, is judged.

    This is ir_measures' Judged (trec_eval's ``unj_k`` differs: it divides by k and counts
    negative grades as unjudged).
    """
    mask = ranking.grade != UNJUDGED
    if metric.cutoff is not None:
        mask &= ranking.rank < metric.cutoff
    found = np.bincount(ranking.topic[mask], minlength=ranking.n_topics).astype(float)
    if metric.cutoff is None:
        return safe_divide(found, ranking.num_ret)
    return safe_divide(found, np.minimum(ranking.num_ret, metric.cutoff))
