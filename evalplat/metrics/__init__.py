"""The metric engine: one model for every measure, a registry of them and the kernels.

``parse("nDCG@10")`` gives a :class:`Metric`; :func:`compute` evaluates one over the inputs its
measure declares (:class:`~evalplat.metrics.sources.MeasureInputs`), and :func:`aggregate`
(``evalplat.metrics.aggregate``) turns per-unit values into the run's figure. Importing this
package loads only the registry (no numpy), so command-line help stays fast; kernels load on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalplat.metrics.model import Measure, Param
from evalplat.metrics.names import parse, parse_all
from evalplat.metrics.registry import DEFAULT_METRICS, FAMILIES, Metric, MetricFamily, register

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from evalplat.metrics.sources import MeasureInputs

__all__ = [
    "DEFAULT_METRICS",
    "FAMILIES",
    "Measure",
    "Metric",
    "MetricFamily",
    "Param",
    "compute",
    "parse",
    "parse_all",
    "register",
]


def compute(metric: Metric, inputs: MeasureInputs) -> NDArray[np.float64]:
    """Per-unit values of ``metric``: its kernel called with the inputs its measure declares.

    ``compute = "binary:precision"`` names ``evalplat.metrics.binary.precision``; any other
    module (``"my_team.measures:clicks"``) is imported as written.
    """
    import importlib.util

    import numpy as np

    module_name, function_name = metric.spec.compute.split(":")
    inside = f"evalplat.metrics.{module_name}"
    if "." not in module_name and importlib.util.find_spec(inside) is not None:
        module_name = inside
    function: Any = getattr(importlib.import_module(module_name), function_name)
    arguments = [inputs.get(name, metric) for name in metric.spec.inputs]
    values = np.asarray(function(*arguments, metric), dtype=np.float64)
    if values.shape != (inputs.n_topics,):
        raise ValueError(f"{metric}: the kernel returned {values.shape}, not one value per unit")
    return values
