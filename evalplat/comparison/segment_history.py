"""A metric per segment over many runs: the figure of each (run, segment) from stored scores.

A segment is the queries carrying one tag in the run's test set version
(``evalplat.comparison.segments``). Its figure is the metric's own aggregate over those queries,
computed as a comparison computes a segment's means: a ``mean`` measure is weighted by the query
weights (a query without one counts 1; with no weights at all it is the arithmetic mean), a
``sum`` adds the values, a ``percentile`` takes the value at rank ``ceil(p/100 · n)`` of the
segment's sorted values. Values a measure may lack (latency of a failed query) are left out and
not counted.

Everything is one pass of grouped column operations over all runs at once: the queries' tags
are exploded into (run, query, segment) rows, joined to the scores, and grouped by (run,
segment).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SEGMENT_COLUMNS", "segment_values"]

SEGMENT_COLUMNS = ["run_id", "segment", "value", "queries"]


def segment_values(scores: pd.DataFrame, queries: pd.DataFrame, metric: Metric) -> pd.DataFrame:
    """``run_id, segment, value, queries`` for every run and every tag of its queries.

    ``scores``: ``run_id, query_id, value`` (the per-query values of ``metric``, one evaluation
    per run); ``queries``: ``run_id, query_id, weight, tags`` (the run's test set version; tags a
    list or None, weight a number or None). Sorted by run, then segment.
    """
    import numpy as np
    import pandas as pd

    from evalplat.metrics.aggregate import GEOMEAN_FLOOR

    tagged = queries[["run_id", "query_id", "weight", "tags"]].explode("tags")
    tagged = tagged[tagged["tags"].notna()].rename(columns={"tags": "segment"})
    rows = tagged.merge(scores[["run_id", "query_id", "value"]], on=["run_id", "query_id"])
    rows = rows[rows["value"].notna()]
    if rows.empty:
        return pd.DataFrame({name: [] for name in SEGMENT_COLUMNS})
    rows = rows.assign(
        segment=rows["segment"].astype(str),
        value=rows["value"].astype(np.float64),
        weight=pd.to_numeric(rows["weight"], errors="coerce").fillna(1.0).astype(np.float64),
    )
    keys = ["run_id", "segment"]
    if metric.aggregate == "percentile":
        p = float(metric.param("p"))  # type: ignore[arg-type]
        ordered = rows.sort_values([*keys, "value"], kind="stable")
        grouped = ordered.groupby(keys, sort=False)
        size = grouped["value"].transform("size").to_numpy()
        rank = grouped.cumcount().to_numpy() + 1
        wanted = np.maximum(1, np.ceil(p / 100.0 * size).astype(np.int64))
        picked = ordered[rank == wanted]
        result = picked[[*keys, "value"]].assign(queries=size[rank == wanted])
    else:
        if metric.aggregate == "geomean":  # a weighted mean of logs, raised back below
            rows = rows.assign(value=np.log(np.maximum(rows["value"], GEOMEAN_FLOOR)))
        rows = rows.assign(weighted=rows["value"] * rows["weight"])
        grouped = rows.groupby(keys, sort=False)
        totals = grouped.agg(
            total=("value", "sum"),
            weighted=("weighted", "sum"),
            weight=("weight", "sum"),
            queries=("value", "size"),
        ).reset_index()
        if metric.aggregate == "sum":
            value = totals["total"]
        else:
            value = (totals["weighted"] / totals["weight"]).where(totals["weight"] > 0, 0.0)
            if metric.aggregate == "geomean":
                value = np.exp(value).where(totals["weight"] > 0, 0.0)
        result = totals[[*keys, "queries"]].assign(value=value)
    result = result.sort_values(keys, kind="stable").reset_index(drop=True)
    result["queries"] = result["queries"].astype(np.int64)
    ordered_columns: pd.DataFrame = result[SEGMENT_COLUMNS]
    return ordered_columns
