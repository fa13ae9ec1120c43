"""A night's retirements: the alerts whose subject has left the project end, announced once.

An alert watches a subject: a config on a test set, and, per kind, a gate (``regression``,
``needs_judgments``), a target (``target``, ``drift``) or, on the ``online`` test set, an A/B arm
under an online gate. When the subject is gone its condition can never end by itself, so the
night *retires* the alert (event ``retired``, through the outbox like ``opened`` and
``resolved``; a pending alert, never announced, is dropped without one). Gone means:

- its config is no longer a ``[[configs]]`` entry, or its test set is no longer in that config's
  ``testsets`` (a test set removed from the file leaves every config's list); an engine's
  operational alert (``evalplat.nightly.outages``): no config searches its engine any more;
- no ``[[gates]]`` entry gives its key any more (``METRIC`` or ``METRIC [segment TAG]``, the gain
  map of the test set applied), for a regression or a drop that needs judgments;
- no ``[[targets]]`` entry in force for the config and test set gives its key (a drift alert
  also needs the target's ``max_slide``);
- an online alert: the project has no ``[online]`` table, or its arm (the config, any version)
  has had no searches for ``[online] retire_after_days`` days, counted back from the latest day
  any arm of the project has searches (so a late import of the logs retires nothing); for an
  ``online:Preference`` alert, the same of its interleaved experiment's searches, or the
  experiment left ``[[online.interleaving]]``.

Which alerts are the project's: each night *claims* the active alerts of the configs its file
names, recording the project file (its resolved path) on them; only alerts claimed by this
project file are ever retired by it. So a config that leaves the file has its alerts retired by
the next night, while alerts of configs another project file (sharing the database) runs are
never touched. An alert claimed by no night (a config removed before its alerts were ever
claimed) stays until ``evalplat alerts resolve ID --note ...``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from evalplat.comparison.targets import applicable
from evalplat.nightly.notify import alert_key
from evalplat.nightly.project import PREFERENCE
from evalplat.store.nights import ended_reason
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.nightly.job import LogFunction
    from evalplat.nightly.project import Project
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent, AlertInfo

GATE_KINDS = ("regression", "needs_judgments")
TARGET_KINDS = ("target", "drift")


def project_key(project: Project) -> str:
    """What an alert records as its owner: the project file's resolved path."""
    return str(project.path.resolve())


def retire_gone(
    store: Store, project: Project, channels: list[Channel], emit: LogFunction
) -> list[AlertEvent]:
    """Claim the project's active alerts, retire those whose subject is gone (module doc)."""
    key = project_key(project)
    store.claim(key, [c.name for c in project.configs])
    last_search = _last_searches(store, project)
    names = [channel.name for channel in channels]
    events: list[AlertEvent] = []
    for alert in store.owned_alerts(key):
        ended = subject_gone(project, alert, last_search)
        reason = ended or gone(project, alert, last_search)
        if reason is None:
            continue
        for event in store.retire(alert.id, reason, names, ended=ended is not None):
            emit({"step": "alert", "event": "retired", "kind": alert.kind, "alert": alert.id,
                  "config": alert.config, "testset": alert.test_set, "metric": alert.metric,
                  "reason": reason,
                  **({} if alert.engine is None else {"engine": alert.engine})})  # fmt: skip
            events.append(event)
    return events


def subject_gone(
    project: Project, alert: AlertInfo, last_search: dict[str, datetime] | None = None
) -> str | None:
    """Why the (config, test set) ``alert`` watches has ended in ``project`` (its config or
    test set left the file, its online arm or experiment ended), or None while it goes on.
    The report site's index moves an ended subject's row to its "Ended" section."""
    if alert.engine is not None:
        return _engine_gone(project, alert.engine)
    spec = next((c for c in project.configs if c.name == alert.config), None)
    if spec is not None and alert.test_set == ONLINE_TEST_SET:
        return _online_ended(project, alert, last_search or {})
    if spec is None or alert.test_set not in spec.testsets:
        configs = [c.name for c in project.configs]
        return ended_reason(alert.config, alert.test_set, project.path.name, configs)
    return None


def gone(
    project: Project, alert: AlertInfo, last_search: dict[str, datetime] | None = None
) -> str | None:
    """Why ``alert``'s subject has left ``project``, or None while it is still there: its
    (config, test set) ended (:func:`subject_gone`), or its gate or target left the file."""
    ended = subject_gone(project, alert, last_search)
    if ended is not None:
        return ended
    if alert.test_set == ONLINE_TEST_SET:
        gated = {g.metric for g in [*project.ab_gates(), *project.online_gates()]}
        if alert.kind in GATE_KINDS and alert.metric not in gated:
            return f"no gate on {alert.metric} any more"
        return None
    if alert.kind in GATE_KINDS:
        keys = {alert_key(g.metric, g.segment) for g in project.gates_for(alert.test_set)}
        if alert.metric not in keys:
            return f"no gate on {alert.metric} for {alert.test_set} any more"
    if alert.kind in TARGET_KINDS:
        targets = applicable(project.targets, alert.config, alert.test_set)
        keys = {
            alert_key(t.metric, t.segment)
            for t in targets
            if alert.kind == "target" or t.max_slide is not None
        }
        if alert.metric not in keys:
            what = "target" if alert.kind == "target" else "target with max_slide"
            return f"no {what} on {alert.metric} for {alert.config} on {alert.test_set} any more"
    return None


def _engine_gone(project: Project, engine: str) -> str | None:
    """An engine's alert watches the engine, not the config it was filed under: it ends when
    no config of the project searches the engine any more."""
    from evalplat.searchers import engine_of

    if any(engine_of(c.searcher, c.params) == engine for c in project.configs):
        return None
    return f"no config of {project.path.name} searches engine {engine} any more"


def _online_ended(
    project: Project, alert: AlertInfo, last_search: dict[str, datetime]
) -> str | None:
    online = project.online
    if online is None:  # the wording of the index's "Ended" row of the same pair
        configs = [c.name for c in project.configs]
        return ended_reason(alert.config, alert.test_set, project.path.name, configs)
    latest = max(last_search.values(), default=None)
    interleaved = alert.metric == PREFERENCE
    last = last_search.get(f"{PREFERENCE} {alert.config}" if interleaved else alert.config)
    if latest is None:
        return None  # no logs at all: nothing says the arm stopped
    days = online.retire_after_days
    what = f"interleaved experiment of {alert.config}" if interleaved else f"arm {alert.config}"
    if interleaved and not any(c.partition("@")[0] == alert.config for c, _ in online.interleaving):
        return f"{what} is no longer in [[online.interleaving]]"
    if last is None:
        return f"{what} has no searches in the logs"
    if latest - last >= timedelta(days=days):
        return (
            f"{what} has had no searches since {last.date().isoformat()} "
            f"([online] retire_after_days = {days})"
        )
    return None


def _last_searches(store: Store, project: Project) -> dict[str, datetime]:
    """Per config of the project, the start of the latest day on which it has searches."""
    if project.online is None:
        return {}
    from evalplat.nightly.interleaved import last_interleaved_day
    from evalplat.store.online_arms import day_runs

    days: dict[str, datetime] = {}
    for spec in project.configs:
        starts = [run.started_at for run in day_runs(store, spec.name)]
        if starts:
            days[spec.name] = max(starts)
        interleaved = last_interleaved_day(store, spec.name)
        if interleaved is not None:  # as an interleaving candidate: keyed apart from its arm
            days[f"{PREFERENCE} {spec.name}"] = interleaved
    return days
