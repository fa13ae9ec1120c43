"""Operational tables: alerts and their life cycle, deliveries, the outbox, the nightly lock,
the nights, and the target verdicts of runs.

They hang off configs, test sets, runs (``evalplat.db.models``) and comparisons
(``evalplat.db.evaluations``) by foreign key only; nothing in the
content tables refers back to them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from evalplat.db.schema import Base, UTCDateTime
from evalplat.db.schema import created_column as _created
from evalplat.db.schema import id_column as _id


class Alert(Base):
    """A regression of one metric of one config against its baseline, with its life cycle.

    ``kind`` is ``regression``, ``needs_judgments`` (a drop only unjudged documents explain) or
    ``operational`` (the config's runs fail; no metric, ``metric`` is empty, no baseline run).
    ``state`` is one of ``ALERT_STATES``; ``retired`` means its subject left the project.

    ``engine`` is set on an operational alert whose subject is an engine, not a config: the
    outage of an endpoint several configs search (``evalplat.searchers.engines``), one alert
    for all of them (``evalplat.nightly.outages``). Its own column, because no subject field
    means "engine": ``metric`` names a gate or a target, ``config_id`` a config. Such an
    alert's ``config_id`` and ``test_set_id`` are those of the first run that failed on the
    engine the night it opened: where it was seen, not what it is about.
    """

    __tablename__ = "alert"

    id: Mapped[int] = _id()
    config_id: Mapped[int] = mapped_column(ForeignKey("config.id", ondelete="CASCADE"))
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_set.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20), default="regression", server_default="regression")
    metric: Mapped[str] = mapped_column(String(80))
    baseline_run_id: Mapped[int | None] = mapped_column(ForeignKey("run.id"), nullable=True)
    state: Mapped[str] = mapped_column(String(20), index=True)
    # nights with a regression verdict since the alert began (for `consecutive = N` gates)
    streak: Mapped[int] = mapped_column(Integer, default=1)
    # the key's latest outcomes, oldest first, "1" held and "0" not, as many as its
    # confirmation rule reads (``evalplat.alerts.confirmation``); null before the rule kept any
    recent: Mapped[str | None] = mapped_column(String(60), nullable=True)
    last_comparison_id: Mapped[int | None] = mapped_column(
        ForeignKey("comparison.id"), nullable=True
    )
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    opened_at: Mapped[datetime] = _created()
    acknowledged_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # why it was resolved by hand (``alerts resolve --note``) or retired (its subject is gone)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the project file whose nights own it (``evalplat.nightly.retire``); unset until claimed
    project: Mapped[str | None] = mapped_column(String(500), nullable=True)
    engine: Mapped[str | None] = mapped_column(String(500), nullable=True)


class AlertDelivery(Base):
    __tablename__ = "alert_delivery"

    id: Mapped[int] = _id()
    alert_id: Mapped[int] = mapped_column(ForeignKey("alert.id", ondelete="CASCADE"), index=True)
    channel: Mapped[str] = mapped_column(String(200))
    event: Mapped[str] = mapped_column(String(20))  # opened | resolved | retired | test
    status: Mapped[str] = mapped_column(String(20))  # sent | failed
    attempts: Mapped[int] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = _created()


class AlertOutbox(Base):
    """One alert event waiting for (or delivered to) one channel: the outbox.

    Written in the transaction that changes the alert's state, so a crash can delay a delivery
    but never lose it. ``batch`` groups the rows sent together as one notice; it is set before
    the first attempt and never changes, so a retried notice has the same entries and key.
    A deliverer claims a batch's rows (``claimed_by``, ``claimed_until``) before sending them,
    so that two deliverers never send the same row.
    """

    __tablename__ = "alert_outbox"

    id: Mapped[int] = _id()
    alert_id: Mapped[int] = mapped_column(ForeignKey("alert.id", ondelete="CASCADE"), index=True)
    event: Mapped[str] = mapped_column(String(20))  # opened | resolved | retired
    channel: Mapped[str] = mapped_column(String(200))
    idempotency_key: Mapped[str] = mapped_column(String(64), unique=True)
    message: Mapped[dict[str, Any]] = mapped_column(JSON)
    batch: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(20), index=True)  # pending | sent
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = _created()
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # the deliverer sending this row now (``host:pid:token``) and when its claim lapses
    claimed_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Lock(Base):
    """A named lock row (SQLite has no advisory locks): one nightly at a time per database."""

    __tablename__ = "lock"

    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))
    acquired_at: Mapped[datetime] = _created()
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Night(Base):
    """One night of a project (``evalplat nightly``): when it began and, once done, ended. The
    alert events of a night are those stamped between the two (``evalplat.store.nights``)."""

    __tablename__ = "night"

    id: Mapped[int] = _id()
    started_at: Mapped[datetime] = _created()
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # what the night's project file runs: {"file": "evalplat.toml", "pairs": [[config, test
    # set], ...]}; None for a night stored before nights recorded it
    subjects: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class RunTarget(Base):
    """A run against one target of its metric (``evalplat.comparison.targets``): the figure,
    its bootstrap interval and the verdict (met | at_risk | missed | needs_judgments), as of the
    latest check.
    ``segment`` is the query tag the target is judged on, ``""`` for all queries."""

    __tablename__ = "run_target"

    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), primary_key=True)
    metric: Mapped[str] = mapped_column(String(80), primary_key=True)
    segment: Mapped[str] = mapped_column(String(80), primary_key=True, server_default="")
    bound: Mapped[str] = mapped_column(String(3))  # min | max
    target_value: Mapped[float] = mapped_column(Float)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    verdict: Mapped[str] = mapped_column(String(20))
    checked_at: Mapped[datetime] = _created()
