"""Alerts in the store: one state machine per (config, test set, kind, metric, baseline run).

Each night the nightly job calls ``observe`` once per gated metric with that night's verdict.
States of the key's current alert row (``alert.state``) and what a night does to them::

    (none)   ──regressed──► pending (streak 1) ──► open, event "opened"  when the rule opens
    pending  ──any outcome──► kept in ``recent`` ──► open, event "opened"  when the rule opens
    pending  ──outcomes that can no longer open it──► row deleted (it never was an alert)
    open / acknowledged ──regressed──► streak + 1, details refreshed, no event
    open / acknowledged ──clear──► resolved, event "resolved", when the rule resolves
    open / acknowledged ──resolve (by hand, with a note)──► resolved, event "resolved"
    pending / open / acknowledged ──subject gone──► retired, event "retired" (pending: deleted)
    resolved, retired: history; a later regression starts a new row

The rule is the gate's confirmation (``evalplat.alerts.confirmation``: open on ``k`` regressed
nights of the last ``n``, resolve after ``clear`` clear nights in a row; ``consecutive = N`` is
N of N, clear 1). The row keeps the key's latest outcomes (``alert.recent``) for it, from the
first regressed night on; a resolved alert's outcomes do not count for the next one. So an
alert is announced once when it opens and once when it resolves, never every night between. ``ack``
records that a human has seen it; an acknowledged alert still announces its resolution. A new
baseline run
is a new key: alerts against the old baseline stay as they are until that baseline's
comparisons stop (the nightly job may resolve them explicitly by observing a non-regression).

``kind`` separates a regression from a drop that needs judgments and from an operational failure
(a run of the config failed; its key has no metric and no baseline), each with its own life cycle.
An operational alert observed with ``engine`` is keyed by the engine alone (kind and engine): one
alert for every config that searches it (``evalplat.nightly.outages``); its config and test set
are where it was first seen. Every other alert's key has no engine.
An alert is *retired* when its subject (config, test set, gate, target, A/B arm) has left the
project that owns it (``evalplat.nightly.retire`` decides; ``claim`` records the owner).
Every event (opened, resolved, retired) is written to the outbox, one row per channel named by
the caller, in the transaction that changes the state (``evalplat.store.outbox``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.orm import Session

from evalplat.alerts.confirmation import Confirmation, outcomes
from evalplat.db.models import Config, TestSet
from evalplat.db.operations import Alert, AlertDelivery
from evalplat.db.schema import ALERT_KINDS, ALERT_STATES
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.outbox import enqueue

if TYPE_CHECKING:
    from evalplat.alerts.delivery import DeliveryResult

ACTIVE_STATES = ("pending", "open", "acknowledged")
FOLLOW = Confirmation()  # each outcome alone: open on a regressed night, resolve on a clear one


@dataclass(frozen=True)
class AlertInfo:
    id: int
    config: str
    test_set: str
    metric: str
    baseline_run_id: int | None
    state: str
    streak: int
    last_comparison_id: int | None
    details: dict[str, Any] | None
    opened_at: datetime
    acknowledged_at: datetime | None
    resolved_at: datetime | None
    kind: str = "regression"
    retired_at: datetime | None = None
    # the note of a hand resolution, or why the alert was retired
    note: str | None = None
    # an engine's operational alert: the engine it is about (``evalplat.searchers.engines``)
    engine: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        for key in ("opened_at", "acknowledged_at", "resolved_at", "retired_at"):
            value = data[key]
            data[key] = None if value is None else value.isoformat()
        return data


@dataclass(frozen=True)
class AlertEvent:
    """Something to announce: ``event`` is ``opened``, ``resolved`` or ``retired``; ``alert`` as
    it is now."""

    event: str
    alert: AlertInfo


@dataclass(frozen=True)
class DeliveryInfo:
    id: int
    alert_id: int
    channel: str
    event: str
    status: str
    attempts: int
    error: str | None
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["created_at"] = self.created_at.isoformat()
        return data


class AlertsMixin(StoreBase):
    def observe(
        self,
        config: str,
        testset: str,
        metric: str,
        baseline_run: int | None,
        comparison_id: int | None,
        regressed: bool,
        confirm: Confirmation = FOLLOW,
        details: dict[str, Any] | None = None,
        *,
        kind: str = "regression",
        channels: Sequence[str] = (),
        engine: str | None = None,
        recent: Sequence[bool] | None = None,
        unit: str = "night",
    ) -> list[AlertEvent]:
        """Record one night's outcome for the key; return the events to deliver (0 or 1).
        With ``engine`` (an operational alert of an engine) the key is the engine: ``config``
        and ``testset`` are only where a new alert is filed.

        ``confirm`` decides over the key's recent outcomes, which the alert row keeps; a caller
        that keeps them elsewhere (the judged days of an online gate) passes them as ``recent``
        (oldest first, ``regressed`` the latest), and a key without an alert then files none
        until the rule opens one. ``details`` (JSON-ready, e.g. ``AlertMessage.to_dict()``) is
        stored on regressed nights so that the alert keeps the figures of its latest regression,
        with the rule as it stands (``confirmation``, counted in ``unit``) unless the rule
        follows each night alone. Each event, with
        that night's ``details``, is queued in the outbox for every name in ``channels``, in the
        same transaction as the state change.
        """
        if kind not in ALERT_KINDS:
            raise InputError(f"unknown alert kind '{kind}'; valid: {', '.join(ALERT_KINDS)}")
        now = utcnow()
        with self.session() as session:
            config_row = _by_name(session, Config, config, "config")
            test_set_row = _by_name(session, TestSet, testset, "test set")
            key = (
                (Alert.engine == engine,)
                if engine is not None
                else (
                    Alert.engine.is_(None),
                    Alert.config_id == config_row.id,
                    Alert.test_set_id == test_set_row.id,
                    Alert.metric == metric,
                    Alert.baseline_run_id.is_(None)
                    if baseline_run is None
                    else Alert.baseline_run_id == baseline_run,
                )
            )
            alert = session.scalar(
                select(Alert)
                .where(Alert.kind == kind, Alert.state.in_(ACTIVE_STATES), *key)
                .order_by(Alert.id.desc())
                .limit(1)
            )
            kept = recent is not None
            if recent is None:
                recent = [*outcomes(None if alert is None else alert.recent), regressed]
            is_open = alert is not None and alert.state in ("open", "acknowledged")
            step = confirm.step(recent, is_open)
            said = details
            if details is not None and confirm != FOLLOW:
                said = {**details, "confirmation": confirm.says(recent, unit)}
            if step == "resolve" and alert is not None:
                alert.state = "resolved"
                alert.resolved_at = now
                alert.recent = confirm.keep(recent)
                if comparison_id is not None:
                    alert.last_comparison_id = comparison_id
                session.flush()
                enqueue(session, alert, "resolved", said, channels)
                return [AlertEvent("resolved", _infos(session, [alert])[0])]
            if confirm.ends(recent, is_open, step, elsewhere=kept):
                if alert is not None:  # a pending alert its outcomes can no longer open
                    session.execute(delete(Alert).where(Alert.id == alert.id))
                return []
            if alert is None:
                if not regressed:
                    return []
                alert = Alert(
                    config_id=config_row.id,
                    test_set_id=test_set_row.id,
                    kind=kind,
                    metric=metric,
                    baseline_run_id=baseline_run,
                    engine=engine,
                    state="pending",
                    streak=0,
                    opened_at=now,
                )
                session.add(alert)
            alert.recent = confirm.keep(recent)
            if regressed:
                alert.streak += 1
                alert.last_comparison_id = comparison_id
                alert.details = said
            events: list[AlertEvent] = []
            if step == "open":
                alert.state = "open"
                alert.opened_at = now
                session.flush()
                enqueue(session, alert, "opened", said, channels)
                events.append(AlertEvent("opened", _infos(session, [alert])[0]))
            session.flush()
            return events

    def ack(self, alert_id: int) -> AlertInfo:
        """Acknowledge an open alert (idempotent for one already acknowledged)."""
        with self.session() as session:
            alert = _alert(session, alert_id)
            if alert.state not in ("open", "acknowledged"):
                raise InputError(
                    f"alert {alert_id} is {alert.state}; only open alerts can be acknowledged"
                )
            if alert.state == "open":
                alert.state = "acknowledged"
                alert.acknowledged_at = utcnow()
                session.flush()
            return _infos(session, [alert])[0]

    def resolve(self, alert_id: int, note: str, channels: Sequence[str] = ()) -> AlertEvent:
        """Close an open or acknowledged alert by hand: event ``resolved``, queued for each of
        ``channels``, with ``note`` stored on the alert and shown in its message."""
        note = note.strip()
        if not note:
            raise InputError("--note must say why the alert is resolved (a non-empty text)")
        with self.session() as session:
            alert = _alert(session, alert_id)
            if alert.state not in ("open", "acknowledged"):
                raise InputError(
                    f"alert {alert_id} is {alert.state}; only open or acknowledged alerts can be "
                    "resolved by hand"
                )
            alert.state = "resolved"
            alert.resolved_at = utcnow()
            alert.note = note
            session.flush()
            enqueue(session, alert, "resolved", {**(alert.details or {}), "note": note}, channels)
            return AlertEvent("resolved", _infos(session, [alert])[0])

    def claim(self, project: str, configs: Sequence[str]) -> int:
        """Record ``project`` as the owner of the active alerts of ``configs``; return how many
        changed owner. A night claims its configs' alerts, so that it alone retires them."""
        with self.session() as session:
            ids = select(Config.id).where(Config.name.in_(list(configs)))
            changed = session.execute(
                update(Alert)
                .where(
                    Alert.config_id.in_(ids),
                    Alert.state.in_(ACTIVE_STATES),
                    or_(Alert.project.is_(None), Alert.project != project),
                )
                .values(project=project)
                .execution_options(synchronize_session=False)
            )
            return int(getattr(changed, "rowcount", 0) or 0)

    def owned_alerts(self, project: str) -> list[AlertInfo]:
        """The active (pending, open, acknowledged) alerts ``project`` owns, oldest first."""
        with self.session() as session:
            rows = session.scalars(
                select(Alert)
                .where(Alert.project == project, Alert.state.in_(ACTIVE_STATES))
                .order_by(Alert.id)
            ).all()
            return _infos(session, rows)

    def retire(
        self, alert_id: int, reason: str, channels: Sequence[str] = (), *, ended: bool = False
    ) -> list[AlertEvent]:
        """Retire an active alert whose subject is gone: event ``retired`` (announced once, with
        ``reason``). A pending alert was never announced: it is deleted, with no event.
        ``ended``: its whole (config, test set) ended, not only its gate or target; kept with
        the alert (``details["ended"]``) for the index's "Ended" section."""
        with self.session() as session:
            alert = _alert(session, alert_id)
            if alert.state not in ACTIVE_STATES:
                return []
            if alert.state == "pending":
                session.execute(delete(Alert).where(Alert.id == alert.id))
                return []
            alert.state = "retired"
            alert.retired_at = utcnow()
            alert.note = reason
            session.flush()
            enqueue(session, alert, "retired", {**(alert.details or {}), "note": reason}, channels)
            if ended:
                alert.details = {**(alert.details or {}), "ended": True}
            return [AlertEvent("retired", _infos(session, [alert])[0])]

    def list_alerts(
        self, state: str | None = None, *, config: str | None = None
    ) -> list[AlertInfo]:
        """Alerts, newest first; only those in ``state`` and of ``config`` when given."""
        if state is not None and state not in ALERT_STATES:
            raise InputError(f"unknown alert state '{state}'; valid: {', '.join(ALERT_STATES)}")
        with self.session() as session:
            query = select(Alert).order_by(Alert.id.desc())
            if state is not None:
                query = query.where(Alert.state == state)
            if config is not None:
                config_row = _by_name(session, Config, config, "config")
                query = query.where(Alert.config_id == config_row.id)
            return _infos(session, session.scalars(query).all())

    def alert_info(self, alert_id: int) -> AlertInfo:
        with self.session() as session:
            return _infos(session, [_alert(session, alert_id)])[0]

    def record_delivery(self, alert_id: int, result: DeliveryResult) -> int:
        """Store the outcome of delivering one event of an alert to one channel."""
        with self.session() as session:
            _alert(session, alert_id)
            row = AlertDelivery(
                alert_id=alert_id,
                channel=result.channel[:200],
                event=result.event,
                status=result.status,
                attempts=result.attempts,
                error=result.error,
                created_at=utcnow(),
            )
            session.add(row)
            session.flush()
            return row.id

    def deliveries(self, alert_id: int) -> list[DeliveryInfo]:
        """The recorded deliveries of an alert, oldest first."""
        with self.session() as session:
            _alert(session, alert_id)
            rows = session.scalars(
                select(AlertDelivery)
                .where(AlertDelivery.alert_id == alert_id)
                .order_by(AlertDelivery.id)
            ).all()
            return [
                DeliveryInfo(
                    id=r.id,
                    alert_id=r.alert_id,
                    channel=r.channel,
                    event=r.event,
                    status=r.status,
                    attempts=r.attempts,
                    error=r.error,
                    created_at=r.created_at,
                )
                for r in rows
            ]


def _by_name(session: Session, model: type[Config] | type[TestSet], name: str, what: str) -> Any:
    row = session.scalar(select(model).where(model.name == name))
    if row is None:
        raise NotFoundError(f"no {what} named '{name}'")
    return row


def _alert(session: Session, alert_id: int) -> Alert:
    alert = session.get(Alert, alert_id)
    if alert is None:
        raise NotFoundError(f"no alert with id {alert_id} (see `evalplat alerts list`)")
    return alert


def _info(alert: Alert, config: str, test_set: str) -> AlertInfo:
    return AlertInfo(
        id=alert.id,
        config=config,
        test_set=test_set,
        metric=alert.metric,
        baseline_run_id=alert.baseline_run_id,
        state=alert.state,
        streak=alert.streak,
        last_comparison_id=alert.last_comparison_id,
        details=alert.details,
        opened_at=alert.opened_at,
        acknowledged_at=alert.acknowledged_at,
        resolved_at=alert.resolved_at,
        kind=alert.kind,
        retired_at=alert.retired_at,
        note=alert.note,
        engine=alert.engine,
    )


def _infos(session: Session, alerts: Any) -> list[AlertInfo]:
    alerts = list(alerts)
    config_ids = {a.config_id for a in alerts}
    test_set_ids = {a.test_set_id for a in alerts}
    configs: dict[int, str] = {
        row[0]: row[1]
        for row in session.execute(select(Config.id, Config.name).where(Config.id.in_(config_ids)))
    }
    test_sets: dict[int, str] = {
        row[0]: row[1]
        for row in session.execute(
            select(TestSet.id, TestSet.name).where(TestSet.id.in_(test_set_ids))
        )
    }
    return [_info(a, configs[a.config_id], test_sets[a.test_set_id]) for a in alerts]
