"""A night's targets: check the run against the targets in force, keep the verdicts with the
run, and feed the ``target`` and ``drift`` alert state machines.

A target alert must not flap when a metric hovers within noise of its target, so its machine is
fed with three inputs, not two: ``missed`` counts towards opening (by the target's
confirmation rule: ``consecutive`` nights, in a row or ``within`` the last nights), ``met``
counts towards resolving (``clear`` met nights in a row), and ``at_risk`` (the figure is on
the wrong side but its interval still reaches the target) leaves the alert exactly as it is, as
does ``needs_judgments`` (a miss that unjudged documents could undo). An open alert therefore
needs a credible recovery to resolve, and a pending one a credible miss to open. Drift opens
when the window's trend is a slide larger than ``max_slide`` and resolves when it no longer is.
A segment target keys its alerts ``METRIC [segment TAG]``, as a segment gate does, so that it
opens and resolves apart from the target on all queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalplat.comparison.targets import Target, applicable
from evalplat.metrics.numbers import counted
from evalplat.nightly.notify import alert_key

if TYPE_CHECKING:
    from collections.abc import Collection

    from evalplat.alerts.base import Channel
    from evalplat.comparison.targets import Drift, TargetVerdict
    from evalplat.nightly.job import LogFunction
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent


@dataclass
class TargetNight:
    """What the targets said about one run: verdicts, drift, and the alert events written."""

    verdicts: list[TargetVerdict] = field(default_factory=list)
    drifts: list[Drift] = field(default_factory=list)
    events: list[AlertEvent] = field(default_factory=list)

    @property
    def missed(self) -> bool:
        return any(v.verdict == "missed" for v in self.verdicts)


def target_metrics(targets: tuple[Target, ...]) -> list[str]:
    """Metrics a night must score so that its targets can be checked."""
    return list(dict.fromkeys(t.metric for t in targets))


def observe_targets(
    store: Store,
    targets: tuple[Target, ...],
    config: str,
    test_set: str,
    run_id: int,
    channels: list[Channel],
    emit: LogFunction,
    tags: Collection[str] | None = None,
) -> TargetNight:
    """Check ``run_id`` against the targets in force for ``config`` on ``test_set``; given the
    test set's query ``tags``, a segment target on a tag none of them carries is not in force
    there (:mod:`evalplat.nightly.scopes`)."""
    night = TargetNight()
    chosen = [
        target
        for target in applicable(targets, config, test_set)
        if tags is None or target.segment is None or target.segment in tags
    ]
    if not chosen:
        return night
    names = [channel.name for channel in channels]
    night.verdicts = store.check_targets(run_id, chosen, record=True)
    for result in night.verdicts:
        emit({"step": "target", "config": config, "testset": test_set, "run": run_id,
              **result.to_dict()})  # fmt: skip
        if result.verdict in ("at_risk", "needs_judgments"):
            continue
        details = _details(config, test_set, run_id, result)
        night.events += store.observe(
            config,
            test_set,
            alert_key(result.target.metric, result.target.segment),
            None,
            None,
            regressed=result.verdict == "missed",
            confirm=result.target.confirmation,
            details=details,
            kind="target",
            channels=names,
        )
    for target in chosen:
        if target.max_slide is None:
            continue
        trend = store.target_drift(config, test_set, target)
        night.drifts.append(trend)
        emit({"step": "drift", "config": config, "testset": test_set, **trend.to_dict()})
        night.events += store.observe(
            config,
            test_set,
            alert_key(target.metric, target.segment),
            None,
            None,
            regressed=trend.drifting,
            details=_drift_details(config, test_set, run_id, trend),
            kind="drift",
            channels=names,
        )
    for event in night.events:
        emit({"step": "alert", "event": event.event, "kind": event.alert.kind,
              "alert": event.alert.id, "config": config, "testset": test_set,
              "metric": event.alert.metric})  # fmt: skip
    return night


def verdict_text(result: TargetVerdict) -> str:
    """``nDCG@10>=0.85: 0.6200 [0.5900, 0.6500] missed`` (``Latency(p=95)<=200: 182.4 ms
    [...]``: each figure in its kind's format, ``evalplat.metrics.numbers``)."""
    from evalplat.metrics.numbers import value_text

    metric = result.target.metric
    return (
        f"{result.target.label}: {value_text(result.value, metric)} "
        f"[{value_text(result.ci_low, metric)}, {value_text(result.ci_high, metric)}] "
        f"{result.verdict}"
    )


def _details(config: str, test_set: str, run_id: int, result: TargetVerdict) -> dict[str, Any]:
    return {
        "config": config,
        "test_set": test_set,
        "metric": alert_key(result.target.metric, result.target.segment),
        "candidate": result.value,
        "candidate_run": run_id,
        "target": verdict_text(result),
    }


def _drift_details(config: str, test_set: str, run_id: int, trend: Drift) -> dict[str, Any]:
    return {
        "config": config,
        "test_set": test_set,
        "metric": alert_key(trend.target.metric, trend.target.segment),
        "candidate_run": run_id,
        "delta": trend.change,
        "p_value": trend.p_value,
        "test": "Mann-Kendall",
        "target": (
            f"{trend.target.label}, max slide {trend.target.max_slide:g} over "
            f"{trend.target.window}: {trend.change:+.4f} over {counted(trend.runs, 'run')}"
        ),
    }
