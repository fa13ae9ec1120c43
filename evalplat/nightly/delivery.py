"""Delivering the alert outbox: one notice per channel and batch, retried until accepted.

    outcomes = deliver_outbox(store, channels, links=ReportLinks(site, base_url))

The nightly job calls this at the end of every night (after the reports are written, so links
lead somewhere), and ``evalplat alerts deliver`` calls it on demand. Each pending batch of a
channel (``evalplat.store.outbox``) becomes one ``Notice`` carrying its idempotency keys, is sent
with the usual retries and backoff (``evalplat.alerts.delivery``), and is marked sent only once
the channel has accepted it. A process that dies between the send and the mark sends the same
notice, with the same keys, next time: a receiver that honours ``Idempotency-Key`` (or the
e-mail ``Message-ID``) sees one alert. A batch for a channel the project no longer configures
waits, reported, until the channel is back.

Each batch is claimed before it is sent (``Store.claim_batch``), so two deliverers at once never
send the same row: a batch another deliverer is sending is reported ``claimed`` and left to it.
A claim lasts longer than a send with every retry takes (``claim_seconds``); a deliverer killed
mid-send on this host is noticed at once, one on another host when its claim lapses.

``undelivered(outcomes)`` says whether a channel of the project left events in the outbox: the
night and ``alerts deliver`` then exit 3. A batch waiting for a channel the project file no
longer names is reported but does not fail them (removing a channel must not fail every night).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.alerts.base import Channel
from evalplat.alerts.delivery import DeliveryPolicy, deliver
from evalplat.alerts.message import AlertMessage
from evalplat.alerts.notice import Notice
from evalplat.db.faults import crash_point

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.store.outbox import OutboxBatch

# How long a deliverer's claim on a batch lasts at least: past the longest send of a batch
# (every attempt timing out and the waits between them), so that a live deliverer never loses a
# claim mid-send. ``claim_seconds`` lengthens it for many attempts or long channel timeouts.
CLAIM_SECONDS = 900.0


def claim_seconds(channel: Channel, policy: DeliveryPolicy) -> float:
    """How long to claim a batch for ``channel``: every attempt spending its channel timeout on
    each step of a send (an SMTP session has up to six), plus the longest wait after it."""
    timeout = channel.params.get("timeout")
    step = float(timeout) if isinstance(timeout, int | float) else 10.0
    return max(CLAIM_SECONDS, policy.attempts * (6 * step + policy.max_backoff))


@dataclass(frozen=True)
class ReportLinks:
    """Where the report site is written, and the URL it is served from when there is one."""

    site: Path
    base_url: str | None = None

    def link(self, comparison_id: int | None, run_id: int | None = None) -> str | None:
        """The comparison's page when the site has one, else the page of ``run_id`` (an
        operational alert's failed run), else the site's index; None without a site. With
        ``base_url`` the link is a URL that works away from this machine."""
        pages = [
            self.site / "compare" / f"compare-{comparison_id}.html" if comparison_id else None,
            self.site / "runs" / f"run-{run_id}.html" if isinstance(run_id, int) else None,
        ]
        found = [page for page in pages if page is not None and page.exists()]
        return self._address(found[0] if found else self.site / "index.html")

    def index(self) -> str | None:
        """The site's index, as :meth:`link` writes it; None before the site is written."""
        return self._address(self.site / "index.html")

    def _address(self, target: Path) -> str | None:
        if not target.exists():
            return None
        if self.base_url:
            return self.base_url.rstrip("/") + "/" + target.relative_to(self.site).as_posix()
        return str(target)


@dataclass(frozen=True)
class OutboxOutcome:
    """What happened to one batch: ``sent``, ``failed`` (still pending), ``no_channel`` or
    ``claimed`` (another deliverer is sending it: not this one's to report as failed)."""

    channel: str
    batch: int
    alerts: tuple[int, ...]
    events: tuple[str, ...]
    status: str
    attempts: int
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status == "sent"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["alerts"], data["events"] = list(self.alerts), list(self.events)
        return data


def notice_of(batch: OutboxBatch, links: ReportLinks | None) -> Notice:
    """The notice for a stored batch; report links are resolved now (the site may be newer)."""
    messages = []
    for entry in batch.entries:
        fields = dict(entry.message)
        comparison_id = fields.pop("comparison_id", None)
        run_id = fields.get("candidate_run")
        fields["report"] = links.link(comparison_id, run_id) if links is not None else None
        fields["index"] = links.index() if links is not None else None
        messages.append(AlertMessage.from_dict(fields))
    return Notice(tuple(messages), tuple(e.idempotency_key for e in batch.entries))


def deliver_outbox(
    store: Store,
    channels: Sequence[Channel],
    *,
    links: ReportLinks | None = None,
    policy: DeliveryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[OutboxOutcome]:
    """Seal new outbox rows into batches and deliver every pending batch (see the docstring)."""
    policy = policy or DeliveryPolicy()
    store.seal_outbox()
    by_name = {channel.name: channel for channel in channels}
    owner = f"{socket.gethostname()}:{os.getpid()}:d{uuid.uuid4().hex[:8]}"
    outcomes = []
    for batch in store.pending_batches():
        alerts = tuple(e.alert_id for e in batch.entries)
        events = tuple(e.event for e in batch.entries)
        channel = by_name.get(batch.channel)
        if channel is None:
            problem = f"no channel named '{batch.channel}' in the project file; kept pending"
            outcomes.append(
                OutboxOutcome(batch.channel, batch.batch, alerts, events, "no_channel", 0, problem)
            )
            continue
        refused = store.claim_batch(batch, owner, claim_seconds(channel, policy))
        if refused is not None:
            outcomes.append(
                OutboxOutcome(batch.channel, batch.batch, alerts, events, "claimed", 0, refused)
            )
            continue
        crash_point("claimed")
        result = deliver(channel, notice_of(batch, links), policy, sleep=sleep)
        crash_point("delivered")
        store.mark_outbox(batch, result, owner)
        outcomes.append(
            OutboxOutcome(
                batch.channel,
                batch.batch,
                alerts,
                events,
                result.status,
                result.attempts,
                result.error,
            )
        )
    return outcomes


def undelivered(outcomes: Sequence[OutboxOutcome]) -> list[OutboxOutcome]:
    """The batches a channel of the project did not accept (still in the outbox)."""
    return [o for o in outcomes if o.status == "failed"]
