"""Counts (trec_eval's num_q, num_ret, num_rel, num_rel_ret): informational, summed over topics,
never gated.

Each kernel takes only the input its measure declares (``evalplat.metrics.catalogue``): the
ranking for what was retrieved, the judgments for what exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalplat.metrics.binary import relevant_in_top
from evalplat.metrics.ranking import Judgments, Ranking

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric


def num_ret(ranking: Ranking, metric: Metric) -> NDArray[np.float64]:
    """Documents retrieved per topic."""
    return ranking.num_ret.copy()


def num_rel(judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """Judged relevant documents (grade >= rel) per topic."""
    return judgments.relevant_count(metric.rel)


def num_rel_ret(ranking: Ranking, metric: Metric) -> NDArray[np.float64]:
    """Relevant documents retrieved per topic."""
    return relevant_in_top(ranking, metric.rel, None)


def num_q(judgments: Judgments, metric: Metric) -> NDArray[np.float64]:
    """1 per topic, so that the sum is the number of topics evaluated."""
    return np.ones(judgments.n_topics)
