"""One nightly at a time: a second holder waits, then gives up naming the first."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from evalplat.store import LockBusyError, Store


def test_second_holder_is_refused_while_the_first_holds_the_lock(db_url: str) -> None:
    first, second = Store.open(db_url), Store.open(db_url)
    try:
        with (
            first.lock("nightly"),
            pytest.raises(LockBusyError, match="another `nightly` is running"),
            second.lock("nightly", wait=0.3, poll=0.05),
        ):
            pass
        with second.lock("nightly", wait=0.3, poll=0.05):
            pass  # released: free again
    finally:
        first.close()
        second.close()


def test_waiting_holder_gets_the_lock_once_it_is_released(db_url: str) -> None:
    first, second = Store.open(db_url), Store.open(db_url)
    released = threading.Event()
    acquired: list[bool] = []

    def later() -> None:
        with second.lock("nightly", wait=5, poll=0.05):
            acquired.append(released.is_set())

    try:
        with first.lock("nightly"):
            waiter = threading.Thread(target=later)
            waiter.start()
            threading.Event().wait(0.3)
            released.set()
        waiter.join(timeout=10)
        assert acquired == [True]
    finally:
        first.close()
        second.close()


def test_expired_lock_row_of_a_dead_process_is_taken_over_on_sqlite(tmp_path: Path) -> None:
    # PostgreSQL needs no such rule: the server drops a dead session's advisory locks.
    store = Store.init(f"sqlite:///{tmp_path / 'locks.db'}")
    try:
        assert store._take_row("nightly", "dead-host:1", ttl=-1)  # already expired
        with store.lock("nightly", wait=0.5, poll=0.05):
            pass
    finally:
        store.close()
