"""The C/W/L measures ir_measures computes through cwl_eval: SDCG, NERR8-NERR11, INST, INSQ
and BPM.

C/W/L (Moffat et al.) describes a reader by C_i, the chance of going on from rank i to rank
i + 1. The reader reaches rank i with chance e_i = C_1 ··· C_{i-1} (e_1 = 1), and a measure is
the expected gain per document examined::

    value = sum_i e_i gain_i / sum_i e_i,   i = 1 .. DEPTH

cwl_eval (which ir_measures calls) cuts the ranking at ``DEPTH`` = 1000 documents and pads it
with documents of gain 0, so the denominator runs over 1000 ranks whatever the ranking's length;
ranks past the ranking are summed in closed form here instead of being materialised. A grade g
gains ``(min(max(g, 0), max_rel) - min_rel) / (max_rel - min_rel)`` (0 below ``min_rel``),
unjudged documents 0.

Most of these readers split as e_i = b_i · Q_i: ``b`` depends on the rank only (a table of 1000
numbers per metric) and Q_i = prod_{j<i} (1 - gain_j) is the ERR-like chance that nothing
before i satisfied the reader (1 for SDCG and INSQ).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import safe_divide
from evalplat.metrics.ranking import Judgments, Ranking, ranks_within

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

# cwl_eval's max_n, which ir_measures keeps: the ranks a C/W/L reader can reach
DEPTH = 1000


def _number(metric: Metric, name: str) -> float:
    return float(metric.param(name))  # type: ignore[arg-type]


def scaled_gains(ranked: Ranking, metric: Metric) -> NDArray[np.float64]:
    """Gain in [0, 1] per row: the grade clipped to [min_rel, max_rel], less min_rel, over
    max_rel - min_rel; 0 for unjudged documents and negative grades."""
    low, high = int(metric.param("min_rel")), int(metric.param("max_rel"))  # type: ignore[call-overload]
    units = np.clip(np.maximum(ranked.grade, 0), low, high).astype(np.int64) - low
    gain: NDArray[np.float64] = units / (high - low)
    return gain


class _Reader:
    """One ranking read by a C/W/L reader: the rows within ``DEPTH``, their gains, and the
    per-topic sums the measures share."""

    def __init__(self, ranking: Ranking, metric: Metric) -> None:
        keep = ranking.rank < DEPTH
        self.ranked = ranking if keep.all() else ranking.top(DEPTH)
        self.gain = scaled_gains(self.ranked, metric)
        self.found = found_so_far(self.ranked, self.gain)
        self.rank = self.ranked.rank  # 0-based: rank i of the docstring is rank + 1
        self.topic = self.ranked.topic
        self.n_topics = ranking.n_topics
        self.length = self.ranked.num_ret.astype(np.int64)  # documents read, at most DEPTH

    def per_topic(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(self.topic, weights=values, minlength=self.n_topics).astype(float)

    def total_found(self) -> NDArray[np.float64]:
        """The gain of the whole (cut) ranking per topic; 0 for a topic without results."""
        total = np.zeros(self.n_topics)
        last = _last_rows(self.topic)
        total[self.topic[last]] = self.found[last]
        return total

    def unsatisfied(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(Q_i per row, Q after the last row per topic), Q_i = prod_{j<i} (1 - gain_j)."""
        return exclusive_products(self.ranked, 1.0 - self.gain)


def found_so_far(ranked: Ranking, gain: NDArray[np.float64]) -> NDArray[np.float64]:
    """The gain found down to each row, inclusive, added in rank order within the topic.

    The order of the additions is cwl_eval's (a running sum per topic), so a threshold on the
    sum (BPM stops once it reaches T) falls where cwl_eval's does: 2/3 + 2/3 + 2/3 is just
    below 2 there. Only rows that gain something add; they are summed one depth at a time
    across topics (as many steps as the most gaining rows in one topic, at most DEPTH).
    """
    gaining = gain > 0
    rows = np.flatnonzero(gaining)
    depth = ranks_within(ranked.topic[rows])
    sums = gain[rows].copy()
    by_depth = np.argsort(depth, kind="stable")
    levels = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=0)) + 2))
    for level in range(1, len(levels) - 1):
        at = by_depth[levels[level] : levels[level + 1]]
        sums[at] = sums[at - 1] + gain[rows[at]]
    latest = np.cumsum(gaining) - 1  # the last gaining row at or above each row
    any_before = ranked.cumulative_within(gaining) > 0
    return np.where(any_before, sums[np.maximum(latest, 0)] if len(sums) else 0.0, 0.0)


def exclusive_products(ranked: Ranking, factors: NDArray[np.float64]
                       ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """(product of the factors before each row within its topic, product of all of a topic's
    factors per topic; 1 for a topic without rows). Factors are ≥ 0; a 0 zeroes what follows.
    """
    zero = factors <= 0.0
    logs = np.log(np.where(zero, 1.0, factors))
    log_before = ranked.running_sum_within(logs) - logs
    zeros_before = ranked.cumulative_within(zero) - zero
    before = np.where(zeros_before > 0, 0.0, np.exp(log_before))
    whole = np.ones(ranked.n_topics)
    last = _last_rows(ranked.topic)
    whole[ranked.topic[last]] = np.where(zero[last], 0.0, before[last] * factors[last])
    return before, whole


def _last_rows(topic: NDArray[np.int32]) -> NDArray[np.int64]:
    last = np.ones(len(topic), dtype=bool)
    last[:-1] = topic[1:] != topic[:-1]
    return np.flatnonzero(last)


def _base(factors: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(b_i for i = 1 .. DEPTH, running sums B_m = b_1 + ... + b_m for m = 0 .. DEPTH) of the
    rank-only part of a reader, from its rank-only continuation factors f_1 .. f_{DEPTH-1}."""
    b = np.cumprod(np.concatenate((np.ones(1), factors[: DEPTH - 1])), dtype=np.float64)
    running: NDArray[np.float64] = np.concatenate(([0.0], np.cumsum(b)))
    return b, running


def _split_reader(reader: _Reader, b: NDArray[np.float64], running: NDArray[np.float64],
                  satisfied: bool) -> NDArray[np.float64]:  # fmt: skip
    """sum e_i gain_i / sum e_i for e_i = b_i Q_i (Q = 1 unless ``satisfied`` stops the reader
    by gain), the ranks past the ranking summed as Q_last · (B_DEPTH - B_length)."""
    if satisfied:
        q_row, q_after = reader.unsatisfied()
    else:
        q_row, q_after = np.ones(len(reader.gain)), np.ones(reader.n_topics)
    weight = b[reader.rank] * q_row
    examined = reader.per_topic(weight) + q_after * (running[DEPTH] - running[reader.length])
    return safe_divide(reader.per_topic(weight * reader.gain), examined)


def _ranks() -> NDArray[np.float64]:
    """i = 1 .. DEPTH - 1, the ranks whose continuation factors a reader of DEPTH uses."""
    return np.arange(1, DEPTH, dtype=float)


def _cut(factors: NDArray[np.float64], k: int | None) -> NDArray[np.float64]:
    """The factors with C_i = 0 from rank k on (the reader of a truncated measure stops)."""
    if k is not None:
        factors[k - 1 :] = 0.0
    return factors


def _insq_factors(metric: Metric) -> NDArray[np.float64]:
    t = _number(metric, "T")
    i = _ranks()
    factors: NDArray[np.float64] = ((i + 2 * t - 1) / (i + 2 * t)) ** 2
    return factors


def sdcg(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """SDCG@k: C_i = log2(i + 1) / log2(i + 2) for i < k, so e_i = 1 / log2(i + 1) up to k."""
    i = _ranks()
    b, running = _base(_cut(np.log2(i + 1) / np.log2(i + 2), metric.cutoff))
    return _split_reader(_Reader(ranking, metric), b, running, satisfied=False)


def nerr8(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """NERR8@k: C_i = 1 - gain_i for i < k, 0 from k on."""
    b, running = _base(_cut(np.ones(DEPTH - 1), metric.cutoff))
    return _split_reader(_Reader(ranking, metric), b, running, satisfied=True)


def nerr9(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """NERR9@k: C_i = i / (i + 1) · (1 - gain_i) for i < k, 0 from k on."""
    i = _ranks()
    b, running = _base(_cut(i / (i + 1), metric.cutoff))
    return _split_reader(_Reader(ranking, metric), b, running, satisfied=True)


def nerr10(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """NERR10: C_i = p (1 - gain_i), p the persistence."""
    b, running = _base(np.full(DEPTH - 1, _number(metric, "persist")))
    return _split_reader(_Reader(ranking, metric), b, running, satisfied=True)


def nerr11(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """NERR11: C_i = ((i + 2T - 1) / (i + 2T))² (1 - gain_i)."""
    b, running = _base(_insq_factors(metric))
    return _split_reader(_Reader(ranking, metric), b, running, satisfied=True)


def insq(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """INSQ: C_i = ((i + 2T - 1) / (i + 2T))², whatever the gains."""
    b, running = _base(_insq_factors(metric))
    return _split_reader(_Reader(ranking, metric), b, running, satisfied=False)


def inst(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """INST: C_i = ((x_i - 1) / x_i)², x_i = i + 2T - (gain found to i), 0 where x_i = 0.

    Past the ranking's L documents the gain found stays G_L, so with a = 2T - G_L the factors
    telescope, e_i = e_{L+1} ((L + a) / (i - 1 + a))², and their sum to DEPTH is
    e_{L+1} (L + a)² (ζ(2, L + a) - ζ(2, DEPTH + a)) (Hurwitz zeta).
    """
    from scipy.special import zeta

    reader = _Reader(ranking, metric)
    t = _number(metric, "T")
    found = reader.found
    x = reader.rank + 1 + 2 * t - found
    safe_x = np.where(x > 0, x, 1.0)
    carry_on = np.where(x > 0, ((safe_x - 1) / safe_x) ** 2, 0.0)
    weight, after = exclusive_products(reader.ranked, carry_on)
    total_found = reader.total_found()
    start = reader.length + 2 * t - total_found  # L + a
    short = reader.length < DEPTH
    safe_start = np.where(start > 0, start, 1.0)
    series = safe_start**2 * (zeta(2, safe_start) - zeta(2, safe_start + DEPTH - reader.length))
    tail = np.where(short, after * np.where(start > 0, series, 1.0), 0.0)
    examined = reader.per_topic(weight) + tail
    return safe_divide(reader.per_topic(weight * reader.gain), examined)


def bpm(ranking: Ranking, judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Static BPM@k: C_i = 1 while the gain found to i is below T and i < k, else 0, so the
    reader examines the first d = min(k, 1 + ranks whose gain so far is below T) documents
    with equal weight: the value is the gain of the top d over d."""
    reader = _Reader(ranking, metric)
    t = _number(metric, "T")
    k = min(int(metric.cutoff or DEPTH), DEPTH)
    below = np.bincount(reader.topic[reader.found < t], minlength=reader.n_topics)
    reached = reader.total_found() >= t
    depth = np.where(reached, np.minimum(k, below + 1), k).astype(float)
    read = reader.rank < depth[reader.topic]
    value: NDArray[np.float64] = reader.per_topic(np.where(read, reader.gain, 0.0)) / depth
    return value
