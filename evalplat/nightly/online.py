"""A night's online step: score the imported events, compare the arms, feed the alerts.

With an ``[online]`` table (``evalplat.nightly.project.OnlineSpec``) a night:

1. scores the online measures of every version of the project's configs per UTC day, as
   ``evalplat events score`` does, from the last day it scored before (that day may have grown)
   onwards; older days keep their scores (``events score`` rescores them all);
2. takes the latest day on which the baseline arm has searches (any version of it, for an
   unpinned ``baseline = "NAME"``: a rollback does not send the comparison back to the
   rolled-back-to version's last day), and compares each other arm with searches that day
   against it (a two-sample bootstrap over sessions), gated by the
   ``[[gates]]`` on online measures;
3. feeds each gated verdict to the ``regression`` alert of (candidate config, test set
   ``online``, metric) by the day rule (``evalplat.nightly.day_rule``) over the days the nights
   judged (``Store.online_gate_days``): opened once when the regression holds over
   ``open_days`` of ``open_window`` judged days, resolved after ``resolve_days`` clear days. A
   side with fewer than ``min_sessions`` sessions is "insufficient data": it is logged, is not a
   judged day and leaves the alert as it is, neither opening nor resolving it. When several
   versions of one config are online that day, the key gets one verdict for all of them: a
   regression when any of them regressed (the alert shows the worst), so that they do not
   open and resolve the same alert in turn.

Interleaved experiments (``[[online.interleaving]]``) are scored and gated after step 1
(``evalplat.nightly.interleaved``); a gate on ``online:Preference`` is theirs, not the arms'.

Alerts are keyed without a baseline run, since each day has its own baseline run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from evalplat.nightly.day_rule import follow
from evalplat.nightly.interleaved import interleaved_night
from evalplat.store.online_arms import control_day, day_runs
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.comparison.results import ComparisonResult, MetricComparison
    from evalplat.nightly.job import LogFunction
    from evalplat.nightly.project import Project
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent
    from evalplat.store.runs import RunInfo


@dataclass
class OnlineNight:
    """What the online step did: runs scored, comparisons made, alert events written."""

    runs: list[RunInfo] = field(default_factory=list)
    comparisons: list[tuple[str, ComparisonResult]] = field(default_factory=list)  # by config
    events: list[AlertEvent] = field(default_factory=list)


def online_night(
    store: Store, project: Project, channels: list[Channel], emit: LogFunction
) -> OnlineNight:
    """Score, compare and alert for ``project``'s ``[online]`` table (module doc)."""
    from evalplat.comparison.results import CompareOptions

    night = OnlineNight()
    spec = project.online
    if spec is None:
        return night
    configs = [c.name for c in project.configs]
    since = _last_scored_day(store, configs)
    night.runs = store.score_online(
        configs,
        window="day",
        metrics=project.online_metrics(),
        since=since,
        warehouse=project.events,
    )
    emit({"step": "online_score", "runs": len(night.runs),
          "since": None if since is None else since.date().isoformat()})  # fmt: skip
    night.events += interleaved_night(store, project, channels, emit)
    baseline = control_day(store, spec.baseline)
    if baseline is None:
        emit({"step": "online", "baseline": spec.baseline, "compared": 0,
              "detail": "the baseline arm has no scored day yet"})  # fmt: skip
        return night
    options = CompareOptions(min_sessions=spec.min_sessions)
    gates = project.ab_gates()
    names = [channel.name for channel in channels]
    day = baseline.started_at.date().isoformat()
    compared: dict[str, list[tuple[RunInfo, ComparisonResult]]] = {}
    for candidate in _arms_of_day(store, configs, baseline):
        result = store.compare_runs(
            baseline.id, candidate.id, metrics=project.online_metrics(), gates=gates,
            options=options, gating=True,
        )  # fmt: skip
        night.comparisons.append((candidate.config, result))
        compared.setdefault(candidate.config, []).append((candidate, result))
        emit({"step": "online_compare", "baseline": _ref(baseline), "candidate": _ref(candidate),
              "day": day, "comparison": result.id, "verdict": result.verdict,
              "deltas": {m.metric: round(m.delta, 4) for m in result.metrics},
              "verdicts": {m.metric: _verdict(m) for m in result.metrics if m.metric in
                           {g.metric for g in gates}}})  # fmt: skip
    # One verdict per (config, metric) alert key: the config's arms of the day together, so two
    # versions of one config online at once neither open and resolve one alert in turn.
    for config, arms in compared.items():
        for gate in gates:
            judged = [
                (run, result, result.metric(gate.metric))
                for run, result in arms
                if result.metric(gate.metric).test != "insufficient"
            ]
            if not judged:
                continue  # too few sessions: shown, never gated, the alert left as it is
            regressed = [arm for arm in judged if arm[2].gated and arm[2].verdict == "regression"]
            # the alert shows the worst regressed arm, or the first arm when none regressed
            run, result, metric = min(regressed, key=_harm) if regressed else judged[0]
            days = [bad for _, bad in store.online_gate_days(config, gate.metric)]
            for event in follow(
                store,
                gate.confirmation,
                config,
                gate.metric,
                days,
                _details(run, baseline, metric, result, [arm[0] for arm in judged]),
                names,
                result.id,
            ):
                emit({"step": "alert", "event": event.event, "kind": event.alert.kind,
                      "alert": event.alert.id, "config": config,
                      "testset": ONLINE_TEST_SET, "metric": gate.metric})  # fmt: skip
                night.events.append(event)
    return night


def _harm(arm: tuple[RunInfo, ComparisonResult, MetricComparison]) -> float:
    """How far an arm moved the wrong way: lower is worse (the delta in the good direction)."""
    metric = arm[2]
    return metric.delta if metric.higher_is_better else -metric.delta


def _last_scored_day(store: Store, configs: list[str]) -> datetime | None:
    """Start of the latest day already scored for these configs (rescored: it may have grown)."""
    starts = [run.started_at for name in configs for run in day_runs(store, name)]
    return max(starts, default=None)


def _arms_of_day(store: Store, configs: list[str], baseline: RunInfo) -> list[RunInfo]:
    """The other arms' online runs of the baseline's day, by config and version."""
    arms = [
        run
        for name in configs
        for run in day_runs(store, name)
        if run.started_at == baseline.started_at and run.id != baseline.id
    ]
    return sorted(arms, key=lambda r: (r.config, r.config_version))


def _ref(run: RunInfo) -> str:
    return f"{run.config}@{run.config_version}"


def _verdict(metric: MetricComparison) -> str:
    return "insufficient data" if metric.test == "insufficient" else metric.verdict


def _details(
    candidate: RunInfo,
    baseline: RunInfo,
    metric: MetricComparison,
    result: ComparisonResult,
    arms: list[RunInfo],
) -> dict[str, Any]:
    """What the alert says: the arms, the day, the figures and the test over sessions."""
    return {
        "config": candidate.config,
        "test_set": ONLINE_TEST_SET,
        "metric": metric.metric,
        "baseline": metric.baseline,
        "candidate": metric.candidate,
        "delta": metric.delta,
        "relative_delta": metric.relative_delta,
        "p_value": metric.p_corrected,
        "test": metric.test,
        "baseline_run": baseline.id,
        "candidate_run": candidate.id,
        "comparison_id": result.id,
        "changes": [
            *(
                f"A/B on {baseline.started_at.date().isoformat()}: {_ref(arm)} against "
                f"{_ref(baseline)}"
                for arm in [candidate, *(other for other in arms if other.id != candidate.id)]
            ),
            f"A/B arms: {result.size_text()}",
        ],
    }
