"""Retry policy arithmetic and the token-bucket rate limiter, with a fake clock and sleep."""

from __future__ import annotations

import threading

import pytest

from evalplat.errors import InputError
from evalplat.searchers import (
    RateLimiter,
    RetryPolicy,
    SearchError,
    TransientSearchError,
    call_with_retries,
)


class FlakyBackend:
    """Fails with the given errors in turn, then answers."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "answer"


def test_without_jitter_delays_double_up_to_the_cap() -> None:
    policy = RetryPolicy(retries=6, backoff=0.5, max_backoff=4, jitter=False)
    assert [policy.delay(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_full_jitter_draws_between_zero_and_the_capped_backoff() -> None:
    policy = RetryPolicy(backoff=1, max_backoff=5)
    bounds: list[tuple[float, float]] = []

    def uniform(low: float, high: float) -> float:
        bounds.append((low, high))
        return high * 0.25

    delays = [policy.delay(n, uniform=uniform) for n in range(4)]
    assert bounds == [(0.0, 1.0), (0.0, 2.0), (0.0, 4.0), (0.0, 5.0)]
    assert delays == [0.25, 0.5, 1.0, 1.25]


def test_retry_after_is_honoured_but_bounded_by_max_backoff() -> None:
    policy = RetryPolicy(backoff=0.5, max_backoff=10, jitter=False)
    assert policy.delay(0, retry_after=3) == 3
    assert policy.delay(3, retry_after=1) == 4  # the backoff is longer than the hint
    assert policy.delay(0, retry_after=120) == 10


def test_transient_errors_are_retried_until_an_answer() -> None:
    backend = FlakyBackend(TransientSearchError("503"), TransientSearchError("timeout"))
    slept: list[float] = []
    result = call_with_retries(backend, RetryPolicy(jitter=False), sleep=slept.append)
    assert result == "answer"
    assert backend.calls == 3
    assert slept == [0.5, 1.0]


def test_retry_after_from_the_error_sets_the_wait() -> None:
    backend = FlakyBackend(TransientSearchError("429", retry_after=7))
    slept: list[float] = []
    call_with_retries(backend, RetryPolicy(jitter=False), sleep=slept.append)
    assert slept == [7]


def test_exhausted_retries_raise_the_last_error() -> None:
    errors = [TransientSearchError(f"attempt {n}") for n in range(4)]
    backend = FlakyBackend(*errors)
    slept: list[float] = []
    with pytest.raises(TransientSearchError, match="attempt 3"):
        call_with_retries(backend, RetryPolicy(retries=3, jitter=False), sleep=slept.append)
    assert backend.calls == 4
    assert len(slept) == 3


def test_permanent_errors_are_not_retried() -> None:
    backend = FlakyBackend(SearchError("HTTP 400"))
    slept: list[float] = []
    with pytest.raises(SearchError, match="HTTP 400"):
        call_with_retries(backend, RetryPolicy(), sleep=slept.append)
    assert backend.calls == 1
    assert slept == []


def test_on_retry_sees_attempt_error_and_delay() -> None:
    error = TransientSearchError("reset")
    seen: list[tuple[int, Exception, float]] = []
    call_with_retries(
        FlakyBackend(error),
        RetryPolicy(jitter=False),
        sleep=lambda _: None,
        on_retry=lambda attempt, err, delay: seen.append((attempt, err, delay)),
    )
    assert seen == [(0, error, 0.5)]


def test_negative_retries_are_refused() -> None:
    with pytest.raises(InputError, match="retries"):
        RetryPolicy(retries=-1)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


def test_rate_limiter_spaces_calls_one_over_rate_apart() -> None:
    clock = FakeClock()
    limiter = RateLimiter(4, clock=clock, sleep=clock.sleep)
    waits = [limiter.acquire() for _ in range(5)]
    assert waits == [0.0, 0.25, 0.25, 0.25, 0.25]
    assert clock.now == pytest.approx(101.0)


def test_rate_limiter_allows_a_burst_then_refills_with_time() -> None:
    clock = FakeClock()
    limiter = RateLimiter(2, burst=3, clock=clock, sleep=lambda _: None)
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire() == pytest.approx(0.5)
    clock.now += 10  # a long pause refills to the burst size, not beyond
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire() > 0


def test_rate_limiter_queues_concurrent_threads_without_double_booking() -> None:
    clock = FakeClock()
    waits: list[float] = []
    lock = threading.Lock()
    limiter = RateLimiter(10, clock=clock, sleep=lambda _: None)

    def worker() -> None:
        wait = limiter.acquire()
        with lock:
            waits.append(wait)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # The clock never moves, so each reservation waits one slot longer than the previous.
    assert sorted(waits) == pytest.approx([n / 10 for n in range(8)])


def test_rate_limiter_refuses_a_non_positive_rate() -> None:
    with pytest.raises(InputError, match="rate limit"):
        RateLimiter(0)
