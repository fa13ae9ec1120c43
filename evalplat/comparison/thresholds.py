"""Gate thresholds: which metrics a comparison gates unless told otherwise, which gate a metric
of a comparison is held to, the default threshold a measure brings
(``Measure.max_relative_change``), and whether a change is beyond a gate's thresholds. Split
from :mod:`evalplat.comparison.verdicts`, which decides with them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evalplat.comparison.results import CompareOptions, Gate
from evalplat.errors import InputError
from evalplat.metrics.registry import Metric


def gated_by_default(metric: Metric) -> bool:
    """Is ``metric`` gated when no gate is named? The relevance measures are: every gateable
    measure that reads judgments (nDCG, P, AP, ...) or users' events (``online:CTR``).
    Operational measures (latency, zero results, coverage, diversity) are compared and shown,
    never gated unless a gate names them: timing noise or a field's spread is not a relevance
    regression."""
    return metric.gateable and (metric.reads_judgments or "events" in metric.spec.inputs)


def default_gates(
    metrics: Sequence[str | Metric], options: CompareOptions | None = None
) -> list[Gate]:
    """The rule set in force where none is stated, the one every surface applies (``compare``
    without ``--gate``, a night without ``[[gates]]``, the leaderboard): a gate on each
    relevance metric (:func:`gated_by_default`) among ``metrics``, with the options' test and
    alpha and the measure's own thresholds, in the order given."""
    from evalplat.metrics.names import parse

    options = options or CompareOptions()
    chosen = list({str(parse(str(m))): parse(str(m)) for m in metrics}.values())
    return [
        Gate(str(m), test=options.test, alpha=options.alpha) for m in chosen if gated_by_default(m)
    ]


def gates_in_force(
    stated: Sequence[Gate], metrics: Sequence[str | Metric], options: CompareOptions | None = None
) -> list[Gate]:
    """The gates that decide a comparison: those stated for it (a project's ``[[gates]]`` that
    apply, ``compare --gate``), else :func:`default_gates` over the metrics compared."""
    return list(stated) if stated else default_gates(metrics, options)


def gate_map(
    gates: Sequence[Gate] | None, chosen: list[Metric], options: CompareOptions
) -> dict[str, Gate]:
    """The gate of each metric compared: with ``gates=None`` those of :func:`default_gates`,
    else each gate given (segment gates aside) by its metric."""
    from evalplat.metrics.names import parse

    if gates is None:
        return {g.metric: with_default_threshold(g) for g in default_gates(chosen, options)}
    result: dict[str, Gate] = {}
    for gate in gates:
        if gate.segment is not None:  # evalplat.comparison.segments.segment_gates
            continue
        metric = parse(gate.metric)
        if not metric.gateable:
            raise InputError(f"{metric} is an informational count and cannot be gated")
        if str(metric) in result:
            raise InputError(f"more than one gate on {metric}")
        result[str(metric)] = with_default_threshold(gate)
    return result


def with_default_threshold(gate: Gate) -> Gate:
    """A gate on a measure with a default relative threshold (latency: a 20 % slowdown) takes
    it unless it sets its own."""
    from dataclasses import replace

    from evalplat.metrics.names import parse

    relative = parse(gate.metric).spec.max_relative_change
    if relative is None or gate.max_relative_drop is not None:
        return gate
    return replace(gate, max_relative_drop=relative)


def beyond(
    size: float, baseline: float, max_drop: float | None, max_relative_drop: float | None
) -> bool:
    """Is a change of ``size`` larger than the thresholds (all that are set)?"""
    if size == 0.0:
        return False
    if max_drop is not None and not size > max_drop:
        return False
    if max_relative_drop is not None:
        relative = math.inf if baseline == 0 else size / abs(baseline)
        if not relative > max_relative_drop:
            return False
    return True
