"""One nightly at a time: a second holder waits, then gives up naming the first."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from evalplat.errors import NotFoundError
from evalplat.store import LockBusyError, LockLostError, Store
from evalplat.testsets.content import TestSetContent


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


# ── the keeper and a busy SQLite file ────────────────────────────────────────────────────────


def _hold_file(path: Path, seconds: float) -> None:
    """Be another writer: hold the SQLite file's write lock for ``seconds``."""
    import sqlite3
    import time

    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        time.sleep(seconds)
        connection.execute("COMMIT")
    finally:
        connection.close()


def _one_query() -> TestSetContent:
    queries = pd.DataFrame(
        {"query_id": ["q1"], "text": ["t"], "weight": [float("nan")], "tags": [None]}
    )
    judgments = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "grade": [1], "source": [None]})
    judgments["grade"] = judgments["grade"].astype("int64")
    return TestSetContent(queries=queries, judgments=judgments)


def _expiry(store: Store) -> datetime:
    from sqlalchemy import select

    from evalplat.db.operations import Lock

    with store.session() as session:
        return session.scalars(select(Lock.expires_at).where(Lock.name == "nightly")).one()


@pytest.fixture
def busy_sqlite(tmp_path: Path) -> tuple[Path, str]:
    """A SQLite file whose connections wait only 0.2 s for another writer."""
    path = tmp_path / "locks.db"
    Store.init(f"sqlite:///{path}").close()
    return path, f"sqlite:///{path}?timeout=0.2"


@pytest.fixture
def thread_errors(monkeypatch: pytest.MonkeyPatch) -> list[BaseException | None]:
    """Exceptions that escaped a thread (a keeper that died)."""
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    return errors


def test_the_keeper_keeps_the_lock_through_a_writer_holding_the_file_past_the_busy_timeout(
    busy_sqlite: tuple[Path, str], thread_errors: list[BaseException | None]
) -> None:
    import time

    path, url = busy_sqlite
    store, other = Store.open(url), Store.open(url)
    try:
        with store.lock("nightly", ttl=2.0):
            first = _expiry(store)
            # Refreshes fall due at 0.5 s and 1 s, each waits 0.2 s for the file: both fail.
            _hold_file(path, 1.2)
            time.sleep(1.3)  # past the first expiry: kept only if a refresh got through since
            assert _expiry(store) > first + timedelta(seconds=1)
            assert store.lock_lost is None
            with pytest.raises(LockBusyError), other.lock("nightly", wait=0):
                pass
            store.check_lock()
            store.import_test_set("after", _one_query())  # the holder still writes
        assert thread_errors == []
    finally:
        store.close()
        other.close()


def test_a_lock_that_expires_unrefreshed_is_lost_and_no_later_write_commits(
    busy_sqlite: tuple[Path, str], thread_errors: list[BaseException | None]
) -> None:
    path, url = busy_sqlite
    store, other = Store.open(url), Store.open(url)
    try:
        with (
            pytest.raises(LockLostError, match="lost the `nightly` lock") as lost,
            store.lock("nightly", ttl=1.0),
        ):
            _hold_file(path, 2.0)  # past the lock's whole life
            with pytest.raises(LockLostError, match="could not be refreshed before"):
                store.check_lock()
            with pytest.raises(LockLostError):
                store.import_test_set("late", _one_query())
            # what the keeper guarded against: the expired lock is free for another
            with other.lock("nightly", wait=0):
                pass
        assert "\n" not in str(lost.value)
        assert thread_errors == []
        with pytest.raises(NotFoundError):  # the write after the loss was rolled back
            other.test_set_versions("late")
        with store.lock("nightly", ttl=5.0):  # free again, and the store writes again
            store.import_test_set("again", _one_query())
    finally:
        store.close()
        other.close()
