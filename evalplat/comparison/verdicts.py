"""Comparing a candidate run's per-query scores with a baseline's: deltas, tests and verdicts.

Everything here is pure: it takes per-query scores (DataFrames) and returns frozen dataclasses;
the store feeds it from the database and keeps the result, reports render it.

Verdict of one metric (direction always from the metric registry, ``Metric.direction``):

- ``unchanged`` when the two per-query vectors are identical (``p = 1``; no alert possible), and
  whenever neither rule below applies.
- ``regression`` when the drop (``direction * delta < 0``) exceeds the gate's threshold —
  ``max_drop`` (absolute) and/or ``max_relative_drop`` (relative to the baseline mean); with
  both, the drop must exceed both — **and** the Holm-corrected p-value is below ``alpha``.
- ``improvement`` symmetrically: a gain beyond the same thresholds with corrected p < alpha.
- ``needs_judgments`` when the verdict turns on unjudged documents, which count as non-relevant
  in the stored scores: by default when the verdict under the optimistic bound (every unjudged
  top-k document relevant, ``evalplat.comparison.guard``) differs from the one above; the gate's
  ``unjudged`` setting chooses the rule (``evalplat.comparison.guard.guard_verdict``).

Holm's correction runs over the gated metrics (one family: what can fail a CI job or raise an
alert); the ungated metrics are corrected as a second family, for display only, and decided
under their measure's default thresholds. ``evalplat.comparison.explain`` says why each metric
got its verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from evalplat.comparison import segments
from evalplat.comparison.guard import BoundScores, guard_verdict
from evalplat.comparison.movers import movers_of, per_query_frame, query_id_rank
from evalplat.comparison.paired_latency import PairedTimings, row_verdict, timed_row
from evalplat.comparison.results import (
    BOUND_FIELDS,
    TESTS,
    UNJUDGED_MODES,
    VERDICTS,
    CompareOptions,
    ComparisonResult,
    Gate,
    MetricComparison,
    Movers,
    OverlapSummary,
    QueryMove,
    TestName,
    Verdict,
)
from evalplat.comparison.scores import (
    choose_metrics,
    judged_coverage,
    paired_scores,
    paired_values,
    wide_scores,
)
from evalplat.comparison.shared_draws import SharedDraws
from evalplat.comparison.thresholds import beyond, gate_map, with_default_threshold
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

__all__ = [
    "BOUND_FIELDS",
    "TESTS",
    "UNJUDGED_MODES",
    "VERDICTS",
    "CompareOptions",
    "ComparisonResult",
    "Gate",
    "MetricComparison",
    "Movers",
    "OverlapSummary",
    "QueryMove",
    "TestName",
    "Verdict",
    "compare_scores",
]


_SEVERITY = {"regression": 3, "needs_judgments": 2, "improvement": 1, "unchanged": 0}


def compare_scores(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    metrics: Sequence[str | Metric] | None = None,
    gates: Sequence[Gate] | None = None,
    options: CompareOptions | None = None,
    *,
    overlap: OverlapSummary | None = None,
    bound: BoundScores | None = None,
    weights: Mapping[str, float] | pd.Series | None = None,
    tags: Mapping[str, Iterable[str] | str | None] | None = None,
    timings: PairedTimings | None = None,
) -> ComparisonResult:
    """Compare per-query scores of a candidate with a baseline's.

    ``baseline`` and ``candidate`` are tidy frames ``query_id, metric, value`` (as
    ``Store.evaluation_scores`` returns) over the same topics. ``metrics`` defaults to every
    metric both sides have (Judged@k columns are also used for the judged-coverage guard).
    ``gates=None`` gates every relevance metric compared
    (``evalplat.comparison.thresholds.gated_by_default``), with ``options``' test and alpha and no
    threshold; ``gates=()`` gates nothing. Means are arithmetic over topics (sums for ``Num*``
    counts), weighted by ``weights`` (query id -> weight, 1 when missing) when given.
    ``bound`` holds both sides' scores under the optimistic bound
    (``evalplat.comparison.guard.optimistic_bound``); without it, ``unjudged = "bound"`` gates fall
    back to the Judged@k rule. ``tags`` (query id -> its tags) adds a row per metric and segment
    (``evalplat.comparison.segments``). ``timings`` are the two config versions' paired
    timings, on which latency is decided (``evalplat.comparison.paired_latency``); without
    them a latency row is shown and not gated.
    """
    import numpy as np

    from evalplat.comparison.sessions import by_session, compare_sessions

    options = options or CompareOptions()
    if by_session(baseline, metrics):  # online measures: different sessions, an unpaired test
        return compare_sessions(baseline, candidate, metrics, gates, options)
    wide_a, wide_b = paired_scores(baseline, candidate)
    chosen = choose_metrics(metrics, gates, wide_a, wide_b)
    gate_by_metric = gate_map(gates, chosen, options)
    query_tags = segments.tag_map(tags)
    gate_by_segment = {
        key: with_default_threshold(gate)
        for key, gate in segments.segment_gates(gates, query_tags).items()
    }
    w = segments.weight_vector(wide_a.index, weights)
    rows: list[dict[str, Any]] = []
    per_query = []
    movers: dict[str, Movers] = {}
    draws = SharedDraws(options)
    coverage: dict[str, tuple[float | None, float | None, float | None]] = {}
    id_rank = query_id_rank(wide_a.index)
    for metric in chosen:
        name = str(metric)
        a = wide_a[name].to_numpy(dtype=np.float64)
        b = wide_b[name].to_numpy(dtype=np.float64)
        gate = gate_by_metric.get(name)
        judged = judged_coverage(metric, wide_a, wide_b, coverage)
        rows.append(_measure(metric, a, b, gate, options, judged, weights=w, draws=draws))
        timed_row(rows[-1], metric, timings)
        per_query.append((name, a, b))
        movers[name] = movers_of(name, wide_a.index, a, b, metric.direction, options, id_rank)
    by_segment = segments.measure_segments(
        chosen, wide_a, wide_b, w, query_tags, gate_by_segment, options,
        partial(_measure, draws=draws), timings,
    )  # fmt: skip
    draws.run()
    _correct(rows + by_segment)
    best = _optimistic(bound, chosen, gate_by_metric, options, weights)
    compared = tuple(_decide(row, options, best.get(row["metric"])) for row in rows)
    per_segment = tuple(segments.decide_segment(r, options, _plain_verdict) for r in by_segment)
    gated = [m.verdict for m in compared if m.gated]
    gated += [s.verdict for s in per_segment if s.gated]
    verdict = max(gated, key=_SEVERITY.__getitem__) if gated else "unchanged"

    return ComparisonResult(
        metrics=compared,
        movers=movers,
        overlap=overlap,
        options=options,
        gates=(*gate_by_metric.values(), *gate_by_segment.values()),
        verdict=verdict,
        queries=len(wide_a.index),
        per_query=per_query_frame(
            [name for name, _, _ in per_query],
            wide_a.index,
            [a for _, a, _ in per_query],
            [b for _, _, b in per_query],
        )
        if per_query
        else None,
        weighted=weights is not None,
        segments=per_segment,
        query_tags=query_tags,
    )


def _measure(
    metric: Metric,
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    gate: Gate | None,
    options: CompareOptions,
    judged: tuple[float | None, float | None, float | None],
    *,
    weights: NDArray[np.float64] | None = None,
    draws: SharedDraws | None = None,
    interval: bool = True,
) -> dict[str, Any]:
    """Everything but the corrected p-value and the verdict, as a row dict. With ``draws`` the
    randomization test and the bootstraps are registered there and filled in by its ``run``
    (one draw for all the rows of a comparison). Without ``interval`` the bootstrap interval
    of a mean is not drawn (``ci_low`` and ``ci_high`` stay None): the optimistic bound
    decides on the test's p-value alone."""
    from evalplat.comparison import stats
    from evalplat.metrics.aggregate import aggregate

    a, b, w = paired_values(metric, a, b, weights)
    mean_a, mean_b = aggregate(metric, a, w), aggregate(metric, b, w)
    delta = mean_b - mean_a
    d = b - a
    identical = bool(not d.any())
    test = gate.test if gate is not None else options.test
    if metric.test == "bootstrap":
        test = "bootstrap"
    p_value: float | None = None
    ci: tuple[float | None, float | None] = (None, None)
    pending: list[Callable[[dict[str, Any]], None]] = []
    if identical:
        p_value, ci = 1.0, (0.0, 0.0)
    elif metric.spec.paired_timings:
        pass  # decided on paired timings (evalplat.comparison.paired_latency), not two runs
    elif metric.gateable and a.size and test == "bootstrap":
        if draws is None:
            p_value, ci = stats.bootstrap_difference(
                a, b, metric, n=options.bootstrap, seed=options.seed, level=options.ci_level
            )
        else:
            pending.append(lambda row: draws.percentile(row, a, b, metric))
    elif metric.gateable and a.size:
        scale = float(a.size) if metric.aggregate == "sum" else 1.0
        if draws is None:
            p_value = _p_value(test, a, b, options, w)
            if interval:
                low, high = stats.bootstrap_ci(d, n=options.bootstrap, seed=options.seed,
                                               level=options.ci_level, weights=w)  # fmt: skip
                ci = (low * scale, high * scale)
        else:
            if test == "randomization":
                x = stats.weighted_differences(d, w)
                pending.append(lambda row: draws.randomization(row, x))
            else:
                p_value = _p_value(test, a, b, options, w)
            if interval:
                pending.append(lambda row: draws.mean_interval(row, d, w, scale))
    counts = stats.wins_ties_losses(
        a, b, tolerance=options.tie_tolerance, higher_is_better=metric.higher_is_better
    )
    # an ungated row's verdict is for display, under the measure's own default thresholds
    limits = gate if gate is not None else with_default_threshold(Gate(str(metric)))
    row = {
        "metric": str(metric),
        "metric_obj": metric,
        "higher_is_better": metric.higher_is_better,
        "baseline": mean_a,
        "candidate": mean_b,
        "delta": delta,
        "relative_delta": delta / abs(mean_a) if mean_a != 0 else None,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "test": test,
        "p_value": p_value,
        "effect_size": stats.effect_size(a, b, weights=w) if a.size else None,
        "wins": counts.wins,
        "ties": counts.ties,
        "losses": counts.losses,
        "baseline_judged": judged[0],
        "candidate_judged": judged[1],
        "gated": gate is not None,
        "max_drop": limits.max_drop,
        "max_relative_drop": limits.max_relative_drop,
        "alpha": options.alpha if gate is None else gate.alpha,
        "identical": identical,
        "unjudged_rise": judged[2],
        # the guard is about unjudged documents: a measure they cannot move (it reads no
        # judgments, or drops unjudged documents first) ignores it
        "unjudged_mode": "ignore"
        if not metric.moved_by_unjudged
        else "bound"
        if gate is None
        else gate.unjudged,
    }
    for register in pending:
        register(row)
    return row


def _p_value(
    test: str,
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    options: CompareOptions,
    weights: NDArray[np.float64] | None,
) -> float:
    from evalplat.comparison import stats

    if test == "randomization":
        return stats.randomization_test(
            a, b, n=options.permutations, seed=options.seed, weights=weights
        )
    if test == "t-test":
        return stats.t_test(a, b, weights=weights)
    return stats.wilcoxon(a, b, weights=weights)


def _correct(rows: list[dict[str, Any]]) -> None:
    """Holm within the gated family and, separately, within the ungated one (display only).
    A row's ``family`` key, when set, names its family (segment rows: ``segments``)."""
    from evalplat.comparison import stats

    for family in dict.fromkeys(row.get("family", row["gated"]) for row in rows):
        members = [
            r for r in rows if r.get("family", r["gated"]) == family and r["p_value"] is not None
        ]
        adjusted = stats.holm([r["p_value"] for r in members])
        for row, p in zip(members, adjusted, strict=True):
            row["p_corrected"] = float(p)
    for row in rows:
        row.setdefault("p_corrected", None)


def _optimistic(
    bound: BoundScores | None,
    chosen: list[Metric],
    gate_by_metric: dict[str, Gate],
    options: CompareOptions,
    weights: Mapping[str, float] | pd.Series | None,
) -> dict[str, dict[str, Any]]:
    """Each metric measured and decided again under the optimistic bound (with its own Holm
    family), keyed by metric name: empty without ``bound``."""
    import numpy as np

    if bound is None:
        return {}
    wide_a = wide_scores(bound.baseline, "baseline")
    wide_b = wide_scores(bound.candidate, "candidate")
    wide_b = wide_b.loc[wide_a.index]
    w = segments.weight_vector(wide_a.index, weights)
    rows = []
    draws = SharedDraws(options)
    for metric in chosen:
        name = str(metric)
        if name not in wide_a.columns or name not in wide_b.columns:
            continue
        a = wide_a[name].to_numpy(dtype=np.float64)
        b = wide_b[name].to_numpy(dtype=np.float64)
        gate = gate_by_metric.get(name)
        # its interval is never shown: only the p-value decides the bound's verdict
        rows.append(_measure(metric, a, b, gate, options, (None, None, None), weights=w,
                             draws=draws, interval=False))  # fmt: skip
    draws.run()
    _correct(rows)
    result = {}
    for row in rows:
        name = row["metric"]
        result[name] = {
            "bound_depth": bound.depth.get(name),
            "unjudged": bound.unjudged.get(name),
            "unjudged_queries": bound.unjudged_queries.get(name),
            "baseline_unjudged": bound.baseline_unjudged.get(name),
            "bound_baseline": row["baseline"],
            "bound_candidate": row["candidate"],
            "bound_p_corrected": row["p_corrected"],
            "bound_verdict": _plain_verdict(row),
        }
    return result


def _plain_verdict(row: dict[str, Any]) -> str:
    """Threshold and test alone: regression, improvement or unchanged."""
    metric: Metric = row["metric_obj"]
    if row.get("paired") is not None:
        return row_verdict(row, row["paired"])
    p = row["p_corrected"]
    if row["identical"] or p is None or not p < row["alpha"] or not metric.gateable:
        return "unchanged"
    if not beyond(abs(row["delta"]), row["baseline"], row["max_drop"], row["max_relative_drop"]):
        return "unchanged"
    signed = metric.direction * row["delta"]
    return "improvement" if signed > 0 else "regression" if signed < 0 else "unchanged"


def _decide(
    row: dict[str, Any], options: CompareOptions, best: dict[str, Any] | None
) -> MetricComparison:
    pessimistic = _plain_verdict(row)
    row.pop("metric_obj")
    row.pop("identical")
    row.pop("paired", None)
    unjudged_rise = row.pop("unjudged_rise")
    mode = row.pop("unjudged_mode")
    best = best or {}
    more = (best.get("unjudged") or 0) > (best.get("baseline_unjudged") or 0)
    verdict = guard_verdict(
        mode,
        pessimistic,
        best.get("bound_verdict"),
        unjudged_rise,
        options.judged_drop,
        more_unjudged=more,
    )
    return MetricComparison(verdict=verdict, unjudged_mode=mode, **row, **best)
