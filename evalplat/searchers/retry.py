"""Retrying transient search failures, and a rate limit shared by the runner's threads.

Backoff (attempt ``n`` = 0 for the first retry), "full jitter" as in the AWS architecture blog:

    cap_n   = min(max_backoff, backoff * 2**n)
    delay_n = uniform(0, cap_n)      with jitter, else cap_n
    delay_n = min(max_backoff, max(delay_n, retry_after))   when the backend sent Retry-After

Full jitter spreads the retries of many threads hitting the same overloaded backend instead of
having them come back in lock step. ``max_backoff`` bounds every wait, a server's
``Retry-After`` included, so one query never stalls a run longer than
``retries * max_backoff`` seconds of sleeping.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from evalplat.errors import InputError
from evalplat.searchers.base import TransientSearchError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a ``TransientSearchError``.

    ``retries`` is the number of retries after the first attempt (0 = try once).
    """

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    jitter: bool = True

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise InputError(f"retries must be 0 or more, got {self.retries}")
        if self.backoff < 0 or self.max_backoff < 0:
            raise InputError("backoff and max_backoff must be 0 or more seconds")

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        uniform: Callable[[float, float], float] = random.uniform,
    ) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based); formula in the module doc."""
        cap = min(self.max_backoff, self.backoff * 2.0**attempt)
        wait = uniform(0.0, cap) if self.jitter else cap
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(self.max_backoff, max(0.0, wait))


def call_with_retries(
    fn: Callable[[], T],
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[int, TransientSearchError, float], None] | None = None,
    uniform: Callable[[float, float], float] = random.uniform,
) -> T:
    """Call ``fn``; on ``TransientSearchError`` wait and call again, up to ``policy.retries``.

    ``on_retry(attempt, error, delay)`` is called before each wait (for logs and counters).
    The last error is re-raised when retries are exhausted; ``SearchError`` (permanent) and any
    other exception propagate at once.
    """
    attempt = 0
    while True:
        try:
            return fn()
        except TransientSearchError as error:
            if attempt >= policy.retries:
                raise
            wait = policy.delay(attempt, error.retry_after, uniform)
            if on_retry is not None:
                on_retry(attempt, error, wait)
            sleep(wait)
            attempt += 1


class RateLimiter:
    """A token bucket: on average at most ``rate`` calls per second, bursts up to ``burst``.

    ``acquire`` reserves a token under a lock and sleeps outside it, so threads queue in arrival
    order without holding the lock while waiting. The bucket starts full.
    """

    def __init__(
        self,
        rate: float,
        burst: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:  # NaN too
            raise InputError(f"rate limit must be more than 0 requests per second, got {rate}")
        if burst < 1:
            raise InputError(f"rate limit burst must be at least 1, got {burst}")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = burst
        self._updated = clock()

    def acquire(self) -> float:
        """Take one token, waiting if none is left; return the seconds waited."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
            self._updated = now
            # Taking the token may leave a debt (negative balance) that later callers repay by
            # waiting longer: that is how concurrent reservations stay spaced 1/rate apart.
            self._tokens -= 1.0
            wait = 0.0 if self._tokens >= 0 else -self._tokens / self.rate
        if wait > 0:
            self._sleep(wait)
        return wait
