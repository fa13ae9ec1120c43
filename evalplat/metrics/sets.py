"""Measures of the retrieved set as a whole and of counts within it (trec_eval's set_P,
set_recall, set_F, set_map, set_relative_P, relative_P, utility, unj, num_nonrel_judged_ret;
ranx's hits).

Relevant means grade >= rel, judged non-relevant 0 <= grade < rel, as elsewhere. A topic without
results scores 0 (utility excepted: it still pays for the relevant documents it missed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import relevant_in_top, safe_divide, view
from evalplat.metrics.ranking import Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


def _found(ranking: Ranking, metric: Metric) -> tuple[Ranking, NDArray[np.float64]]:
    ranked = view(ranking, metric)
    return ranked, relevant_in_top(ranked, metric.rel, None)


def set_precision(ranking: Ranking, judgments: Judgments, metric: Metric
                  ) -> NDArray[np.float64]:  # fmt: skip
    """SetP = |relevant retrieved| / |retrieved|; 0 without results."""
    ranked, found = _found(ranking, metric)
    return safe_divide(found, ranked.num_ret)


def set_recall(ranking: Ranking, judgments: Judgments, metric: Metric
               ) -> NDArray[np.float64]:  # fmt: skip
    """SetR = |relevant retrieved| / R; 0 when R = 0."""
    _, found = _found(ranking, metric)
    return safe_divide(found, judgments.relevant_count(metric.rel))


def set_f(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """SetF = (1 + b) P R / (b P + R) over the retrieved set, b unsquared as in trec_eval's
    set_F; 0 when P = R = 0."""
    beta = float(metric.param("beta"))  # type: ignore[arg-type]
    p = set_precision(ranking, judgments, metric)
    r = set_recall(ranking, judgments, metric)
    return safe_divide((1.0 + beta) * p * r, beta * p + r)


def set_ap(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """SetAP = SetP · SetR (trec_eval's set_map)."""
    return set_precision(ranking, judgments, metric) * set_recall(ranking, judgments, metric)


def set_relative_precision(ranking: Ranking, judgments: Judgments, metric: Metric
                           ) -> NDArray[np.float64]:  # fmt: skip
    """SetRelP = |relevant retrieved| / min(|retrieved|, R); 0 when that is 0."""
    ranked, found = _found(ranking, metric)
    return safe_divide(found, np.minimum(ranked.num_ret, judgments.relevant_count(metric.rel)))


def relative_precision(ranking: Ranking, judgments: Judgments, metric: Metric
                       ) -> NDArray[np.float64]:  # fmt: skip
    """RelP@k = |relevant in top k| / min(k, R); 0 when R = 0."""
    k = float(metric.cutoff or 0)
    found = relevant_in_top(view(ranking, metric), metric.rel, metric.cutoff)
    return safe_divide(found, np.minimum(k, judgments.relevant_count(metric.rel)))


def hits(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Hits@k = |relevant in top k| (all retrieved without k)."""
    return relevant_in_top(view(ranking, metric), metric.rel, metric.cutoff)


def utility(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """u1 a + u2 b + u3 c + u4 d over the contingency table of the retrieved set.

    a = relevant retrieved, b = other retrieved, c = relevant not retrieved, d = the rest of the
    collection, taken as trec_eval takes it without ``-N``: a collection of 0 documents, so
    d = a - |retrieved| - R.
    """
    u1, u2, u3, u4 = (float(metric.param(name)) for name in UTILITY_PARAMS)  # type: ignore[arg-type]
    ranked, a = _found(ranking, metric)
    retrieved = ranked.num_ret
    r = judgments.relevant_count(metric.rel)
    return u1 * a + u2 * (retrieved - a) + u3 * (r - a) + u4 * (a - retrieved - r)


UTILITY_PARAMS = ("u1", "u2", "u3", "u4")


def unjudged(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Unjudged@k = |unjudged in top k| / k; a negative qrels grade counts as unjudged.

    trec_eval's unj_k: a ranking shorter than k is padded with judged documents.
    """
    k = int(metric.cutoff or 0)
    mask = (ranking.grade < 0) & (ranking.rank < k)  # UNJUDGED is below 0 too
    return np.bincount(ranking.topic[mask], minlength=ranking.n_topics).astype(float) / k


def num_nonrel_judged_ret(ranking: Ranking, metric: Metric) -> NDArray[np.float64]:
    """Retrieved documents judged non-relevant (0 <= grade < rel) per topic."""
    mask = (ranking.grade >= 0) & (ranking.grade < metric.rel)
    return np.bincount(ranking.topic[mask], minlength=ranking.n_topics).astype(float)
