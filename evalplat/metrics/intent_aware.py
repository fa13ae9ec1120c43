"""Intent-aware (diversity) measures, as the TREC Web track's ndeval computes them.

A topic has subtopics (intents); a judgment says how relevant a document is to one subtopic
(the TREC qrels' second column, ``query subtopic doc grade``). A document is relevant to a
subtopic when its grade there is ≥ ``rel``; the subtopics of a topic that count (N) are those
with at least one relevant document. With J(d, s) = 1 when d is relevant to s and C(s, r) the
number of documents relevant to s above rank r, each retrieved document gains

    g_r = sum_s J(d_r, s) (1 - alpha)^C(s, r)

(Clarke et al. 2008): a subtopic already covered gains less. ndeval's measures are sums of g_r
under a discount, divided either by the value of a ranking whose every document covers all N
subtopics (the "collection-independent" ERR_IA, alpha_DCG, NRBP) or by the value of the ideal
ranking (nERR_IA, alpha_nDCG, nNRBP). The ideal ranking is built greedily, as ndeval builds it:
at each rank the judged document of largest gain given those above it (the exact ideal is
NP-hard); a tie goes to the largest doc id, as in ndeval.

Everything is vectorised over the whole run: the relevant (document, subtopic) pairs of every
topic are one flat array; only the greedy ideal loops, once per rank, over all topics at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.ranking import UNJUDGED

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.ranking import Ranking
    from evalplat.metrics.registry import Metric
    from evalplat.metrics.sources import SubtopicJudgments

# ERR_IA's stopping chance for a relevant document and ndeval's default alpha, fixed in ir_measures
ERR_ALPHA = 0.5


class _Pairs:
    """The relevant (document, subtopic) pairs of one metric's ``rel``: each retrieved pair's
    topic, 0-based rank and novelty count C, and N per topic."""

    def __init__(self, ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric) -> None:
        relevant = subtopics.grade >= metric.rel
        self.n_topics = ranking.n_topics
        intent = subtopics.intent[relevant]
        self.judged_intent = intent
        self.judged_doc = subtopics.doc[relevant]
        self.judged_topic = subtopics.topic[relevant]
        first = np.unique(intent, return_index=True)[1]
        self.n_intents = np.bincount(self.judged_topic[first], minlength=self.n_topics).astype(
            np.float64
        )
        self.relevant_per_intent = np.bincount(intent, minlength=subtopics.n_intents)
        row = subtopics.row[relevant]
        found = row >= 0
        rank = _ranks(ranking, bool(metric.param("judged_only") or False))
        pair_rank = rank[row[found]]
        pair_intent = intent[found]
        pair_topic = self.judged_topic[found]
        if metric.cutoff is not None:
            inside = pair_rank < metric.cutoff
            pair_rank, pair_intent, pair_topic = (
                pair_rank[inside],
                pair_intent[inside],
                pair_topic[inside],
            )
        order = np.lexsort((pair_rank, pair_intent))
        self.rank = pair_rank[order]
        self.intent = pair_intent[order]
        self.topic = pair_topic[order]
        self.seen = _count_within(self.intent)  # C(s, r): earlier relevant documents of s

    def per_topic(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(self.topic, weights=values, minlength=self.n_topics).astype(np.float64)

    def novelty(self, alpha: float) -> NDArray[np.float64]:
        result: NDArray[np.float64] = (1.0 - alpha) ** self.seen.astype(np.float64)
        return result


def _ranks(ranking: Ranking, judged_only: bool) -> NDArray[np.int64]:
    """0-based rank of each ranking row; with ``judged_only`` among the judged rows only (a
    document judged for any subtopic, whatever its grade, is judged, as ir_measures filters)."""
    if not judged_only:
        return ranking.rank
    judged = ranking.grade != UNJUDGED
    return ranking.cumulative_within(judged) - 1


def _count_within(group: NDArray[np.int64]) -> NDArray[np.int64]:
    """0-based position of each element within its run of equal consecutive values."""
    position = np.arange(len(group), dtype=np.int64)
    if len(group) == 0:
        return position
    new = np.empty(len(group), dtype=bool)
    new[0] = True
    np.not_equal(group[1:], group[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return position - np.repeat(starts, np.diff(np.append(starts, len(group))))


def _divide(top: NDArray[np.float64], bottom: NDArray[np.float64]) -> NDArray[np.float64]:
    result: NDArray[np.float64] = np.divide(top, bottom, out=np.zeros_like(top), where=bottom > 0)
    return result


def _alpha(metric: Metric) -> float:
    value = metric.param("alpha")
    return float(value) if isinstance(value, (int, float)) else ERR_ALPHA


def _cascade(pairs: _Pairs, alpha: float, discount: NDArray[np.float64]) -> NDArray[np.float64]:
    """sum_r g_r · discount[r] per topic."""
    return pairs.per_topic(pairs.novelty(alpha) * discount[pairs.rank])


def _log_discount(depth: int) -> NDArray[np.float64]:
    result: NDArray[np.float64] = 1.0 / np.log2(np.arange(depth, dtype=np.float64) + 2.0)
    return result


def _reciprocal_discount(depth: int) -> NDArray[np.float64]:
    result: NDArray[np.float64] = 1.0 / (np.arange(depth, dtype=np.float64) + 1.0)
    return result


def _geometric_discount(depth: int, beta: float) -> NDArray[np.float64]:
    result: NDArray[np.float64] = beta ** np.arange(depth, dtype=np.float64)
    return result


def _depth(pairs: _Pairs, metric: Metric) -> int:
    deepest = int(pairs.rank.max()) + 1 if pairs.rank.size else 1
    return metric.cutoff if metric.cutoff is not None else deepest


def ideal_gains(pairs: _Pairs, alpha: float, depth: int | None) -> NDArray[np.float64]:
    """The gains g_1, g_2, ... of the greedy ideal ranking of each topic, (topics x depth).

    One pass per rank over every topic at once: each judged document's gain given the
    subtopics covered so far, the largest per topic taken (the largest doc id on a tie).
    ``depth`` None goes on until every topic's relevant documents are placed."""
    # each document's gain is summed in subtopic order from (1 - alpha)^c taken by repeated
    # multiplication, as ndeval sums it, so that exact ties are ties here too
    order = np.lexsort((pairs.judged_intent, pairs.judged_doc))
    doc, intent, topic = (pairs.judged_doc[order], pairs.judged_intent[order],
                          pairs.judged_topic[order])  # fmt: skip
    if doc.size == 0:
        return np.zeros((pairs.n_topics, depth or 1))
    n_docs = int(doc.max()) + 1
    doc_topic = np.full(n_docs, -1, dtype=np.int64)
    doc_topic[doc] = topic
    # the documents with a relevant judgment, by topic, then by doc id descending (codes follow
    # doc ids): a tie goes to the first of them, as in ndeval
    present = np.unique(doc)
    present = present[np.lexsort((-present, doc_topic[present]))]
    owner = doc_topic[present]
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    owners = owner[starts]
    per_topic = np.bincount(owner, minlength=pairs.n_topics)
    steps = int(per_topic.max()) if depth is None else min(depth, int(per_topic.max()))
    gains = np.zeros((pairs.n_topics, max(steps, depth or 0, 1)))
    seen = np.zeros(int(intent.max()) + 1, dtype=np.int64)
    powers = np.cumprod(np.r_[1.0, np.full(int(per_topic.max()), 1.0 - alpha)])
    taken = np.zeros(n_docs, dtype=bool)
    position = np.arange(len(present))
    for step in range(steps):
        weight = powers[seen[intent]]
        gain = np.bincount(doc, weights=weight, minlength=n_docs)[present]
        gain[taken[present]] = -1.0
        best = np.maximum.reduceat(gain, starts)
        ties = gain == np.repeat(best, np.diff(np.r_[starts, len(present)]))
        first = np.minimum.reduceat(np.where(ties, position, len(present)), starts)
        live = best > 0
        chosen = present[first[live]]
        gains[owners[live], step] = best[live]
        taken[chosen] = True
        covered = np.zeros(n_docs, dtype=bool)
        covered[chosen] = True
        seen += np.bincount(intent[covered[doc]], minlength=len(seen))
        if not live.any():
            break
    return gains


def err_ia(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
           ) -> NDArray[np.float64]:  # fmt: skip
    """ERR_IA@k = sum_{r≤k} g_r / r / (N · sum_{r≤k} (1-alpha)^(r-1) / r), alpha = 0.5."""
    pairs = _Pairs(ranking, subtopics, metric)
    return _over_every_intent(pairs, ERR_ALPHA, _reciprocal_discount(_depth(pairs, metric)))


def n_err_ia(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
             ) -> NDArray[np.float64]:  # fmt: skip
    """nERR_IA@k = sum_{r≤k} g_r / r over the same sum for the greedy ideal ranking."""
    pairs = _Pairs(ranking, subtopics, metric)
    return _over_ideal(pairs, ERR_ALPHA, _reciprocal_discount(_depth(pairs, metric)))


def alpha_dcg(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
              ) -> NDArray[np.float64]:  # fmt: skip
    """alpha_DCG@k = sum_{r≤k} g_r / log2(r+1) / (N · sum_{r≤k} (1-alpha)^(r-1) / log2(r+1))."""
    pairs = _Pairs(ranking, subtopics, metric)
    return _over_every_intent(pairs, _alpha(metric), _log_discount(_depth(pairs, metric)))


def alpha_ndcg(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
               ) -> NDArray[np.float64]:  # fmt: skip
    """alpha_nDCG@k = sum_{r≤k} g_r / log2(r+1) over the same sum for the greedy ideal."""
    pairs = _Pairs(ranking, subtopics, metric)
    return _over_ideal(pairs, _alpha(metric), _log_discount(_depth(pairs, metric)))


def _over_every_intent(pairs: _Pairs, alpha: float, discount: NDArray[np.float64]
                       ) -> NDArray[np.float64]:  # fmt: skip
    """The cascade's discounted gains over N times what a ranking whose every document covers
    every intent would gain to the same depth: ndeval's "collection-independent" form."""
    best = float(np.sum(_geometric_discount(len(discount), 1.0 - alpha) * discount))
    return _divide(_cascade(pairs, alpha, discount), pairs.n_intents * best)


def _over_ideal(pairs: _Pairs, alpha: float, discount: NDArray[np.float64]
                ) -> NDArray[np.float64]:  # fmt: skip
    """The cascade's discounted gains over the greedy ideal ranking's, to the same depth."""
    depth = len(discount)
    ideal = ideal_gains(pairs, alpha, depth)[:, :depth] @ discount
    return _divide(_cascade(pairs, alpha, discount), ideal)


def nrbp(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
         ) -> NDArray[np.float64]:  # fmt: skip
    """NRBP = (1 - (1-alpha)β) / N · sum_r β^(r-1) g_r, over the whole ranking."""
    pairs = _Pairs(ranking, subtopics, metric)
    alpha, beta = _alpha(metric), _beta(metric)
    total = _cascade(pairs, alpha, _geometric_discount(_depth(pairs, metric), beta))
    return _divide(total * (1.0 - (1.0 - alpha) * beta), pairs.n_intents)


def n_nrbp(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
           ) -> NDArray[np.float64]:  # fmt: skip
    """nNRBP = sum_r β^(r-1) g_r over the same sum for the greedy ideal ranking."""
    pairs = _Pairs(ranking, subtopics, metric)
    alpha, beta = _alpha(metric), _beta(metric)
    total = _cascade(pairs, alpha, _geometric_discount(_depth(pairs, metric), beta))
    gains = ideal_gains(pairs, alpha, None)
    ideal = gains @ _geometric_discount(gains.shape[1], beta)
    return _divide(total, ideal)


def _beta(metric: Metric) -> float:
    value = metric.param("beta")
    return float(value) if isinstance(value, (int, float)) else 0.5


def precision_ia(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
                 ) -> NDArray[np.float64]:  # fmt: skip
    """P_IA@k = (1/N) sum_s |documents relevant to s in the top k| / k."""
    pairs = _Pairs(ranking, subtopics, metric)
    hits = pairs.per_topic(np.ones(len(pairs.rank)))
    return _divide(hits / float(_depth(pairs, metric)), pairs.n_intents)


def ap_ia(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
          ) -> NDArray[np.float64]:  # fmt: skip
    """AP_IA = (1/N) sum_s AP_s, AP_s = sum over retrieved d relevant to s of
    (C(s, r_d) + 1) / r_d, over R_s (the documents relevant to s)."""
    pairs = _Pairs(ranking, subtopics, metric)
    precision = (pairs.seen + 1.0) / (pairs.rank + 1.0)
    share = precision / pairs.relevant_per_intent[pairs.intent]
    return _divide(pairs.per_topic(share), pairs.n_intents)


def subtopic_recall(ranking: Ranking, subtopics: SubtopicJudgments, metric: Metric
                    ) -> NDArray[np.float64]:  # fmt: skip
    """StRecall@k = |subtopics with a relevant document in the top k| / N."""
    pairs = _Pairs(ranking, subtopics, metric)
    covered = pairs.per_topic((pairs.seen == 0).astype(np.float64))
    return _divide(covered, pairs.n_intents)
