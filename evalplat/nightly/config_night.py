"""One config on one test set for one night: run it, compare it with what it is gated against
(the baseline, with the previous night logged), and feed the alert state machines.

The nightly job (``evalplat.nightly.job``) makes one ``ConfigNight`` per config and test set;
``start`` runs it, ``finish`` compares it (after the night's judge, if any, has graded every
config's new documents); a failure of one is isolated from the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalplat.errors import EvalplatError, OperationalError
from evalplat.metrics.numbers import counted
from evalplat.nightly.notify import alert_key, observe, observe_run
from evalplat.nightly.pairing import add_missing_metrics, previous_night, score_on_run_version
from evalplat.nightly.project import ConfigSpec, Project
from evalplat.nightly.scopes import test_set_tags
from evalplat.nightly.targets import observe_targets, target_metrics

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from evalplat.alerts.base import Channel
    from evalplat.comparison.verdicts import ComparisonResult
    from evalplat.nightly.job import LogFunction, NightlyOutcome
    from evalplat.nightly.outages import Outages
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent
    from evalplat.store.runs import RunInfo
    from evalplat.testsets.content import TestSetContent

# Judged@k is scored on every nightly run: the comparator's coverage guard needs it.
COVERAGE_METRIC = "Judged@10"


class ConfigNight:
    """One config on one test set for one night: run, compare, feed the alert machines."""

    def __init__(
        self,
        store: Store,
        project: Project,
        spec: ConfigSpec,
        test_set: str,
        channels: list[Channel],
        emit: LogFunction,
        outages: Outages | None = None,
    ):
        self.store, self.project, self.spec, self.test_set = store, project, spec, test_set
        self.channels, self.emit = channels, emit
        # the night's engines: a run that fails on a shared engine is held there (None: every
        # failure feeds the config's own alert at once)
        self.outages = outages
        self.done: RunInfo | None = None  # the completed run, once ``start`` made one

    def start(self, config_version: int, test_set_version: int, outcome: NightlyOutcome) -> bool:
        """Run the config; True when the run completed (``self.done`` is then the run)."""
        store, spec, test_set, emit = self.store, self.spec, self.test_set, self.emit
        run, error = _run(
            store, self.project, spec, config_version, test_set, test_set_version, emit
        )
        if run is not None:
            outcome.runs.append(run.to_dict())
        if run is None or run.status != "complete":
            if run is not None:
                error = run.error or (
                    f"run {run.id} is {run.status}: {run.queries_failed} of "
                    f"{counted(run.queries_total, 'query')} failed"
                )
            run_id, error = None if run is None else run.id, error or "the run failed"
            # a run that never started, or that no query answered, failed on its engine: held
            # for the engine's alert, decided once every config has run (``nightly.outages``)
            on_engine = run is None or run.status == "failed"
            if (
                on_engine
                and self.outages is not None
                and self.outages.hold(spec, test_set, run_id, error)
            ):
                self.log_failure(error)
            else:
                self.failed(run_id, error, outcome)
            return False
        self.done = run
        if self.outages is not None:
            self.outages.completed(spec.name, test_set)
        self.time_with_baseline(run)
        events = observe_run(store, spec, test_set, run.id, None, self.channels, emit)
        outcome.alerts += [event_summary(event) for event in events]
        return True

    def time_with_baseline(self, run: RunInfo) -> None:
        """When a latency gate applies, time the baseline's config version beside the run's,
        query by query, now, under the night's load (``evalplat.running.paired_timing``): the
        comparison gates latency on those timings. A baseline that cannot be searched (an
        imported run, a config gone) leaves latency not gated, and the night goes on."""
        from evalplat.running.paired_timing import gates_timings, time_pairs

        if not gates_timings(self.project.gates_for(self.test_set)):
            return
        baseline = self.store.baseline(self.spec.compare_to or self.spec.name, self.test_set)
        if baseline is None or baseline.run_id == run.id:
            return
        entry = {"step": "paired_timing", "config": self.spec.name, "testset": self.test_set,
                 "run": run.id, "baseline_run": baseline.run_id}  # fmt: skip
        try:
            timings = time_pairs(self.store, baseline.run_id, run.id)
        except EvalplatError as error:
            self.emit({**entry, "skipped": str(error)})
            return
        self.emit({**entry, "pairs": len(timings.query_ids)})

    def compared_runs(self) -> list[int]:
        """The completed run and the baseline it will be compared with (none when it is or
        becomes the baseline): the runs whose documents the night's judge grades."""
        run = self.done
        baseline = self.store.baseline(self.spec.compare_to or self.spec.name, self.test_set)
        if run is None or baseline is None or baseline.run_id == run.id:
            return []
        return [run.id, baseline.run_id]

    def finish(
        self, version: int, contents: dict[str, TestSetContent], outcome: NightlyOutcome
    ) -> None:
        """Compare the completed run on test set ``version`` (the night's final judgments,
        scored from its stored results when it ran on an earlier one) and feed the alerts."""
        tags = test_set_tags(contents[self.test_set])
        result = compare_night(
            self.store, self.project, self.spec, self.test_set, self.completed(), tags, version,
            self.emit,
        )  # fmt: skip
        self.observe(result, contents, outcome)

    def completed(self) -> RunInfo:
        """The completed run ``start`` made."""
        if self.done is None:
            raise ValueError("finish() before a completed start()")
        return self.done

    def observe(
        self,
        result: ComparisonResult | None,
        contents: dict[str, TestSetContent],
        outcome: NightlyOutcome,
    ) -> None:
        """Feed the alert machines the night's comparison (``compare_night``'s, None when
        there was nothing to compare with) and the targets."""
        store, spec, test_set, emit = self.store, self.spec, self.test_set, self.emit
        run = self.completed()
        events: list[AlertEvent] = []
        tags = test_set_tags(contents[test_set])
        if result is not None:
            outcome.comparisons.append(comparison_summary(spec.name, test_set, result))
            events += observe(
                store, self.project, spec, test_set, result, contents[test_set], self.channels,
                emit,
            )  # fmt: skip
        targets = observe_targets(
            store, self.project.targets, spec.name, test_set, run.id, self.channels, emit, tags
        )
        outcome.targets += [
            {"config": spec.name, "testset": test_set, "run": run.id, **v.to_dict()}
            for v in targets.verdicts
        ]
        events += targets.events
        outcome.alerts += [event_summary(event) for event in events]

    def failed(self, run_id: int | None, error: str, outcome: NightlyOutcome) -> None:
        """Log the failure and open (or keep open) the operational alert."""
        self.log_failure(error)
        try:
            events = observe_run(
                self.store, self.spec, self.test_set, run_id, error, self.channels, self.emit
            )
            outcome.alerts += [event_summary(event) for event in events]
        except EvalplatError as problem:  # e.g. the database went away: nothing to alert with
            self.emit({"step": "alert", "error": str(problem)})

    def log_failure(self, error: str) -> None:
        self.emit(
            {"step": "failed", "config": self.spec.name, "testset": self.test_set, "error": error}
        )


def isolated(
    night: ConfigNight, outcome: NightlyOutcome, step: Callable[..., Any], *args: Any
) -> bool:
    """One step of a config's night; an error fails that config only (the others still run,
    compare and alert). False when the step failed or its run did not complete."""
    try:
        return step(*args) is not False
    except EvalplatError as error:
        step_failed(night, step_error(error), outcome)
        return False


def step_error(error: EvalplatError) -> str:
    """How a failed step of a config's night names its error."""
    return f"{type(error).__name__}: {error}"


def step_failed(night: ConfigNight, error: str, outcome: NightlyOutcome) -> None:
    """A step of ``night`` failed with ``error`` (``step_error``'s): that config fails, the
    night exits 3."""
    night.failed(None, error, outcome)
    outcome.exit_code = 3


def _run(
    store: Store,
    project: Project,
    spec: ConfigSpec,
    config_version: int,
    test_set: str,
    test_set_version: int,
    emit: LogFunction,
) -> tuple[RunInfo | None, str | None]:
    """The night's run, or None and why when it could not even start."""
    from evalplat.running import runner

    metrics = project.metrics_for(test_set, (*target_metrics(project.targets), COVERAGE_METRIC))
    settings = runner.RunSettings(depth=spec.depth, concurrency=spec.concurrency)
    try:
        info = runner.run(
            store,
            f"{spec.name}@{config_version}",
            f"{test_set}@{test_set_version}",
            metrics=metrics,
            settings=settings,
            trigger="nightly",
        )
    except OperationalError as error:
        emit(
            {
                "step": "run",
                "config": spec.name,
                "testset": test_set,
                "status": "failed",
                "error": str(error),
            }
        )
        return None, str(error)
    entry = {
        "step": "run",
        "config": spec.name,
        "testset": test_set,
        "run": info.id,
        "status": info.status,
        "failed_queries": info.queries_failed,
    }
    entry.update({f"mean_{name}": round(value, 4) for name, value in info.means.items()})
    emit(entry)
    return info, None


def compare_night(
    store: Store,
    project: Project,
    spec: ConfigSpec,
    test_set: str,
    run: RunInfo,
    tags: Collection[str],
    version: int,
    emit: LogFunction,
) -> ComparisonResult | None:
    """The comparison part of a config's night: the completed ``run`` scored on test set
    ``version`` when it ran on an earlier one, then compared with the baseline (gated), both
    scored on that version; also log the change of each mean since the previous night (the
    deltas only, no stored comparison). Only the gates that apply to the test set (its query
    ``tags``) gate; a metric the baseline lacks is scored for it first, or, when its results
    were pruned, left out with its gates (``evalplat.nightly.scopes``). It reads and writes
    the store only, so it can run in another process (``evalplat.nightly.compare_beside``)."""
    from evalplat.running.rescoring import score_on

    if score_on(store, run.id, f"{test_set}@{version}"):
        emit({"step": "rescore", "run": run.id, "testset": f"{test_set}@{version}"})
    # the night stores the baseline it compares with (evalplat.store.baselines)
    baseline = store.adopt_baseline(spec.compare_to or spec.name, test_set)
    if baseline is None or baseline.run_id == run.id:
        emit(
            {
                "step": "baseline",
                "config": spec.name,
                "testset": test_set,
                "run": run.id,
                "adopted": baseline is not None,
            }
        )
        return None
    metrics = project.metrics_for(test_set)
    previous = previous_night(store, spec.name, test_set, run.id)
    ready = score_on_run_version(store, run, [baseline.run_id, previous], emit, version)
    from evalplat.comparison.results import CompareOptions

    options = CompareOptions(min_segment_queries=project.min_segment_queries)
    lacking = add_missing_metrics(store, run, baseline.run_id, version, emit)
    gates = []
    for gate in project.gates_for(test_set, tags):
        if gate.metric not in lacking:
            gates.append(gate)
            continue
        key = alert_key(gate.metric, gate.segment)
        emit({"step": "gate", "config": spec.name, "testset": test_set, "metric": key,
              "skipped": lacking[gate.metric]})  # fmt: skip
    metrics = [m for m in metrics if m not in lacking]
    result = store.compare_runs(
        baseline.run_id, run.id, metrics=metrics, gates=gates, options=options, gating=True
    )
    emit(
        {
            "step": "compare",
            "config": spec.name,
            "testset": test_set,
            "baseline_run": baseline.run_id,
            "candidate_run": run.id,
            "comparison": result.id,
            "verdict": result.verdict,
            "verdicts": {m.metric: m.verdict for m in result.metrics if m.gated},
        }
    )
    if previous is not None and previous != baseline.run_id and previous in ready:
        lacking = add_missing_metrics(store, run, previous, version, emit)
        since_metrics = [m for m in metrics if m not in lacking]
        # for the log only: the deltas, not a stored comparison (tests, bound, overlap)
        deltas = store.mean_deltas(previous, run.id, metrics=since_metrics)
        emit(
            {
                "step": "since_previous",
                "config": spec.name,
                "testset": test_set,
                "previous_run": previous,
                "deltas": {name: round(delta, 4) for name, delta in deltas.items()},
            }
        )
    return result


def event_summary(event: AlertEvent) -> dict[str, Any]:
    alert = event.alert
    summary = {
        "id": alert.id,
        "kind": alert.kind,
        "event": event.event,
        "config": alert.config,
        "testset": alert.test_set,
        "metric": alert.metric,
    }
    if alert.engine is not None:  # an engine's alert (``evalplat.nightly.outages``)
        summary["engine"] = alert.engine
    return summary


def comparison_summary(config: str, test_set: str, result: ComparisonResult) -> dict[str, Any]:
    return {
        "config": config,
        "testset": test_set,
        "id": result.id,
        "verdict": result.verdict,
        "metrics": [m.to_dict() for m in result.metrics],
    }
