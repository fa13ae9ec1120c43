"""How far each metric's mean moved between two runs, without a comparison.

A night logs the change since the previous night for information only (the gated comparison is
with the baseline): those figures are the deltas ``compare_scores`` reports, ``candidate -
baseline`` over the same topics, with the same pairing and weights (``paired_scores``,
``paired_values``), without the tests, the bound, the movers or a stored comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from evalplat.comparison.scores import choose_metrics, paired_scores, paired_values
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import pandas as pd


def mean_deltas(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    metrics: Sequence[str | Metric] | None = None,
    weights: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Per metric (``metrics``, else every metric both runs have), the candidate's mean minus
    the baseline's, from per-query scores (``query_id, metric, value``): weighted by ``weights``
    (query id -> weight, 1 when missing) where the measure averages, over the queries known on
    both sides for a measure with unknown values. Refuses what ``compare_scores`` refuses
    (different topics, a run lacking a metric)."""
    import numpy as np

    from evalplat.comparison import segments
    from evalplat.metrics.aggregate import aggregate

    wide_a, wide_b = paired_scores(baseline, candidate)
    w = segments.weight_vector(wide_a.index, weights)
    deltas: dict[str, float] = {}
    for metric in choose_metrics(metrics, None, wide_a, wide_b):
        name = str(metric)
        a = wide_a[name].to_numpy(dtype=np.float64)
        b = wide_b[name].to_numpy(dtype=np.float64)
        a, b, mean_weights = paired_values(metric, a, b, w)
        deltas[name] = aggregate(metric, b, mean_weights) - aggregate(metric, a, mean_weights)
    return deltas
