"""Comparing two config versions on an online measure: an unpaired test over sessions.

The two arms of an A/B test (or two days of one config) serve different sessions, so nothing
pairs a baseline unit with a candidate unit: the paired tests of query measures do not apply.
Each online measure is a mean over sessions (``evalplat.metrics.online``); its verdict uses a
**two-sample bootstrap of the difference of the means** (Efron & Tibshirani, *An Introduction
to the Bootstrap*, algorithm 16.2):

- observed Δ = mean(candidate) - mean(baseline);
- B times, resample each arm's sessions with replacement (seeded) and take
  e = (mean(candidate*) - mean(candidate)) - (mean(baseline*) - mean(baseline)): the
  difference's sampling noise with both arms shifted to the same mean (the null hypothesis);
- p = (1 + #{|e| >= |Δ|}) / (B + 1), two-sided; CI = Δ + the (a/2, 1-a/2) percentiles of e,
  a = 1 - the CI level.

Sessions are the unit, never events: a session with many clicks weighs as one. A side with
fewer than ``min_sessions`` known values is shown with its means but is not tested or gated
(too little data to call a verdict). Thresholds, Holm's correction and verdict rules are the
ones of query measures (``evalplat.comparison.verdicts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalplat.comparison.results import CompareOptions, ComparisonResult, Gate
from evalplat.errors import InputError
from evalplat.metrics.names import parse
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

MIN_SESSIONS = 30
_SEVERITY = {"regression": 3, "needs_judgments": 2, "improvement": 1, "unchanged": 0}


def by_session(scores: pd.DataFrame, metrics: Sequence[str | Metric] | None) -> bool:
    """True when the metrics compared (given, or those scored) are all measured per session."""
    names = [str(m) for m in metrics] if metrics else list(dict.fromkeys(scores["metric"]))
    return bool(names) and all(parse(name).spec.unit == "session" for name in names)


def bootstrap_two_sample(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    *,
    n: int = 2_000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, tuple[float, float]]:
    """(two-sided p-value, CI of mean(b) - mean(a)) by the shifted two-sample bootstrap."""
    import numpy as np

    if not a.size or not b.size:
        raise InputError("the bootstrap needs at least one session on each side")
    rng = np.random.default_rng(seed)
    observed = float(b.mean() - a.mean())
    noise = _resampled_means(b, n, rng) - float(b.mean())
    noise -= _resampled_means(a, n, rng) - float(a.mean())
    p = (1.0 + float(np.sum(np.abs(noise) >= abs(observed) - 1e-12))) / (n + 1.0)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(noise, [tail, 1.0 - tail])
    return min(p, 1.0), (observed + float(low), observed + float(high))


def _resampled_means(values: NDArray[np.float64], n: int, rng: Any) -> NDArray[np.float64]:
    """Means of ``n`` resamples of ``values``, drawn in batches of about two million values."""
    import numpy as np

    means = np.empty(n)
    batch = max(1, 2_000_000 // values.size)
    for start in range(0, n, batch):
        rows = min(batch, n - start)
        means[start : start + rows] = values[rng.integers(0, values.size, (rows, values.size))
                                             ].mean(axis=1)  # fmt: skip
    return means


def compare_sessions(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    metrics: Sequence[str | Metric] | None = None,
    gates: Sequence[Gate] | None = None,
    options: CompareOptions | None = None,
    *,
    min_sessions: int | None = None,
) -> ComparisonResult:
    """Compare per-session scores (tidy ``query_id, metric, value``; ``query_id`` holds the
    session) of two online evaluations, metric by metric (module doc). ``min_sessions``
    defaults to the options' (30)."""
    from evalplat.comparison.thresholds import gate_map
    from evalplat.comparison.verdicts import _correct, _decide

    options = options or CompareOptions()
    if min_sessions is None:
        min_sessions = options.min_sessions
    names = [str(parse(m)) for m in metrics] if metrics else _common(baseline, candidate)
    names += [str(parse(g.metric)) for g in gates or () if str(parse(g.metric)) not in names]
    chosen = [parse(name) for name in names]
    gate_by_metric = gate_map(gates, chosen, options)
    rows = [
        _measure(m, _values(baseline, m, "baseline"), _values(candidate, m, "candidate"),
                 gate_by_metric.get(str(m)), options, min_sessions)
        for m in chosen
    ]  # fmt: skip
    _correct(rows)
    compared = tuple(_decide(row, options, None) for row in rows)
    gated = [m.verdict for m in compared if m.gated]
    return ComparisonResult(
        metrics=compared,
        movers={},
        overlap=None,
        options=options,
        gates=tuple(gate_by_metric.values()),
        verdict=max(gated, key=_SEVERITY.__getitem__) if gated else "unchanged",
        queries=int(candidate["query_id"].nunique()),
        sessions=(int(baseline["query_id"].nunique()), int(candidate["query_id"].nunique())),
    )


def _common(baseline: pd.DataFrame, candidate: pd.DataFrame) -> list[str]:
    theirs = set(candidate["metric"])
    return [name for name in dict.fromkeys(baseline["metric"]) if name in theirs]


def _values(scores: pd.DataFrame, metric: Metric, side: str) -> NDArray[np.float64]:
    import numpy as np

    values = scores.loc[scores["metric"] == str(metric), "value"].to_numpy(dtype=np.float64)
    if not values.size:
        raise InputError(f"the {side} has no scores for {metric}: score it with it")
    known: NDArray[np.float64] = values[~np.isnan(values)]
    return known


def _measure(
    metric: Metric,
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    gate: Gate | None,
    options: CompareOptions,
    min_sessions: int,
) -> dict[str, Any]:
    """A row as ``evalplat.comparison.verdicts`` decides it (same keys as its ``_measure``)."""
    import numpy as np

    from evalplat.metrics.aggregate import aggregate

    mean_a = aggregate(metric, a) if a.size else float("nan")
    mean_b = aggregate(metric, b) if b.size else float("nan")
    delta = mean_b - mean_a
    enough = min(a.size, b.size) >= max(min_sessions, 1)
    identical = bool(a.size == b.size and np.array_equal(np.sort(a), np.sort(b)))
    p_value: float | None = None
    ci: tuple[float | None, float | None] = (None, None)
    if enough and identical:
        p_value, ci = 1.0, (0.0, 0.0)
    elif enough and metric.gateable:
        p_value, ci = bootstrap_two_sample(
            a, b, n=options.bootstrap, seed=options.seed, level=options.ci_level
        )
    gated = gate is not None and enough
    return {
        "metric": str(metric),
        "metric_obj": metric,
        "higher_is_better": metric.higher_is_better,
        "baseline": mean_a,
        "candidate": mean_b,
        "delta": delta,
        "relative_delta": delta / abs(mean_a) if mean_a not in (0.0,) and a.size else None,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "test": "bootstrap" if enough else "insufficient",
        "p_value": p_value,
        "effect_size": None,
        "wins": 0,
        "ties": 0,
        "losses": 0,
        "baseline_judged": None,
        "candidate_judged": None,
        "gated": gated,
        "max_drop": None if gate is None else gate.max_drop,
        "max_relative_drop": None if gate is None else gate.max_relative_drop,
        "alpha": options.alpha if gate is None else gate.alpha,
        "identical": identical,
        "unjudged_rise": None,
        "unjudged_mode": "ignore",
    }
