"""System measures: what a run costs and whether it answers, beside what it finds.

- ``Latency``: the time the engine took for each query, in milliseconds, from the run's records
  (the successful attempt, not the backoff before it); unknown (NaN) for a query that failed
  and for every query of a run imported from a file, which has no records at all.
- ``ZeroResult`` and ``Coverage``: whether a query returned nothing, or something, read from
  the ranking, so imported runs have them too.

The module holds both the declarations and the kernels: it imports NumPy only inside the
kernels, so the registry (and the command line's help) can read the declarations cheaply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalplat.metrics.model import Measure

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from evalplat.metrics.ranking import Ranking
    from evalplat.metrics.registry import Metric
    from evalplat.metrics.sources import RunRecords


def latency(records: RunRecords, metric: Metric) -> NDArray[np.float64]:
    """Milliseconds per query; NaN where the run recorded none."""
    import numpy as np

    values: NDArray[np.float64] = records.latency_ms.astype(np.float64, copy=True)
    return values


def zero_result(ranking: Ranking, metric: Metric) -> NDArray[np.float64]:
    """1 for a query with no results, else 0: the mean is the zero-result rate."""
    import numpy as np

    values: NDArray[np.float64] = (ranking.num_ret == 0).astype(np.float64)
    return values


def coverage(ranking: Ranking, metric: Metric) -> NDArray[np.float64]:
    """1 for a query with at least one result: the mean is the share of queries answered."""
    import numpy as np

    values: NDArray[np.float64] = (ranking.num_ret > 0).astype(np.float64)
    return values


# What a run costs and whether it answers (the kernels above). A search run scores these
# with its relevance metrics (evalplat.running.runner.SYSTEM_METRICS).
SYSTEM: tuple[Measure, ...] = (
    Measure(
        name="Latency",
        description="Time the engine took to answer a query, in milliseconds.",
        formula="Latency = mean over queries of the ms of the successful attempt; "
        "Latency(p=95) = its 95th percentile by nearest rank (the value at rank ceil(0.95 n))",
        compute="system:latency",
        cutoff="none",
        params=("p",),
        higher_is_better=False,
        inputs=("records",),
        aggregate="percentile",
        test="bootstrap",
        bounded=False,
        value_unit="ms",
        unknown_values=True,
        max_relative_change=0.2,
        paired_timings=True,
        notes=(
            "Recorded by `evalplat run` and `nightly` for every answered query; a run imported "
            "from a file has no latency and no Latency scores (not 0).",
            "A failed query has no latency: figures use the answered queries, and a comparison "
            "pairs the queries both runs answered.",
            "A verdict rests on timings of both config versions taken together, query by "
            "query, in the same night: a Wilcoxon signed-rank test of log(candidate/baseline) "
            "and a typical slowdown (Hodges-Lehmann) of at least 20 % unless the gate sets its "
            "own; two stored runs without them are shown, not gated "
            "(docs/regression-detection.md).",
        ),
    ),
    Measure(
        name="ZeroResult",
        description="1 when a query returned no results: the mean is the zero-result rate.",
        formula="ZeroResult = [ |ranking| = 0 ]",
        compute="system:zero_result",
        cutoff="none",
        higher_is_better=False,
        inputs=("ranking",),
        notes=(
            "A failed query has no results and counts as one with none: a partial run's "
            "failures raise the rate.",
        ),
    ),
    Measure(
        name="Coverage",
        description="1 when a query returned at least one result: the share of queries answered.",
        formula="Coverage = [ |ranking| > 0 ] = 1 - ZeroResult",
        compute="system:coverage",
        cutoff="none",
        inputs=("ranking",),
    ),
)
