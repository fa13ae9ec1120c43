"""The metric engine: a registry of named measures and vectorised kernels computing them.

``parse("nDCG@10")`` gives a :class:`Metric`; :func:`compute` evaluates one over a coded
:class:`~evalplat.metrics.ranking.Ranking`. Importing this package loads only the registry (no
numpy), so command-line help stays fast; kernels load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalplat.metrics.registry import (
    DEFAULT_METRICS,
    FAMILIES,
    Metric,
    MetricFamily,
    parse,
    parse_all,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from evalplat.metrics.ranking import Judgments, Ranking

__all__ = [
    "DEFAULT_METRICS",
    "FAMILIES",
    "Metric",
    "MetricFamily",
    "compute",
    "parse",
    "parse_all",
]


def compute(metric: Metric, ranking: Ranking, judgments: Judgments) -> NDArray[np.float64]:
    """Per-topic values of ``metric`` (one per topic code, topics without results included)."""
    module_name, function_name = metric.spec.compute.split(":")
    module = importlib.import_module(f"evalplat.metrics.{module_name}")
    function: Any = getattr(module, function_name)
    values: NDArray[np.float64] = function(ranking, judgments, metric)
    return values
