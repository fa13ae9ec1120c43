"""Named locks across processes: one nightly at a time per database.

PostgreSQL has session-level advisory locks, released by the server if the holder dies. SQLite has
none, so a row in ``lock`` stands for the lock, with an expiry refreshed while it is held: a row
left by a killed process expires and is taken over. A row whose holder ran on this host under a
PID that no longer exists is taken over at once, without waiting for the expiry.
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

from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import IntegrityError

from evalplat.db.models import Lock
from evalplat.errors import OperationalError
from evalplat.store.base import StoreBase, utcnow


class LockBusyError(OperationalError):
    """Another process holds the lock."""


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
        while not self._take_row(name, holder, ttl):
            if time.monotonic() >= deadline:
                raise LockBusyError(
                    f"another `{name}` is running (held by {self._holder(name)}); "
                    "try again when it has finished"
                )
            time.sleep(poll)
        stop = threading.Event()
        keeper = threading.Thread(
            target=self._keep_row, args=(name, holder, ttl, stop), daemon=True
        )
        keeper.start()
        try:
            yield
        finally:
            stop.set()
            keeper.join()
            with self.session() as session:
                session.execute(delete(Lock).where(Lock.name == name, Lock.holder == holder))

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

    def _keep_row(self, name: str, holder: str, ttl: float, stop: threading.Event) -> None:
        while not stop.wait(ttl / 4):
            with self.session() as session:
                session.execute(
                    update(Lock)
                    .where(Lock.name == name, Lock.holder == holder)
                    .values(expires_at=utcnow() + timedelta(seconds=ttl))
                )

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
