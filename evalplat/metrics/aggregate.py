"""From per-unit values to the figure of a run, as the measure declares (mean, sum, percentile).

Every consumer (evaluation means, comparisons, bootstrap replicates) aggregates through
:func:`aggregate`, so a measure's run-level number is the same everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

# trec_eval's MIN_GEO_MEAN: a topic scoring 0 enters a geometric mean as this
GEOMEAN_FLOOR = 1e-5


def aggregate(
    metric: Metric, values: NDArray[np.float64], weights: NDArray[np.float64] | None = None
) -> float:
    """The run-level figure of ``metric`` over per-unit ``values``.

    ``mean`` is weighted by ``weights`` when given (0 when every weight is 0 or there are no
    units); ``sum`` ignores weights; ``percentile`` is the p-th percentile by nearest rank
    (the value at rank ⌈p/100 · n⌉ of the sorted values, as latency dashboards and ``runs
    show`` read it), unweighted, and NaN values (unknown) are left out of it. ``geomean`` is
    the (weighted) geometric mean of the values floored at :data:`GEOMEAN_FLOOR`, as trec_eval
    takes gm_map and gm_bpref.
    """
    how = metric.aggregate
    if metric.spec.unknown_values:
        known = ~np.isnan(values)
        values = values[known]
        weights = None if weights is None else weights[known]
    if how == "sum":
        return float(values.sum())
    if how == "percentile":
        known = values[~np.isnan(values)]
        if not known.size:
            return float("nan")
        p = float(metric.param("p"))  # type: ignore[arg-type]
        return float(np.percentile(known, p, method="inverted_cdf"))
    if not values.size:
        return 0.0
    if how == "geomean":
        logs = np.log(np.maximum(values, GEOMEAN_FLOOR))
        total = 1.0 if weights is None else float(weights.sum())
        mean_log = logs.mean() if weights is None else np.dot(logs, weights) / total
        return float(np.exp(mean_log)) if total > 0 else 0.0
    if weights is None:
        return float(values.mean())
    total = float(weights.sum())
    return float(np.dot(values, weights) / total) if total > 0 else 0.0


def aggregate_rows(metric: Metric, values: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`aggregate` of each row of a 2-d array (bootstrap replicates), unweighted."""
    how = metric.aggregate
    result: NDArray[np.float64]
    if how == "sum":
        result = values.sum(axis=1)
    elif how == "percentile":
        p = float(metric.param("p"))  # type: ignore[arg-type]
        result = np.nanpercentile(values, p, axis=1, method="inverted_cdf")
    elif how == "geomean":
        result = np.exp(np.log(np.maximum(values, GEOMEAN_FLOOR)).mean(axis=1))
    elif metric.spec.unknown_values:
        result = np.nanmean(values, axis=1)
    else:
        result = values.mean(axis=1)
    return result
