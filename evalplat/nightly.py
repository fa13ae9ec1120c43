"""The nightly job: import, register, run, compare, alert, report, prune — from a project file.

One call of ``nightly`` is one night. Each step reports itself through ``log`` as a dict with a
``step`` key (the CLI prints one line per step, or JSON lines). The exit code is the contract:

- 0: every run completed and no gated metric has an open regression alert;
- 1: a regression was confirmed (an alert is open for a config of this project);
- 3: a run could not complete (the others still ran, compared and alerted).

Input errors (a bad project file, a malformed test set file, an unknown searcher parameter or alert
channel) are found before anything is written. Two identical runs can never alert: their
comparison has no difference to test, so no metric can pass both the threshold and the test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import EvalplatError, OperationalError, SchemaOutdatedError
from evalplat.project import ConfigSpec, Project

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.comparison import ComparisonResult
    from evalplat.store import Store
    from evalplat.store.runs import RunInfo
    from evalplat.testsets import TestSetContent

LogFunction = Callable[[dict[str, Any]], None]
LOCK_NAME = "nightly"
# Judged@k is scored on every nightly run: the comparator's coverage guard needs it.
COVERAGE_METRIC = "Judged@10"


@dataclass
class NightlyOutcome:
    exit_code: int = 0
    runs: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    report: Path | None = None


def run_nightly(
    project: Project,
    *,
    db_url: str | None = None,
    dry_run: bool = False,
    log: LogFunction | None = None,
    lock_wait: float = 10.0,
) -> NightlyOutcome:
    """Run one night of ``project`` (see the module docstring for the exit codes)."""
    emit = log or (lambda _entry: None)
    url = _database_url(project, db_url)
    emit({"step": "start", "project": str(project.path), "dry_run": dry_run})
    contents = _load_test_sets(project, emit)
    channels = _check_inputs(project)
    if dry_run:
        return _dry_run(project, url, contents, emit)
    store = _open_store(url, emit)
    try:
        with store.lock(LOCK_NAME, wait=lock_wait):
            return _night(store, project, contents, channels, emit)
    finally:
        store.close()


def _database_url(project: Project, db_url: str | None) -> str:
    from evalplat.db.engine import resolve_url

    return resolve_url(db_url, project.path)


def _load_test_sets(project: Project, emit: LogFunction) -> dict[str, TestSetContent]:
    """Read and validate every test set file before anything is written."""
    from evalplat.testsets import load_testset

    contents = {}
    for spec in project.testsets:
        contents[spec.name] = load_testset(
            spec.qrels, queries=spec.queries, docs=spec.docs, format=spec.format
        )
        emit({"step": "read", "testset": spec.name, "queries": len(contents[spec.name].queries)})
    return contents


def _check_inputs(project: Project) -> list[Channel]:
    """Searcher params and alert channels are validated up front, like the files."""
    from evalplat.alerts.registry import channels_from_tables
    from evalplat.searchers import get_kind

    for spec in project.configs:
        get_kind(spec.searcher).validate(spec.params)
    return channels_from_tables(project.alerts)


def _open_store(url: str, emit: LogFunction) -> Store:
    """Open the database; a missing or empty one is created, an outdated one is refused."""
    from evalplat.store import Store

    try:
        return Store.open(url)
    except SchemaOutdatedError as error:
        if "run `evalplat init`" not in str(error):
            raise
    store = Store.init(url)
    emit({"step": "database", "created": True, "database": store.description})
    return store


def _dry_run(
    project: Project, url: str, contents: dict[str, TestSetContent], emit: LogFunction
) -> NightlyOutcome:
    """Say what a real night would do, writing nothing."""
    from evalplat.configs import content_hash
    from evalplat.store import Store

    store = None
    try:
        store = Store.open(url)
    except SchemaOutdatedError as error:
        emit({"step": "database", "would_create": True, "detail": str(error)})
    try:
        for name, content in contents.items():
            known = _known_hashes(None if store is None else store.test_set_versions, name)
            emit(
                {
                    "step": "testset",
                    "testset": name,
                    "dry_run": True,
                    "new_version": content.content_hash() not in known,
                }
            )
        for spec in project.configs:
            known = _known_hashes(None if store is None else store.config_versions, spec.name)
            digest = content_hash(spec.searcher, _stored_params(spec), spec.label)
            emit(
                {
                    "step": "config",
                    "config": spec.name,
                    "dry_run": True,
                    "new_version": digest not in known,
                }
            )
            for test_set in spec.testsets:
                emit({"step": "run", "config": spec.name, "testset": test_set, "dry_run": True})
    finally:
        if store is not None:
            store.close()
    return NightlyOutcome(exit_code=0)


def _known_hashes(versions: Callable[[str], Sequence[Any]] | None, name: str) -> set[str]:
    """Content hashes of the stored versions of ``name`` (none without a database or name)."""
    if versions is None:
        return set()
    try:
        return {v.content_hash for v in versions(name)}
    except EvalplatError:
        return set()


def _stored_params(spec: ConfigSpec) -> dict[str, Any]:
    from evalplat.searchers import get_kind

    validated = get_kind(spec.searcher).validate(spec.params)
    return {key: validated[key] for key in spec.params}


def _night(
    store: Store,
    project: Project,
    contents: dict[str, TestSetContent],
    channels: list[Channel],
    emit: LogFunction,
) -> NightlyOutcome:
    outcome = NightlyOutcome()
    versions: dict[str, int] = {}
    for spec in project.testsets:
        imported = store.import_test_set(
            spec.name,
            contents[spec.name],
            source={
                "qrels": spec.qrels.name,
                "queries": None if spec.queries is None else spec.queries.name,
                "docs": None if spec.docs is None else spec.docs.name,
            },
        )
        versions[spec.name] = imported.version.version
        emit(
            {
                "step": "testset",
                "testset": spec.name,
                "version": imported.version.version,
                "created": imported.created,
            }
        )
    config_versions: dict[str, int] = {}
    for config_spec in project.configs:
        added = store.add_config(
            config_spec.name, config_spec.searcher, config_spec.params, label=config_spec.label
        )
        config_versions[config_spec.name] = added.version.version
        emit(
            {
                "step": "config",
                "config": config_spec.name,
                "version": added.version.version,
                "created": added.created,
            }
        )
    pending_alerts: list[tuple[Any, dict[str, Any]]] = []
    for config_spec in project.configs:
        for test_set in config_spec.testsets:
            run = _run(
                store,
                project,
                config_spec,
                config_versions[config_spec.name],
                test_set,
                versions[test_set],
                emit,
            )
            if run is None or run.status != "complete":
                outcome.exit_code = 3
                if run is not None:
                    outcome.runs.append(run.to_dict())
                continue
            outcome.runs.append(run.to_dict())
            result = _compare(store, project, config_spec, test_set, run, emit)
            if result is None:
                continue
            outcome.comparisons.append(_comparison_summary(config_spec.name, test_set, result))
            pending_alerts += _observe(
                store, project, config_spec, test_set, result, contents[test_set], emit
            )
    outcome.report = _write_reports(store, project, emit)
    _deliver(store, channels, pending_alerts, outcome, emit)
    if project.keep_results_days is not None:
        pruned = store.prune_results(project.keep_results_days)
        emit(
            {
                "step": "retention",
                "pruned_runs": len(pruned),
                "keep_results_days": project.keep_results_days,
            }
        )
    open_now = [
        a
        for a in store.list_alerts()
        if a.state in ("open", "acknowledged") and a.config in {c.name for c in project.configs}
    ]
    if outcome.exit_code == 0 and open_now:
        outcome.exit_code = 1
    emit(
        {
            "step": "done",
            "exit_code": outcome.exit_code,
            "runs": len(outcome.runs),
            "open_alerts": len(open_now),
        }
    )
    return outcome


def _run(
    store: Store,
    project: Project,
    spec: ConfigSpec,
    config_version: int,
    test_set: str,
    test_set_version: int,
    emit: LogFunction,
) -> RunInfo | None:
    from evalplat import runner

    metrics = list(
        dict.fromkeys([*project.metrics, *(g.metric for g in project.gates), COVERAGE_METRIC])
    )
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
        return None
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
    return info


def _compare(
    store: Store,
    project: Project,
    spec: ConfigSpec,
    test_set: str,
    run: RunInfo,
    emit: LogFunction,
) -> ComparisonResult | None:
    """Compare with the baseline (gated); also log the change since the previous night."""
    baseline = store.baseline(spec.compare_to or spec.name, test_set)
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
    metrics = list(dict.fromkeys([*project.metrics, *(g.metric for g in project.gates)]))
    result = store.compare_runs(baseline.run_id, run.id, metrics=metrics, gates=list(project.gates))
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
    previous = _previous_night(store, spec.name, test_set, run.id)
    if previous is not None and previous != baseline.run_id:
        since = store.compare_runs(previous, run.id, metrics=metrics)
        emit(
            {
                "step": "since_previous",
                "config": spec.name,
                "testset": test_set,
                "previous_run": previous,
                "comparison": since.id,
                "deltas": {m.metric: round(m.delta, 4) for m in since.metrics},
            }
        )
    return result


def _previous_night(store: Store, config: str, test_set: str, run_id: int) -> int | None:
    for info in store.list_runs(config):
        if info.id < run_id and info.test_set == test_set and info.status == "complete":
            return info.id
    return None


def _comparison_summary(config: str, test_set: str, result: ComparisonResult) -> dict[str, Any]:
    return {
        "config": config,
        "testset": test_set,
        "id": result.id,
        "verdict": result.verdict,
        "metrics": [m.to_dict() for m in result.metrics],
    }


def _observe(
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
    }


def _write_reports(store: Store, project: Project, emit: LogFunction) -> Path | None:
    try:
        from evalplat.reports import render_site
    except ImportError:
        return None
    index = render_site(store, project.reports_dir)
    emit({"step": "report", "path": str(index)})
    return Path(index)


def _comparison_id(fields: dict[str, Any]) -> int | None:
    value = fields.get("comparison_id")
    return value if isinstance(value, int) else None


def _report_link(index: Path | None, comparison_id: int | None) -> str | None:
    """The comparison's page when the site has one, else the site's index."""
    if index is None:
        return None
    page = index.parent / "compare" / f"compare-{comparison_id}.html"
    return str(page if comparison_id is not None and page.exists() else index)


def _deliver(
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
