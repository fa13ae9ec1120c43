"""``gates backtest``: a project file's gates replayed over the nights the store holds.

For each config of the project and each test set it runs on, every comparison a night gated
the config with (``evalplat.store.gated_nights``) is made again with the project's gates, by
the very comparison a night makes (``Store.compare_runs`` with ``record=False``: nothing is
written, nothing searched), and each gate's verdicts go through the alert rule
(``evalplat.comparison.backtest``). So a proposed project file shows, before it is the one the
nights read, which alerts its gates would have opened on the history, how many lasted, and how
often they called an unchanged config version a regression.

``suggest`` replays once more with each threshold taken away to learn every A/A night's change,
proposes the smallest threshold that keeps the false alarms under the target, and replays with
it, so the figures it prints are a replay's, not a forecast's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalplat.comparison.backtest import (
    FalseAlarms,
    Night,
    ReplayedAlert,
    false_alarms,
    replay,
    suggested_threshold,
)
from evalplat.comparison.options import Gate
from evalplat.errors import EvalplatError
from evalplat.nightly.notify import alert_key
from evalplat.store.gated_nights import GatedNight, gated_nights

if TYPE_CHECKING:
    from evalplat.comparison.results import ComparisonResult
    from evalplat.nightly.project import Project
    from evalplat.store import Store


@dataclass(frozen=True)
class GateReplay:
    """One gate of one config on one test set, replayed."""

    config: str
    test_set: str
    gate: str  # the alert key: ``METRIC`` or ``METRIC [segment TAG]``
    threshold: dict[str, float | None]  # max_drop, max_relative_drop as replayed
    nights: int  # nights replayed (those the comparison could be made for)
    regressed: int  # of them, the gate said regression
    alerts: tuple[ReplayedAlert, ...]
    persisted: int  # alerts open more than one night
    false_alarms: FalseAlarms
    skipped: tuple[str, ...] = ()  # nights the comparison could not be made for, and why

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["alerts"] = [alert.to_dict() for alert in self.alerts]
        data["false_alarms"] = self.false_alarms.to_dict()
        return data


@dataclass(frozen=True)
class Suggestion:
    """The smallest threshold a gate keeps its A/A false alarms under ``target`` with, and the
    replays as stated and under it. Without A/A nights there is no evidence to move a
    threshold by, and it stays as stated."""

    key: str  # the gate key the threshold is for: max_drop or max_relative_drop
    value: float
    before: GateReplay
    after: GateReplay

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
        }


def backtest(store: Store, project: Project, configs: Sequence[str] = ()) -> list[GateReplay]:
    """Every gate of the project replayed for each of its (config, test set) pairs."""
    return [
        _replayed(pair, gate, nights, skipped)
        for pair, gates, outcomes, skipped in _replays(store, project, configs)
        for gate, nights in zip(gates, outcomes, strict=True)
    ]


def suggest(
    store: Store, project: Project, target: float, configs: Sequence[str] = ()
) -> list[Suggestion]:
    """For each gate and pair: the smallest threshold under which at most ``target`` of its A/A
    nights regress (lower than the stated one when the nights allow it), and the replays
    before and under it (three replays in all: without the thresholds, as stated, and with the
    suggested ones)."""
    before = {(r.config, r.test_set, r.gate): r for r in backtest(store, project, configs)}
    found: list[Suggestion] = []
    for pair, _bared, outcomes, _skipped in _replays(store, project, configs, _bare):
        tuned: dict[Gate, Gate] = {}
        for gate, nights in zip(project.gates_for(pair[1]), outcomes, strict=True):
            key = _tuned_key(gate)
            value = suggested_threshold(nights, target)
            if not any(night.unchanged for night in nights):
                value = getattr(gate, key) or 0.0  # no A/A night: nothing to move it by
            tuned[gate] = _with_threshold(gate, key, value)
        for after in _replays(store, project, [pair[0]], tuned.get, pair[1]):
            for original, gate, nights in zip(tuned, after[1], after[2], strict=True):
                key = _tuned_key(original)
                old = before[(*pair, alert_key(gate.metric, gate.segment))]
                new = _replayed(pair, gate, nights, after[3])
                found.append(Suggestion(key, getattr(gate, key), old, new))
    return found


def _with_threshold(gate: Gate, key: str, value: float) -> Gate:
    if key == "max_drop":
        return dataclasses.replace(gate, max_drop=value)
    return dataclasses.replace(gate, max_relative_drop=value)


def _bare(gate: Gate) -> Gate:
    """The gate with the threshold ``suggest`` moves taken away."""
    if _tuned_key(gate) == "max_drop":
        return dataclasses.replace(gate, max_drop=None, max_relative_drop=None)
    return dataclasses.replace(gate, max_relative_drop=0.0)


def _tuned_key(gate: Gate) -> str:
    """The threshold ``suggest`` moves: the relative one where the gate sets it (and for a
    timing measure, whose threshold is a slowdown), else ``max_drop``."""
    from evalplat.metrics.names import parse

    if gate.max_relative_drop is not None or parse(gate.metric).spec.paired_timings:
        return "max_relative_drop"
    return "max_drop"


def _replayed(
    pair: tuple[str, str], gate: Gate, nights: Sequence[Night], skipped: Sequence[str]
) -> GateReplay:
    alerts = replay(nights, gate.confirmation)
    return GateReplay(
        config=pair[0],
        test_set=pair[1],
        gate=alert_key(gate.metric, gate.segment),
        threshold={"max_drop": gate.max_drop, "max_relative_drop": gate.max_relative_drop},
        nights=len(nights),
        regressed=sum(night.regressed for night in nights),
        alerts=tuple(alerts),
        persisted=sum(alert.nights > 1 for alert in alerts),
        false_alarms=false_alarms(nights),
        skipped=tuple(skipped),
    )


def _as_stated(gate: Gate) -> Gate | None:
    return gate


def _replays(
    store: Store,
    project: Project,
    configs: Sequence[str],
    gate_as: Callable[[Gate], Gate | None] = _as_stated,
    only_test_set: str | None = None,
) -> list[tuple[tuple[str, str], list[Gate], list[list[Night]], list[str]]]:
    """Per (config, test set) of the project: the gates in force (each as ``gate_as`` makes it;
    None leaves it out), each one's nights, and the nights skipped with why."""
    from evalplat.comparison.results import CompareOptions

    options = CompareOptions(min_segment_queries=project.min_segment_queries)
    replays = []
    for spec in project.configs:
        if configs and spec.name not in configs:
            continue
        for test_set in spec.testsets:
            if only_test_set is not None and test_set != only_test_set:
                continue
            gates = [g for g in map(gate_as, project.gates_for(test_set)) if g is not None]
            if not gates:
                continue
            outcomes: list[list[Night]] = [[] for _ in gates]
            skipped: list[str] = []
            metrics = project.metrics_for(test_set)
            for night in _latest_per_run(gated_nights(store, spec.name, test_set)):
                try:
                    result = store.compare_runs(
                        night.baseline_run_id, night.candidate_run_id, metrics=metrics,
                        gates=gates, options=options, record=False,
                    )  # fmt: skip
                except EvalplatError as error:
                    skipped.append(f"run {night.candidate_run_id}: {error}")
                    continue
                for gate, nights in zip(gates, outcomes, strict=True):
                    found = _night(result, gate, night)
                    if found is not None:
                        nights.append(found)
            replays.append(((spec.name, test_set), gates, outcomes, skipped))
    return replays


def _latest_per_run(nights: list[GatedNight]) -> list[GatedNight]:
    """One night per candidate run (its latest gating comparison), in the order they ran."""
    latest: dict[int, GatedNight] = {}
    for night in nights:
        latest[night.candidate_run_id] = night
    return sorted(latest.values(), key=lambda night: night.candidate_run_id)


def _night(result: ComparisonResult, gate: Gate, night: GatedNight) -> Night | None:
    """The gate's verdict on the night, as the night's alerts read it (``nightly.notify``)."""
    try:
        row: Any = result.metric(gate.metric)
    except KeyError:
        return None
    size = _size(row, gate)
    if gate.segment is not None:
        row = next(
            (s for s in result.segments if s.metric == gate.metric and s.segment == gate.segment),
            None,
        )
        if row is None:
            return None
        size = _size(row, gate)
    return Night(
        at=night.at,
        run_id=night.candidate_run_id,
        verdict=row.verdict if row.gated else None,
        unchanged=night.unchanged,
        size=size,
    )


def _size(row: Any, gate: Gate) -> float | None:
    """The change the tuned threshold is held against (``evalplat.comparison.backtest``)."""
    ratio = getattr(row, "timing_ratio", None)
    if ratio is not None:
        return abs(float(ratio) - 1.0)
    if _tuned_key(gate) == "max_relative_drop":
        return None if not row.baseline else abs(float(row.delta)) / abs(float(row.baseline))
    return abs(float(row.delta))
