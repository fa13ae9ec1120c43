"""A night's alerts: feed verdicts and run failures to the alert state machines (each event
written to the outbox with its state change), then deliver the outbox through the channels.

Three kinds of alert per config and test set, each opened once and resolved once:

- ``regression``, per gate: the comparison's verdict is ``regression``;
- ``needs_judgments``, per gate: the drop is explained only by unjudged documents;
- ``operational``: the night's run could not complete (backend down, run failed); resolved by
  the next night whose run completes. When the run failed on an engine other configs search,
  the alert is the engine's, one for all of them (``evalplat.nightly.outages``).

A gate on a segment keys its alerts ``METRIC [segment TAG]`` and judges the segment's row; a
segment too small to gate (``[segments] min_queries``) never opens one. A gate that does not
apply to the test set (``evalplat.nightly.scopes``), or was skipped because the baseline lacks
its metric, feeds nothing: its alerts stay as they are.

Delivery happens once, at the end of the night, for everything still in the outbox (this
night's events and any an earlier night could not deliver): one notice per channel. An event a
channel of the project file did not accept stays in the outbox and makes the night exit 3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalplat.comparison.options import ALERTING_VERDICTS

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.comparison.verdicts import ComparisonResult
    from evalplat.nightly.job import LogFunction, NightlyOutcome
    from evalplat.nightly.project import ConfigSpec, Project
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent
    from evalplat.testsets.content import TestSetContent


def observe(
    store: Store,
    project: Project,
    spec: ConfigSpec,
    test_set: str,
    result: ComparisonResult,
    content: TestSetContent,
    channels: list[Channel],
    emit: LogFunction,
) -> list[AlertEvent]:
    """Feed each gated verdict to its alert state machines; return the events written."""
    events: list[AlertEvent] = []
    baseline_run = result.baseline_run_id
    if baseline_run is None:  # a stored comparison always has one; nothing to key alerts on
        return events
    from evalplat.nightly.scopes import test_set_tags

    names = [channel.name for channel in channels]
    compared = {m.metric for m in result.metrics}
    for gate in project.gates_for(test_set, test_set_tags(content)):
        if gate.metric not in compared:  # skipped: the baseline lacks it (nightly.scopes)
            continue
        key = alert_key(gate.metric, gate.segment)
        metric: Any = result.metric(gate.metric)
        if gate.segment is not None:
            metric = next(
                (s for s in result.segments
                 if s.metric == gate.metric and s.segment == gate.segment), None,
            )  # fmt: skip
            if metric is None:
                continue
        message = _message_fields(spec.name, test_set, metric, result, content, gate.segment)
        message["metric"] = key
        for kind in ALERTING_VERDICTS:  # each verdict opens an alert of its own kind
            for event in store.observe(
                spec.name,
                test_set,
                key,
                baseline_run,
                result.id,
                regressed=metric.gated and metric.verdict == kind,
                confirm=gate.confirmation,
                details=message,
                kind=kind,
                channels=names,
            ):
                log_event(emit, event, spec.name, test_set, key)
                events.append(event)
    return events


def alert_key(metric: str, segment: str | None) -> str:
    """What an alert is keyed on: the metric, or ``METRIC [segment TAG]`` for a segment gate."""
    return metric if segment is None else f"{metric} [segment {segment}]"


def observe_run(
    store: Store,
    spec: ConfigSpec,
    test_set: str,
    run_id: int | None,
    error: str | None,
    channels: list[Channel],
    emit: LogFunction,
) -> list[AlertEvent]:
    """Open an operational alert when the run failed (``error``); resolve it when it did not."""
    details = {
        "config": spec.name,
        "test_set": test_set,
        "metric": "",
        "candidate_run": run_id,
        "error": error,
    }
    events = store.observe(
        spec.name,
        test_set,
        "",
        None,
        None,
        regressed=error is not None,
        details=details,
        kind="operational",
        channels=[channel.name for channel in channels],
    )
    for event in events:
        log_event(emit, event, spec.name, test_set, None)
    return events


def log_event(
    emit: LogFunction, event: AlertEvent, config: str, test_set: str, metric: str | None
) -> None:
    """The night's log line of an alert event; an engine's alert names its engine."""
    entry = {
        "step": "alert",
        "event": event.event,
        "kind": event.alert.kind,
        "alert": event.alert.id,
        "config": config,
        "testset": test_set,
    }
    if metric is not None:
        entry["metric"] = metric
    if event.alert.engine is not None:
        entry["engine"] = event.alert.engine
    emit(entry)


def _message_fields(
    config: str,
    test_set: str,
    metric: Any,
    result: ComparisonResult,
    content: TestSetContent,
    segment: str | None = None,
) -> dict[str, Any]:
    """What an alert says; with ``segment``, its worst queries are the segment's."""
    texts = dict(zip(content.queries["query_id"], content.queries["text"], strict=True))
    movers = result.movers.get(metric.metric)
    worst = (
        []
        if movers is None
        else [
            {
                "query_id": m.query_id,
                "text": texts.get(m.query_id, ""),
                "baseline": m.baseline,
                "candidate": m.candidate,
            }
            for m in movers.worse
            if segment is None or segment in result.query_tags.get(m.query_id, ())
        ][:5]
    )
    return {
        "config": config,
        "test_set": test_set,
        "metric": metric.metric,
        "baseline": metric.baseline,
        "candidate": metric.candidate,
        "delta": metric.delta,
        "relative_delta": metric.relative_delta,
        "p_value": metric.p_corrected,
        "test": metric.test,
        "baseline_run": result.baseline_run_id,
        "candidate_run": result.candidate_run_id,
        "worst_queries": worst,
        "comparison_id": result.id,
        "changes": [] if result.changes is None else result.changes.lines(),
        "model_grades": metric.model_note() if hasattr(metric, "model_note") else None,
        "facts": [fact.to_dict() for fact in result.facts],
    }


def deliver(
    store: Store,
    project: Project,
    channels: list[Channel],
    outcome: NightlyOutcome,
    emit: LogFunction,
) -> None:
    """Deliver every pending notice of the outbox; failures stay pending for the next try, and
    make the night exit 3 (an event a channel of the project did not accept is undelivered)."""
    from evalplat.nightly.delivery import ReportLinks, deliver_outbox, undelivered

    links = ReportLinks(project.reports_dir, project.reports_base_url)
    results = deliver_outbox(store, channels, links=links)
    for result in results:
        emit({"step": "deliver", **result.to_dict()})
        outcome.deliveries.append(result.to_dict())
    if undelivered(results):
        outcome.exit_code = 3
