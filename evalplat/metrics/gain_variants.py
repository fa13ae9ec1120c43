"""trec_eval's experimental gain measures (binG, G, ndcg_rel, Rndcg) and rank-biased precision
(rbp, rbp_resid).

Gains are trec_eval's defaults: a document's gain is its grade, negative grades and unjudged
documents gain 0. The ideal ranking sorts every judgment of the topic by grade, retrieved or
not (``Judgments.ideal``). Each measure is a reduction over running sums within topic segments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide, view
from evalplat.metrics.ranking import Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


class _Ideal:
    """Running sums over each topic's ideal ranking, read at any depth n (0 at n = 0)."""

    def __init__(self, judgments: Judgments) -> None:
        topic, grade, rank = judgments.ideal
        gain = np.maximum(grade, 0).astype(float)
        self.grade = grade
        self.positive = np.bincount(topic[gain > 0], minlength=judgments.n_topics)
        self.first = _first_rows(topic, judgments.n_topics)
        self.gain_sum = _within(topic, gain)
        self.dcg = _within(topic, gain / np.log2(rank + 2.0))

    def at(self, running: NDArray[np.float64], topic: NDArray[np.int64], depth: NDArray[np.int64]
           ) -> NDArray[np.float64]:  # fmt: skip
        """``running`` (gain_sum or dcg) of ``topic`` over its first ``depth`` ideal documents,
        ``depth`` at most the topic's positive judgments."""
        out = np.zeros(len(topic))
        some = depth > 0
        out[some] = running[self.first[topic[some]] + depth[some] - 1]
        return out


def _first_rows(topic: NDArray[np.int32], n_topics: int) -> NDArray[np.int64]:
    """Index of each topic's first row (-1 for a topic without rows); rows grouped by topic."""
    first = np.full(n_topics, -1, dtype=np.int64)
    first[topic[::-1]] = np.arange(len(topic) - 1, -1, -1)
    return first


def _within(topic: NDArray[np.int32], values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inclusive running sum of ``values`` within each run of equal topic codes."""
    total = np.cumsum(values)
    if not len(values):
        return total
    new = np.concatenate(([True], topic[1:] != topic[:-1]))
    starts = np.flatnonzero(new)
    before = np.concatenate(([0.0], total))[starts]
    within: NDArray[np.float64] = total - np.repeat(before, np.diff(np.append(starts, len(values))))
    return within


def _ranked_dcg(ranked: Ranking) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(gain, running DCG) per retrieved row."""
    gain = np.maximum(ranked.grade, 0).astype(float)
    return gain, _within(ranked.topic, gain / np.log2(ranked.rank + 2.0))


def bin_g(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """binG = (1/R) sum over retrieved relevant d of 1 / log2(2 + documents not relevant above
    d); 0 when R = 0."""
    ranked = view(ranking, metric)
    relevant = ranked.grade >= metric.rel
    above = (ranked.rank + 1 - ranked.cumulative_within(relevant))[relevant]
    terms = 1.0 / np.log2(2.0 + above)
    total = np.bincount(ranked.topic[relevant], weights=terms, minlength=ranked.n_topics)
    return safe_divide(total.astype(float), judgments.relevant_count(metric.rel))


def g_measure(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """G = (1 / sum of ideal gains) sum over retrieved d of gain(d) / log2(2 + cost(d) -
    gained(d)): cost is the running sum of the ideal gains down to d's rank, each at least 1,
    gained the running sum of the run's gains down to d."""
    ranked = view(ranking, metric)
    ideal = _Ideal(judgments)
    gain = np.maximum(ranked.grade, 0).astype(float)
    depth = ranked.rank + 1
    topic = ranked.topic.astype(np.int64)
    positive = ideal.positive[topic]
    cost = ideal.at(ideal.gain_sum, topic, np.minimum(depth, positive))
    cost += np.maximum(depth - positive, 0)
    gained = _within(ranked.topic, gain)
    rows = gain != 0
    terms = gain[rows] / np.log2(2.0 + cost[rows] - gained[rows])
    total = np.bincount(ranked.topic[rows], weights=terms, minlength=ranked.n_topics)
    every = np.arange(judgments.n_topics)
    ideal_total = ideal.at(ideal.gain_sum, every, ideal.positive)
    return safe_divide(total.astype(float), ideal_total)


def ndcg_rel(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """nDCG averaged over the P documents of positive grade: at each one retrieved, nDCG at its
    rank; for each one not retrieved, nDCG at the end of the ranking (over the whole ideal)."""
    ranked = view(ranking, metric)
    ideal = _Ideal(judgments)
    gain, dcg = _ranked_dcg(ranked)
    topic = ranked.topic.astype(np.int64)
    rows = gain > 0
    depth = np.minimum(ranked.rank[rows] + 1, ideal.positive[topic[rows]])
    at_doc = safe_divide(dcg[rows], ideal.at(ideal.dcg, topic[rows], depth))
    n = judgments.n_topics
    total = np.bincount(topic[rows], weights=at_doc, minlength=n).astype(float)
    found = np.bincount(topic[rows], minlength=n)
    every = np.arange(n)
    final = _final(ranked, dcg)
    whole = safe_divide(final, ideal.at(ideal.dcg, every, ideal.positive))
    total += (ideal.positive - found) * whole
    return safe_divide(total, ideal.positive.astype(float))


def _final(ranked: Ranking, running: NDArray[np.float64]) -> NDArray[np.float64]:
    """The last value of ``running`` in each topic (0 for a topic without results)."""
    out = np.zeros(ranked.n_topics)
    last = np.ones(len(ranked.topic), dtype=bool)
    last[:-1] = ranked.topic[1:] != ranked.topic[:-1]
    out[ranked.topic[last]] = running[last]
    return out


def r_ndcg(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """nDCG averaged over the depths where the ideal ranking's grade drops (the R levels, the
    last where it reaches 0), plus the end of the ranking when it runs past them; 0 when R = 0."""
    ranked = view(ranking, metric)
    ideal = _Ideal(judgments)
    _, dcg = _ranked_dcg(ranked)
    topic, grade, rank = judgments.ideal
    positive = ideal.positive[topic]
    # ideal rows after which the grade drops: within the positive part, or the last positive
    drop = np.zeros(len(topic), dtype=bool)
    drop[:-1] = (topic[1:] == topic[:-1]) & (grade[1:] != grade[:-1])
    drop |= rank + 1 == positive
    drop &= rank < positive
    at = topic[drop].astype(np.int64)
    depth = rank[drop] + 1
    run_depth = np.minimum(depth, ranked.num_ret[at].astype(np.int64))
    first = _first_rows(ranked.topic, ranked.n_topics)
    ours = np.zeros(len(at))
    some = run_depth > 0
    ours[some] = dcg[first[at[some]] + run_depth[some] - 1]
    values = safe_divide(ours, ideal.at(ideal.dcg, at, depth))
    n = judgments.n_topics
    total = np.bincount(at, weights=values, minlength=n).astype(float)
    count = np.bincount(at, minlength=n).astype(float)
    every = np.arange(n)
    beyond = ranked.num_ret > ideal.positive + 1  # trec_eval drops the rank just past P
    whole = safe_divide(_final(ranked, dcg), ideal.at(ideal.dcg, every, ideal.positive))
    total += np.where(beyond & (ideal.positive > 0), whole, 0.0)
    count += beyond & (ideal.positive > 0)
    values_per_topic = safe_divide(total, count)
    return np.where(judgments.relevant_count(metric.rel) > 0, values_per_topic, 0.0)


def _persistence(metric: Metric) -> float:
    return float(metric.param("persist"))  # type: ignore[arg-type]


def rbp(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """RBP = (1 - p) sum over retrieved d at rank r of gain(d) p^(r-1), gain = grade / the
    topic's highest grade when that is above 1, else grade (negative grades gain 0); with
    ``rel`` given, gain = 1 when grade >= rel, else 0 (binary, as ir_measures' ``RBP(rel=k)``)."""
    ranked = view(ranking, metric)
    p = _persistence(metric)
    if metric.param("rel") is not None:
        gain = (ranked.grade >= metric.rel).astype(float)
    else:
        top = np.zeros(judgments.n_topics)
        np.maximum.at(top, judgments.topic, judgments.grade.astype(float))
        scale = np.where(top > 1, top, 1.0)[ranked.topic]
        gain = np.maximum(ranked.grade, 0) / scale
    rows = gain > 0
    terms = gain[rows] * np.power(p, ranked.rank[rows].astype(float))
    total = np.bincount(ranked.topic[rows], weights=terms, minlength=ranked.n_topics)
    return (1.0 - p) * total.astype(float)


def rbp_residual(ranking: Ranking, judgments: Judgments, metric: Metric
                 ) -> NDArray[np.float64]:  # fmt: skip
    """RBP's residual: p^n + (1 - p) sum over unjudged d at rank r of p^(r-1), n retrieved; the
    most that judging the unjudged documents (and those below the ranking) could add. 0 when
    no retrieved document is unjudged."""
    ranked = view(ranking, metric)
    p = _persistence(metric)
    rows = ranked.grade < 0
    terms = np.power(p, ranked.rank[rows].astype(float))
    total = np.bincount(ranked.topic[rows], weights=terms, minlength=ranked.n_topics)
    any_unjudged = np.bincount(ranked.topic[rows], minlength=ranked.n_topics) > 0
    value = np.power(p, ranked.num_ret) + (1.0 - p) * total
    return np.where(any_unjudged, value, 0.0)
