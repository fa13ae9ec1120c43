"""Delivering a message to channels: retried with backoff, never raising.

The nightly job must finish (and store its runs and comparisons) even when a webhook is dead,
so ``deliver`` turns every failure into a ``DeliveryResult`` with ``status = "failed"`` and the
last error, for the store to record (``Store.record_delivery``).

Attempts and waits (attempt ``n`` = 0 after the first failure)::

    wait_n = min(max_backoff, max(backoff * 2**n, retry_after))

``backoff`` is the channel's own (its project-file table's ``backoff``, 1 s unless set) unless
the policy names one for every channel.

A permanent ``DeliveryError`` (HTTP 4xx, a refused login, an unset ``${ENV}``) stops at once;
any other exception a channel raises (a bug, an unwritable file) is recorded the same way and
not retried. ``KeyboardInterrupt`` and ``SystemExit`` still propagate: the user asked to stop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any

from evalplat.alerts.base import DEFAULT_BACKOFF, Channel, DeliveryError
from evalplat.alerts.message import AlertMessage
from evalplat.alerts.notice import Notice
from evalplat.errors import InputError


@dataclass(frozen=True)
class DeliveryPolicy:
    """``attempts`` in all (1 = no retry); waits as in the module docstring, in seconds.
    ``backoff = None``: each channel's own (``Channel.backoff``, see ``for_channel``)."""

    attempts: int = 3
    backoff: float | None = None
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise InputError(f"delivery attempts must be 1 or more, got {self.attempts}")
        if (self.backoff is not None and self.backoff < 0) or self.max_backoff < 0:
            raise InputError("delivery backoff must be 0 or more seconds")

    def for_channel(self, channel: Channel) -> DeliveryPolicy:
        """This policy with the channel's backoff, unless the policy names its own."""
        return self if self.backoff is not None else replace(self, backoff=channel.backoff)

    def wait(self, attempt: int, retry_after: float | None = None) -> float:
        backoff = DEFAULT_BACKOFF if self.backoff is None else self.backoff
        wait = backoff * 2.0**attempt
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(self.max_backoff, wait)


@dataclass(frozen=True)
class DeliveryResult:
    """What happened when one message went to one channel."""

    channel: str
    event: str
    status: str  # sent | failed
    attempts: int
    error: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        return self.status == "sent"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def deliver(
    channel: Channel,
    message: AlertMessage | Notice,
    policy: DeliveryPolicy | None = None,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> DeliveryResult:
    """Send ``message`` through ``channel`` with retries; never raises (see module docstring)."""
    notice = message if isinstance(message, Notice) else Notice.of(message)
    policy = (policy or DeliveryPolicy()).for_channel(channel)
    started = time.monotonic()
    error_text: str | None = None
    attempt = 0
    while attempt < policy.attempts:
        attempt += 1
        try:
            channel.send(notice)
        except DeliveryError as error:
            error_text = str(error)
            if not error.transient or attempt >= policy.attempts:
                break
            sleep(policy.wait(attempt - 1, error.retry_after))
            continue
        except Exception as error:  # the nightly job must survive any channel failure
            error_text = f"{type(error).__name__}: {error}"
            break
        return _result(channel, notice, "sent", attempt, None, started)
    return _result(channel, notice, "failed", attempt, error_text, started)


def deliver_all(
    channels: Iterable[Channel],
    message: AlertMessage,
    policy: DeliveryPolicy | None = None,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> list[DeliveryResult]:
    """``deliver`` to each channel in turn; one result per channel, in order."""
    return [deliver(channel, message, policy, sleep=sleep) for channel in channels]


def _result(
    channel: Channel,
    notice: Notice,
    status: str,
    attempts: int,
    error: str | None,
    started: float,
) -> DeliveryResult:
    return DeliveryResult(
        channel=channel.name,
        event=notice.event,
        status=status,
        attempts=attempts,
        error=error,
        seconds=round(time.monotonic() - started, 3),
    )
