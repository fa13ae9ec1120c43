"""The nightly job: import, register, run, compare, alert, report, prune — from a project file.

One call of ``nightly`` is one night; a project with an ``[online]`` table also scores the
imported interaction logs and compares its A/B arms (``evalplat.nightly.online``). Each step
reports itself through ``log`` as a dict with a ``step`` key (the CLI prints one line per step,
or JSON lines). The exit code is the contract:

- 0: every run completed, every alert event was delivered, and no regression alert that fails
  the job is open (an acknowledged one no longer counts: someone is on it);
- 1: a regression was confirmed (an unacknowledged regression alert is open for a config of
  this project that ``[nightly] fail_on`` names: by default a production config's, not an
  experiment's, a config with ``compare_to``), or, with ``fail_on_target``, a run missed a
  target (``evalplat.nightly.targets``);
- 3: a run could not complete (unless ``fail_on`` leaves out ``"outage"``: its operational
  alert is still opened), the night's judge failed (``evalplat.nightly.judging``), a
  due sweep failed (``evalplat.nightly.sweeps``), the reports could not be written, or an
  alert event is left undelivered in the outbox for a channel of the project file (3 beats 1).

A config that fails operationally (its backend is down, its run failed) is isolated: the failure
is logged, stored as an ``operational`` alert (opened once per outage, resolved by the first
night its run completes), and the other configs still run, compare and alert. The configs that
fail on one engine they share (an http endpoint, a database) share its one alert, decided once
every config has run (``evalplat.nightly.outages``). Every alert event
is written to the outbox with its state change and delivered at the end of the night, after the
reports, even when the reports could not be written (``evalplat.nightly.notify``). Before the
reports, the alerts whose subject has left the project file are retired
(``evalplat.nightly.retire``). A night records when it began (before its first run), with the
(config, test set) pairs its file runs (with an ``[online]`` table, each config's pair on test
set ``online`` too), and when its last alert event was stamped, before its
reports (``Store.begin_night``, ``Store.end_night``), so that the index can show the alert
events that were its own and the pairs that left the file.

Input errors (a bad project file, a malformed test set file, an unknown searcher parameter, a
misconfigured judge or alert channel) are found before anything is written. Two identical runs
can never alert: their comparison has no difference to test, so no metric can pass both the
threshold and the test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import EvalplatError
from evalplat.nightly.compare_beside import Finishing
from evalplat.nightly.config_night import (
    ConfigNight,
    comparison_summary,
    event_summary,
    isolated,
)
from evalplat.nightly.notify import deliver
from evalplat.nightly.outages import Outages
from evalplat.nightly.prep import (
    check_inputs,
    database_url,
    dry_run_night,
    load_test_sets,
    open_store,
)
from evalplat.nightly.project import Project
from evalplat.nightly.retire import project_key
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.reports.page_keys import PageAhead
    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent


LogFunction = Callable[[dict[str, Any]], None]
LOCK_NAME = "nightly"
LOCK_TTL = 120.0  # seconds the nightly lock lasts unrefreshed (``evalplat.store.locks``)


@dataclass
class NightlyOutcome:
    exit_code: int = 0
    runs: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    # the alert events of this night (opened, resolved, retired), and what each delivery of the
    # outbox did
    alerts: list[dict[str, Any]] = field(default_factory=list)
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    report: Path | None = None
    # each run's verdict against each target in force (``target``, ``target_verdict``, ...)
    targets: list[dict[str, Any]] = field(default_factory=list)


def run_nightly(
    project: Project,
    *,
    db_url: str | None = None,
    dry_run: bool = False,
    log: LogFunction | None = None,
    lock_wait: float = 10.0,
    fail_on_target: bool = False,
) -> NightlyOutcome:
    """Run one night of ``project`` (see the module docstring for the exit codes)."""
    emit = log or (lambda _entry: None)
    url = database_url(project, db_url)
    emit({"step": "start", "project": str(project.path), "dry_run": dry_run})
    contents = load_test_sets(project, emit)
    channels = check_inputs(project, contents)
    if dry_run:
        dry_run_night(project, url, contents, emit)
        return NightlyOutcome(exit_code=0)
    store = open_store(url, emit)
    try:
        with store.lock(LOCK_NAME, wait=lock_wait, ttl=LOCK_TTL):
            return _night(store, project, contents, channels, emit, fail_on_target)
    finally:
        store.close()


def _night(
    store: Store,
    project: Project,
    contents: dict[str, TestSetContent],
    channels: list[Channel],
    emit: LogFunction,
    fail_on_target: bool = False,
) -> NightlyOutcome:
    from evalplat.judging.client import RequestBudget
    from evalplat.nightly.judging import check_judges, judge_night
    from evalplat.nightly.judgments import settle_test_set

    check_judges(store, project)
    outcome = NightlyOutcome()
    budget = RequestBudget(project.judge_budget)
    versions: dict[str, int] = {}  # the version each test set is scored on tonight
    for spec in project.testsets:
        source = {
            "qrels": spec.qrels.name,
            "queries": None if spec.queries is None else spec.queries.name,
            "docs": None if spec.docs is None else spec.docs.name,
        }
        versions[spec.name] = settle_test_set(store, spec.name, contents[spec.name], source, emit)
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
    # the night's alert events (its runs', comparisons', retirements') are those from here on
    pairs = [(c.name, t) for c in project.configs for t in c.testsets]
    if project.online is not None:  # each config an arm: its pair ends when [online] goes
        pairs += [(c.name, ONLINE_TEST_SET) for c in project.configs]
    night_id = store.begin_night(project_key(project), pairs)
    # each completed run compared (in a second process when it pays) while the next one runs
    finishing = Finishing.of_night(store, project, contents, outcome)
    outages = Outages.of_project(project)  # runs failed on a shared engine: one alert each
    try:
        started: list[ConfigNight] = []  # completed runs, compared once the judge has graded
        for config_spec in project.configs:
            for test_set in config_spec.testsets:
                store.check_lock()  # a lost lock stops the night at its next step (exit 3)
                night = ConfigNight(store, project, config_spec, test_set, channels, emit, outages)
                before = outcome.exit_code  # a run that did not complete: 3 if fail_on says so
                if not isolated(night, outcome, night.start, config_versions[config_spec.name],
                                versions[test_set], outcome):  # fmt: skip
                    outcome.exit_code = 3 if "outage" in project.fail_on else before
                elif project.nightly_judge is None:
                    finishing.finish(night, versions[test_set], contents)
                else:
                    started.append(night)
                finishing.collect()
        _engines(store, outages, channels, emit, outcome)
        store.check_lock()
        for test_set in dict.fromkeys(night.test_set for night in started):
            ours = [night for night in started if night.test_set == test_set]
            runs = [run for night in ours for run in night.compared_runs()]
            versions[test_set], judged = judge_night(
                store, project, test_set, versions[test_set], runs, budget, emit
            )
            if not judged:  # logged; the night compares on the version it started with
                outcome.exit_code = 3
            for night in ours:
                finishing.finish(night, versions[test_set], contents)
        finishing.close()
    finally:
        finishing.shutdown()
    store.check_lock()
    if project.sweeps and not _sweeps(store, project, versions, emit):
        outcome.exit_code = 3
    store.check_lock()
    if project.online is not None:
        _online(store, project, channels, emit, outcome)
    store.check_lock()
    _retire(store, project, channels, emit, outcome)
    # the night's alert events are all stamped: it ends here, so that the site it writes and
    # a site written from scratch later say the same ("ended at ..."), never "still running"
    store.end_night(night_id)
    try:
        # with the comparison pages rendered beside the runs
        outcome.report = _write_reports(store, project, emit, finishing.ahead)
    except (OSError, EvalplatError) as error:  # the alerts are in the outbox: still delivered
        outcome.exit_code = 3
        emit({"step": "report", "error": f"reports not written: {error}"})
    deliver(store, project, channels, outcome, emit)
    if project.keep_results_days is not None:
        pruned = store.prune_results(project.keep_results_days)
        emit(
            {
                "step": "retention",
                "pruned_runs": len(pruned),
                "keep_results_days": project.keep_results_days,
            }
        )
    names = {c.name for c in project.configs}
    active = [a for a in store.list_alerts() if a.config in names]
    open_now = [a for a in active if a.state == "open"]
    failing = [a for a in open_now if a.kind == "regression" and project.fails_on(a.config)]
    missed = [t for t in outcome.targets if t["target_verdict"] == "missed"]
    if outcome.exit_code == 0 and (failing or (fail_on_target and missed)):
        outcome.exit_code = 1
    emit(
        {
            "step": "done",
            "exit_code": outcome.exit_code,
            "runs": len(outcome.runs),
            "open_alerts": len(open_now),
            "acknowledged_alerts": sum(1 for a in active if a.state == "acknowledged"),
            "targets_missed": len(missed),
        }
    )
    return outcome


def _engines(
    store: Store,
    outages: Outages,
    channels: list[Channel],
    emit: LogFunction,
    outcome: NightlyOutcome,
) -> None:
    """The engines' alerts, once every config has run (``evalplat.nightly.outages``)."""
    try:
        events = outages.observe(store, channels, emit)
    except EvalplatError as problem:  # e.g. the database went away: nothing to alert with
        outcome.exit_code = 3
        emit({"step": "alert", "error": str(problem)})
        return
    outcome.alerts += [event_summary(event) for event in events]


def _online(
    store: Store,
    project: Project,
    channels: list[Channel],
    emit: LogFunction,
    outcome: NightlyOutcome,
) -> None:
    """The online step (``evalplat.nightly.online``); a failure is isolated like a config's."""
    from evalplat.nightly.online import online_night

    try:
        night = online_night(store, project, channels, emit)
    except EvalplatError as error:
        outcome.exit_code = 3
        emit({"step": "online", "error": f"{type(error).__name__}: {error}"})
        return
    outcome.runs += [run.to_dict() for run in night.runs]
    outcome.comparisons += [
        comparison_summary(config, ONLINE_TEST_SET, result) for config, result in night.comparisons
    ]
    outcome.alerts += [event_summary(event) for event in night.events]


def _sweeps(store: Store, project: Project, versions: dict[str, int], emit: LogFunction) -> bool:
    """The ``[[sweeps]]`` due tonight (``evalplat.nightly.sweeps``); False when one failed."""
    from evalplat.nightly.sweeps import sweep_night

    return sweep_night(store, project, versions, emit)


def _retire(
    store: Store,
    project: Project,
    channels: list[Channel],
    emit: LogFunction,
    outcome: NightlyOutcome,
) -> None:
    """Retire the alerts whose subject left the project file (``evalplat.nightly.retire``)."""
    from evalplat.nightly.retire import retire_gone

    try:
        events = retire_gone(store, project, channels, emit)
    except EvalplatError as error:  # the night's own alerts still go out
        outcome.exit_code = 3
        emit({"step": "retire", "error": f"{type(error).__name__}: {error}"})
        return
    outcome.alerts += [event_summary(event) for event in events]


def _write_reports(
    store: Store, project: Project, emit: LogFunction, ahead: list[PageAhead]
) -> Path | None:
    try:
        from evalplat.reports import render_site
    except ImportError:
        return None
    from evalplat.nightly.project_online import agreement_pairs

    control = None if project.online is None else project.online.baseline
    index = render_site(
        store,
        project.reports_dir,
        agreement_pairs(project),
        ahead,
        targets=project.targets,
        control=control,
        gates_of=project.stated_gates,
    )
    emit({"step": "report", "path": str(index)})
    return Path(index)
