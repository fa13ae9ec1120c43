"""Per-query score frames as a comparison reads them: one column per metric, one row per query.

``wide_scores`` pivots a tidy ``query_id, metric, value`` frame and ``paired_scores`` pairs
two runs' (refusing different topics); ``choose_metrics`` decides which metrics are compared
(and refuses a run that lacks one); ``paired_values`` is what a metric's mean and test read of
the pair; ``judged_coverage`` is the judged-coverage figure each metric's guard reads (Judged@k
and the unjudged share of the top k).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalplat.comparison.results import Gate
from evalplat.errors import InputError
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

__all__ = ["choose_metrics", "judged_coverage", "paired_scores", "paired_values", "wide_scores"]


def wide_scores(scores: pd.DataFrame, side: str) -> pd.DataFrame:
    """One row per query (sorted by id as text), one column per metric in the order the
    metrics first appear (the user's order); a missing (query, metric) is NaN."""
    import numpy as np
    import pandas as pd

    missing = {"query_id", "metric", "value"} - set(scores.columns)
    if missing:
        raise InputError(f"{side} scores need columns query_id, metric, value")
    # factorized codes into a preallocated grid: a pivot without its index machinery
    query_codes, query_ids = pd.factorize(scores["query_id"].astype(str), sort=True)
    metric_codes, metric_names = pd.factorize(scores["metric"])
    cells = query_codes.astype(np.int64) * len(metric_names) + metric_codes
    if np.bincount(cells, minlength=1).max(initial=0) > 1:
        raise InputError(f"{side} scores have more than one value for a (query, metric)")
    grid = np.full((len(query_ids), len(metric_names)), np.nan)
    grid[query_codes, metric_codes] = scores["value"].to_numpy(dtype=np.float64)
    return pd.DataFrame(
        grid,
        index=pd.Index(np.asarray(query_ids, dtype=object), name="query_id"),
        columns=pd.Index(np.asarray(metric_names, dtype=object), name="metric"),
    )


def paired_scores(
    baseline: pd.DataFrame, candidate: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both runs' wide scores, rows in the same (the baseline's) query order; refused when the
    runs were scored over different topics."""
    wide_a, wide_b = wide_scores(baseline, "baseline"), wide_scores(candidate, "candidate")
    if set(wide_a.index) != set(wide_b.index):
        only_a = len(set(wide_a.index) - set(wide_b.index))
        only_b = len(set(wide_b.index) - set(wide_a.index))
        raise InputError(
            f"the runs were scored over different topics ({only_a} only in the baseline, "
            f"{only_b} only in the candidate): rescore both against one test set version"
        )
    return wide_a, wide_b.loc[wide_a.index]


def paired_values(
    metric: Metric,
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    weights: NDArray[np.float64] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None]:
    """The per-query values of ``metric`` a comparison pairs (for a measure with unknown
    values, such as latency of a failed query, the queries known on both sides) and the
    weights of its mean (only means are weighted, as in ``evaluate``; equal weights are no
    weights, so they give exactly the unweighted figures)."""
    import numpy as np

    from evalplat.comparison import stats

    if metric.spec.unknown_values:
        known = ~(np.isnan(a) | np.isnan(b))
        a, b = a[known], b[known]
        weights = None if weights is None else weights[known]
    return a, b, stats.query_weights(weights, a.size) if metric.aggregate == "mean" else None


def choose_metrics(
    metrics: Sequence[str | Metric] | None,
    gates: Sequence[Gate] | None,
    wide_a: pd.DataFrame,
    wide_b: pd.DataFrame,
) -> list[Metric]:
    from evalplat.metrics.names import parse

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
    metric: Metric,
    wide_a: pd.DataFrame,
    wide_b: pd.DataFrame,
    cache: dict[str, tuple[float | None, float | None, float | None]] | None = None,
) -> tuple[float | None, float | None, float | None]:
    """Mean Judged@k of both sides, and how much the unjudged share of the top k rose.

    k is the metric's cutoff; without a cutoff (AP, RR), the deepest Judged@k both sides have.
    Judged@k is 0 for a query with no results, so a candidate that returns nothing lowers it
    without showing a single unjudged document. When both sides have ``NumRet``, the guard
    therefore uses the unjudged share U@k = min(k, NumRet) * (1 - Judged@k) / k per query, and
    the third value is mean U@k of the candidate minus the baseline's. Without ``NumRet`` it is
    the fall of Judged@k. (None, None, None) when neither side has a Judged@k. ``cache`` (one
    dict per pair of frames) keeps the figures of each Judged@k, which metrics sharing a cutoff
    read alike.
    """
    from evalplat.metrics.names import parse

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
    if cache is not None and key in cache:
        return cache[key]
    mean_a, mean_b = float(wide_a[key].mean()), float(wide_b[key].mean())
    if "NumRet" in wide_a.columns and "NumRet" in wide_b.columns:

        def unjudged(wide: pd.DataFrame) -> float:
            # Judged@k is judged / min(k, retrieved), so the unjudged documents shown are
            # min(k, retrieved) * (1 - Judged@k); a query with no results shows none.
            shown = wide["NumRet"].to_numpy(dtype=float).clip(max=k)
            return float((shown * (1.0 - wide[key].to_numpy(dtype=float)) / k).mean())

        result = (mean_a, mean_b, unjudged(wide_b) - unjudged(wide_a))
    else:
        result = (mean_a, mean_b, mean_a - mean_b)
    if cache is not None:
        cache[key] = result
    return result
