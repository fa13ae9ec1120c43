"""Per-query score frames as a comparison reads them: one column per metric, one row per query.

``wide_scores`` pivots a tidy ``query_id, metric, value`` frame; ``choose_metrics`` decides
which metrics are compared (and refuses a run that lacks one); ``judged_coverage`` is the
judged-coverage figure each metric's guard reads (Judged@k and the unjudged share of the top k).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalplat.comparison.results import Gate
from evalplat.errors import InputError
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["choose_metrics", "judged_coverage", "wide_scores"]


def wide_scores(scores: pd.DataFrame, side: str) -> pd.DataFrame:
    import pandas as pd

    missing = {"query_id", "metric", "value"} - set(scores.columns)
    if missing:
        raise InputError(f"{side} scores need columns query_id, metric, value")
    if scores.duplicated(["query_id", "metric"]).any():
        raise InputError(f"{side} scores have more than one value for a (query, metric)")
    wide = scores.pivot(index="query_id", columns="metric", values="value")
    wide.index = wide.index.astype(str)
    # Keep the metrics in the order they were scored (the user's order), not alphabetical.
    return wide.sort_index()[list(pd.unique(scores["metric"].to_numpy(dtype=object)))]


def choose_metrics(
    metrics: Sequence[str | Metric] | None,
    gates: Sequence[Gate] | None,
    wide_a: pd.DataFrame,
    wide_b: pd.DataFrame,
) -> list[Metric]:
    from evalplat.metrics.registry import parse

    both = [name for name in wide_a.columns if name in wide_b.columns]
    names = [str(m) for m in metrics] if metrics else both
    names += [g.metric for g in gates or () if str(parse(g.metric)) not in
              {str(parse(n)) for n in names}]  # fmt: skip
    chosen: list[Metric] = []
    for name in names:
        metric = parse(name)
        key = str(metric)
        for frame, side in ((wide_a, "baseline"), (wide_b, "candidate")):
            if key not in frame.columns:
                raise InputError(f"the {side} run has no scores for {key}: rescore it with it")
            if frame[key].isna().any() and not metric.spec.unknown_values:
                raise InputError(f"the {side} run lacks {key} for some queries: rescore it")
        if metric not in chosen:
            chosen.append(metric)
    return chosen


def judged_coverage(
    metric: Metric, wide_a: pd.DataFrame, wide_b: pd.DataFrame
) -> tuple[float | None, float | None, float | None]:
    """Mean Judged@k of both sides, and how much the unjudged share of the top k rose.

    k is the metric's cutoff; without a cutoff (AP, RR), the deepest Judged@k both sides have.
    Judged@k is 0 for a query with no results, so a candidate that returns nothing lowers it
    without showing a single unjudged document. When both sides have ``NumRet``, the guard
    therefore uses the unjudged share U@k = min(k, NumRet) * (1 - Judged@k) / k per query, and
    the third value is mean U@k of the candidate minus the baseline's. Without ``NumRet`` it is
    the fall of Judged@k. (None, None, None) when neither side has a Judged@k.
    """
    from evalplat.metrics.registry import parse

    judged = {}
    for name in wide_a.columns:
        if name in wide_b.columns and str(name).startswith("Judged@"):
            parsed = parse(str(name))
            if parsed.cutoff is not None and not parsed.params:
                judged[parsed.cutoff] = str(parsed)
    if not judged:
        return None, None, None
    key = judged.get(metric.cutoff) if metric.cutoff is not None else None
    k = metric.cutoff if key is not None and metric.cutoff is not None else max(judged)
    key = key or judged[k]
    mean_a, mean_b = float(wide_a[key].mean()), float(wide_b[key].mean())
    if "NumRet" in wide_a.columns and "NumRet" in wide_b.columns:

        def unjudged(wide: pd.DataFrame) -> float:
            # Judged@k is judged / min(k, retrieved), so the unjudged documents shown are
            # min(k, retrieved) * (1 - Judged@k); a query with no results shows none.
            shown = wide["NumRet"].clip(upper=k)
            return float((shown * (1.0 - wide[key]) / k).mean())

        return mean_a, mean_b, unjudged(wide_b) - unjudged(wide_a)
    return mean_a, mean_b, mean_a - mean_b
