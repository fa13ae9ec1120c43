"""The alert outbox: alert events waiting for their channels, written with the state change.

Life of a row (one alert event x one channel)::

    enqueue (in the alert's state-change transaction) ──► pending, batch unset
    seal_outbox ──► batch = the smallest row id of the channel's unsealed pending rows
    claim_batch ──► claimed_by = the deliverer, claimed_until = now + its claim time
    mark_outbox(sent) ──► sent, with the time            mark_outbox(failed) ──► still pending
                     (either way the claim is released)

The rows of one (channel, batch) are delivered together as one notice; a batch never gains or
loses rows once sealed, so a retried notice has the same entries and the same idempotency key.
Each row's ``idempotency_key`` is a random UUID fixed when the row is written.

A deliverer sends only the batches it has claimed, and the claim is committed before the send:
two deliverers at once (a night and ``evalplat alerts deliver``) never send the same row. A
claim is taken over once it lapses, or at once when its deliverer ran on this host under a PID
that no longer exists (a killed deliverer's batch goes out with the next one).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from evalplat.db.operations import Alert, AlertDelivery, AlertOutbox
from evalplat.errors import InputError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.locks import holder_is_dead

if TYPE_CHECKING:
    from evalplat.alerts.delivery import DeliveryResult


@dataclass(frozen=True)
class OutboxEntry:
    """One alert event for one channel, as stored."""

    id: int
    alert_id: int
    event: str
    channel: str
    idempotency_key: str
    message: dict[str, Any]
    batch: int | None
    status: str
    attempts: int
    error: str | None
    created_at: datetime
    sent_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        for key in ("created_at", "sent_at"):
            value = data[key]
            data[key] = None if value is None else value.isoformat()
        return data


@dataclass(frozen=True)
class OutboxBatch:
    """The rows one channel is sent together, oldest first."""

    channel: str
    batch: int
    entries: tuple[OutboxEntry, ...]


def enqueue(
    session: Session,
    alert: Alert,
    event: str,
    message: dict[str, Any] | None,
    channels: Sequence[str],
) -> None:
    """Queue ``event`` of ``alert`` for each channel, in the caller's transaction."""
    fields = {
        **(message or {}),
        "event": event,
        "kind": alert.kind,
        "alert_id": alert.id,
    }
    now = utcnow()
    for channel in dict.fromkeys(channels):
        session.add(
            AlertOutbox(
                alert_id=alert.id,
                event=event,
                channel=channel[:200],
                idempotency_key=uuid.uuid4().hex,
                message=fields,
                status="pending",
                attempts=0,
                created_at=now,
            )
        )
    session.flush()


class OutboxMixin(StoreBase):
    def seal_outbox(self) -> int:
        """Group each channel's new pending rows into one batch; return how many batches."""
        with self.session(write=True) as session:
            firsts = session.execute(
                select(AlertOutbox.channel, func.min(AlertOutbox.id))
                .where(AlertOutbox.status == "pending", AlertOutbox.batch.is_(None))
                .group_by(AlertOutbox.channel)
            ).all()
            for channel, first in firsts:
                session.execute(
                    update(AlertOutbox)
                    .where(
                        AlertOutbox.channel == channel,
                        AlertOutbox.status == "pending",
                        AlertOutbox.batch.is_(None),
                    )
                    .values(batch=first)
                )
            return len(firsts)

    def pending_batches(self) -> list[OutboxBatch]:
        """Sealed batches still waiting for their channel, oldest first."""
        with self.session() as session:
            rows = session.scalars(
                select(AlertOutbox)
                .where(AlertOutbox.status == "pending", AlertOutbox.batch.is_not(None))
                .order_by(AlertOutbox.batch, AlertOutbox.channel, AlertOutbox.id)
            ).all()
        batches: dict[tuple[str, int], list[OutboxEntry]] = {}
        for row in rows:
            batches.setdefault((row.channel, row.batch or 0), []).append(_entry(row))
        return [
            OutboxBatch(channel, batch, tuple(entries))
            for (channel, batch), entries in batches.items()
        ]

    def claim_batch(self, batch: OutboxBatch, owner: str, seconds: float) -> str | None:
        """Claim ``batch`` for ``owner`` for ``seconds``, committed before this returns.

        Returns None once claimed, else why not, in a few words: another deliverer holds it,
        or sent it since it was read. Claiming is compare-and-set on each row's current claim,
        so of two deliverers claiming one batch at once exactly one succeeds, on both
        databases.
        """
        try:
            return self._claim(batch, owner, seconds)
        except _Taken:  # rolled back
            return "being delivered by another deliverer"

    def _claim(self, batch: OutboxBatch, owner: str, seconds: float) -> str | None:
        ids = [entry.id for entry in batch.entries]
        now = utcnow()
        with self.session(write=True) as session:
            rows = session.execute(
                select(AlertOutbox.id, AlertOutbox.status, AlertOutbox.claimed_by,
                       AlertOutbox.claimed_until)
                .where(AlertOutbox.id.in_(ids))
                .order_by(AlertOutbox.id)
            ).all()  # fmt: skip
            if len(rows) != len(ids) or any(row.status != "pending" for row in rows):
                return "sent by another deliverer"
            for row in rows:
                live = row.claimed_until is not None and row.claimed_until > now
                if row.claimed_by is not None and live and not holder_is_dead(row.claimed_by):
                    return f"being delivered by {row.claimed_by}"
            claimed = 0
            for row in rows:  # in id order, as any other claimer: no deadlock on PostgreSQL
                same_claim: ColumnElement[bool] = (
                    AlertOutbox.claimed_by.is_(None)
                    if row.claimed_by is None
                    else AlertOutbox.claimed_by == row.claimed_by
                )
                done: Any = session.execute(
                    update(AlertOutbox)
                    .where(AlertOutbox.id == row.id, AlertOutbox.status == "pending", same_claim)
                    .values(claimed_by=owner[:200], claimed_until=now + timedelta(seconds=seconds))
                )
                claimed += done.rowcount
            if claimed != len(ids):  # another deliverer changed a row since it was read
                raise _Taken()
        return None

    def mark_outbox(self, batch: OutboxBatch, result: DeliveryResult, owner: str) -> None:
        """Record one delivery of ``batch`` by ``owner``, who claimed it: sent rows leave the
        outbox; failed ones wait, unclaimed, for the next deliverer.

        Each alert of the batch also gets a row in its delivery history (``deliveries``).
        """
        ids = [entry.id for entry in batch.entries]
        now = utcnow()
        with self.session() as session:
            values: dict[str, Any] = {
                "attempts": AlertOutbox.attempts + result.attempts,
                "error": result.error,
                "claimed_by": None,
                "claimed_until": None,
            }
            if result.ok:
                values.update(status="sent", sent_at=now)
            session.execute(
                update(AlertOutbox)
                .where(AlertOutbox.id.in_(ids), AlertOutbox.claimed_by == owner[:200])
                .values(**values)
            )
            for entry in batch.entries:
                session.add(
                    AlertDelivery(
                        alert_id=entry.alert_id,
                        channel=batch.channel[:200],
                        event=entry.event,
                        status=result.status,
                        attempts=result.attempts,
                        error=result.error,
                        created_at=now,
                    )
                )

    def outbox(self, status: str | None = None) -> list[OutboxEntry]:
        """Outbox rows, oldest first; only those in ``status`` (pending, sent) when given."""
        if status is not None and status not in ("pending", "sent"):
            raise InputError(f"unknown outbox status '{status}'; valid: pending, sent")
        with self.session() as session:
            query = select(AlertOutbox).order_by(AlertOutbox.id)
            if status is not None:
                query = query.where(AlertOutbox.status == status)
            return [_entry(row) for row in session.scalars(query).all()]


class _Taken(Exception):
    """A claim lost halfway: its transaction is rolled back."""


def _entry(row: AlertOutbox) -> OutboxEntry:
    return OutboxEntry(
        id=row.id,
        alert_id=row.alert_id,
        event=row.event,
        channel=row.channel,
        idempotency_key=row.idempotency_key,
        message=dict(row.message),
        batch=row.batch,
        status=row.status,
        attempts=row.attempts,
        error=row.error,
        created_at=row.created_at,
        sent_at=row.sent_at,
    )
