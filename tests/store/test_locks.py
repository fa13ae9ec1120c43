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


HOLDER = """
import sys, time
from evalplat.store import Store
store = Store.open(sys.argv[1])
with store.lock("nightly"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_lock_of_a_killed_process_on_this_host_is_taken_over_at_once(db_url: str) -> None:
    """SIGKILL leaves the SQLite row behind (its expiry is two minutes away); its PID is gone,
    so the next holder takes it without waiting. PostgreSQL drops the advisory lock itself."""
    import signal
    import subprocess
    import sys

    command = [sys.executable, "-c", HOLDER, db_url]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait()
    store = Store.open(db_url)
    try:
        wait = 0.0 if db_url.startswith("sqlite") else 30.0  # the server notices the dead socket
        with store.lock("nightly", wait=wait, poll=0.05):
            pass
    finally:
        store.close()


def test_lock_of_a_live_process_on_this_host_is_not_taken(tmp_path: Path) -> None:
    import os
    import socket

    store = Store.init(f"sqlite:///{tmp_path / 'locks.db'}")
    try:
        assert store._take_row("nightly", f"{socket.gethostname()}:{os.getppid()}", ttl=120)
        with pytest.raises(LockBusyError), store.lock("nightly", wait=0, poll=0.05):
            pass
    finally:
        store.close()
