"""Named locks across processes: one nightly at a time per database.

PostgreSQL has session-level advisory locks, released by the server if the holder dies. SQLite has
none, so a row in ``lock`` stands for the lock, with an expiry refreshed while it is held: a row
left by a killed process expires and is taken over. A row whose holder ran on this host under a
PID that no longer exists is taken over at once, without waiting for the expiry.

The keeper (a thread) refreshes the row every quarter of its time to live. Another writer may
hold the SQLite file longer than the busy timeout; a refresh that fails is tried again, each try
waiting no longer than the time left before the expiry, until the expiry is near. A lock that
could not be refreshed in time, or whose row another process has taken, is lost: the keeper sets
``Store.lock_lost`` (``LockLostError``), every later write of the store fails with it, and
``check_lock`` raises it, so the holder stops at its next step with one line, exit 3, instead of
running alongside the next holder.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import IntegrityError

from evalplat.db.operations import Lock
from evalplat.errors import OperationalError
from evalplat.store.base import StoreBase, utcnow


class LockBusyError(OperationalError):
    """Another process holds the lock."""


class LockLostError(OperationalError):
    """A lock this process held could not be kept (see the module docstring)."""


class LocksMixin(StoreBase):
    @contextmanager
    def lock(
        self, name: str, *, wait: float = 10.0, ttl: float = 120.0, poll: float = 0.5
    ) -> Iterator[None]:
        """Hold lock ``name`` for the ``with`` block; wait up to ``wait`` seconds for it.

        Raises ``LockBusyError`` naming the holder when it stays taken.
        """
        holder = f"{socket.gethostname()}:{os.getpid()}"
        if self.engine.dialect.name == "postgresql":
            with self._advisory_lock(name, wait, poll):
                yield
            return
        deadline = time.monotonic() + wait
        while True:
            taken = time.monotonic()
            if self._take_row(name, holder, ttl):
                break
            if time.monotonic() >= deadline:
                raise LockBusyError(
                    f"another `{name}` is running (held by {self._holder(name)}); "
                    "try again when it has finished"
                )
            time.sleep(poll)
        stop = threading.Event()
        keeper = threading.Thread(
            target=self._keep_row, args=(name, holder, ttl, taken, stop), daemon=True
        )
        keeper.start()
        failed = True
        try:
            yield
            failed = False
        finally:
            stop.set()
            keeper.join()
            lost, self.lock_lost = self.lock_lost, None
            try:
                with self.session() as session:
                    session.execute(delete(Lock).where(Lock.name == name, Lock.holder == holder))
            except OperationalError:
                if not failed and lost is None:
                    raise
                # already failing: the row expires on its own, and that error is the story
        if lost is not None:  # the block finished, but not under the lock all along
            raise lost

    def check_lock(self) -> None:
        """Raise ``LockLostError`` when a lock of this store could not be kept."""
        if self.lock_lost is not None:
            raise LockLostError(str(self.lock_lost))

    @contextmanager
    def _advisory_lock(self, name: str, wait: float, poll: float) -> Iterator[None]:
        deadline = time.monotonic() + wait
        with self.engine.connect() as connection:
            # Advisory locks are server-wide: key them by database too, so that two evalplat
            # databases on one server do not keep each other's nightly waiting.
            database = connection.execute(text("SELECT current_database()")).scalar_one()
            digest = hashlib.sha256(f"{database}\0{name}".encode()).digest()
            key = int.from_bytes(digest[:8], "big", signed=True)
            while not connection.execute(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": key}
            ).scalar_one():
                connection.rollback()
                if time.monotonic() >= deadline:
                    raise LockBusyError(
                        f"another `{name}` is running on this database; "
                        "try again when it has finished"
                    )
                time.sleep(poll)
            connection.commit()
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
                connection.commit()

    def _take_row(self, name: str, holder: str, ttl: float) -> bool:
        now = utcnow()
        try:
            with self.session(write=True) as session:
                session.execute(delete(Lock).where(Lock.name == name, Lock.expires_at < now))
                current = session.scalar(select(Lock.holder).where(Lock.name == name))
                if current is not None and holder_is_dead(current):
                    session.execute(delete(Lock).where(Lock.name == name, Lock.holder == current))
                session.add(
                    Lock(
                        name=name,
                        holder=holder,
                        acquired_at=now,
                        expires_at=now + timedelta(seconds=ttl),
                    )
                )
        except IntegrityError:
            return False
        return True

    def _keep_row(
        self, name: str, holder: str, ttl: float, taken: float, stop: threading.Event
    ) -> None:
        """Refresh the row until ``stop``; on failure retry until the expiry is near, then mark
        the lock lost (see the module docstring). Never raises: it runs in its own thread.
        ``taken`` is when the row was written (``time.monotonic``)."""
        expires = taken + ttl  # no later than the row's own expiry
        margin = min(1.0, ttl / 10)  # stop trying this long before the expiry
        pause = ttl / 4
        problem = "it was not refreshed"
        while not stop.wait(pause):
            started = time.monotonic()
            left = expires - started - margin
            if left <= 0:
                self._lose(name, f"it could not be refreshed before it expired ({problem})")
                return
            try:
                kept = self._refresh_row(name, holder, ttl, min(left, self._busy_timeout()))
            except Exception as error:  # busy, locked, unreachable: tried again until expiry
                problem = str(error).splitlines()[0] if str(error) else type(error).__name__
                pause = min(ttl / 20, 1.0)
                continue
            if not kept:
                self._lose(name, "another process took it over after it expired")
                return
            expires, pause = started + ttl, ttl / 4

    def _refresh_row(self, name: str, holder: str, ttl: float, busy_wait: float) -> bool:
        """Push the row's expiry on; False when the row is no longer this holder's."""
        with self.session() as session:
            # wait for another writer no longer than the lock has left
            session.execute(text(f"PRAGMA busy_timeout = {max(1, int(busy_wait * 1000))}"))
            done: Any = session.execute(
                update(Lock)
                .where(Lock.name == name, Lock.holder == holder)
                .values(expires_at=utcnow() + timedelta(seconds=ttl))
            )
            return bool(done.rowcount)

    def _lose(self, name: str, why: str) -> None:
        self.lock_lost = LockLostError(
            f"lost the `{name}` lock: {why}; stopped so that another `{name}` cannot run "
            "alongside this one"
        )

    def _busy_timeout(self) -> float:
        """Seconds this store's SQLite connections wait for another writer."""
        from evalplat.db.engine import BUSY_TIMEOUT

        value = self.engine.url.query.get("timeout")
        try:
            return float(value) if isinstance(value, str) else BUSY_TIMEOUT
        except ValueError:
            return BUSY_TIMEOUT

    def _holder(self, name: str) -> str:
        with self.session() as session:
            holder = session.scalar(select(Lock.holder).where(Lock.name == name))
        return holder or "another process"


def holder_is_dead(holder: str) -> bool:
    """True when ``holder`` (``host:pid``, or ``host:pid:token``) names this host and a process
    that has exited."""
    host, _, pid_text = holder.rpartition(":")
    if not pid_text.isdigit():  # host:pid:token
        host, _, pid_text = host.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False  # alive under another user (or not a PID at all): leave it to expire
    return False
