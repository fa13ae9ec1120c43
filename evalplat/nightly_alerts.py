"""A night's alerts: feed gated verdicts to the alert state machine, build each message's
fields (worst queries with their texts, report link), and deliver them through the channels.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.comparison import ComparisonResult
    from evalplat.nightly import LogFunction, NightlyOutcome
    from evalplat.project import ConfigSpec, Project
    from evalplat.store import Store
    from evalplat.testsets import TestSetContent


def observe(
    store: Store,
    project: Project,
    spec: ConfigSpec,
    test_set: str,
    result: ComparisonResult,
    content: TestSetContent,
    emit: LogFunction,
) -> list[tuple[Any, dict[str, Any]]]:
    """Feed each gated verdict to the alert state machine; collect events to announce."""
    events: list[tuple[Any, dict[str, Any]]] = []
    baseline_run = result.baseline_run_id
    if baseline_run is None:  # a stored comparison always has one; nothing to key alerts on
        return events
    for gate in project.gates:
        metric = result.metric(gate.metric)
        message = _message_fields(spec.name, test_set, metric, result, content)
        for event in store.observe(
            spec.name,
            test_set,
            gate.metric,
            result.baseline_run_id or 0,
            result.id,
            regressed=metric.verdict == "regression",
            consecutive=gate.consecutive,
            details=message,
        ):
            emit(
                {
                    "step": "alert",
                    "event": event.event,
                    "alert": event.alert.id,
                    "config": spec.name,
                    "testset": test_set,
                    "metric": gate.metric,
                }
            )
            events.append((event, message))
    return events


def _message_fields(
    config: str, test_set: str, metric: Any, result: ComparisonResult, content: TestSetContent
) -> dict[str, Any]:
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
            for m in movers.worse[:5]
        ]
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
    }


def _comparison_id(fields: dict[str, Any]) -> int | None:
    value = fields.get("comparison_id")
    return value if isinstance(value, int) else None


def _report_link(index: Path | None, comparison_id: int | None) -> str | None:
    """The comparison's page when the site has one, else the site's index."""
    if index is None:
        return None
    page = index.parent / "compare" / f"compare-{comparison_id}.html"
    return str(page if comparison_id is not None and page.exists() else index)


def deliver(
    store: Store,
    channels: list[Channel],
    pending: list[tuple[Any, dict[str, Any]]],
    outcome: NightlyOutcome,
    emit: LogFunction,
) -> None:
    from evalplat.alerts.delivery import deliver_all
    from evalplat.alerts.message import AlertMessage

    for event, fields in pending:
        data = {
            **fields,
            "event": event.event,
            "alert_id": event.alert.id,
            "report": _report_link(outcome.report, _comparison_id(fields)),
        }
        data.pop("comparison_id", None)
        message = AlertMessage.from_dict(data)
        results = deliver_all(channels, message)
        for delivery in results:
            store.record_delivery(event.alert.id, delivery)
            emit(
                {
                    "step": "deliver",
                    "alert": event.alert.id,
                    "event": event.event,
                    "channel": delivery.channel,
                    "status": delivery.status,
                    "attempts": delivery.attempts,
                    "error": delivery.error,
                }
            )
        outcome.alerts.append(
            {
                "id": event.alert.id,
                "event": event.event,
                "metric": fields["metric"],
                "config": fields["config"],
                "delivered": sum(r.ok for r in results),
            }
        )
