"""The store's core: one engine, sessions, and the schema check done on open."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from sqlalchemy import Engine, event, text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine, describe_url, resolve_url, sqlite_file
from evalplat.db.errors import is_database_error, translate
from evalplat.db.faults import crash_point
from evalplat.db.sqlite_stage import remove_leftovers
from evalplat.errors import (
    DatabaseUnavailableError,
    EvalplatError,
    OperationalError,
    SchemaOutdatedError,
)


def utcnow() -> datetime:
    return datetime.now(UTC)


class StoreBase:
    """Holds the engine; subclasses (mixins in this package) add the verbs."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.url = str(engine.url)
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        event.listen(self._sessions, "after_flush", _note_flush)
        event.listen(self._sessions, "do_orm_execute", _note_write)
        self.migrated: tuple[str | None, str | None] | None = None
        self.read_only = False
        # set when a lock this store holds could not be kept (``evalplat.store.locks``): from
        # then on no write of this store commits
        self.lock_lost: OperationalError | None = None
        # run id -> (status and finish time when read, results frame): see ``load_results``
        self._results_cache: dict[int, tuple[Any, Any]] = {}
        # (run id, results) of a running run read whole to be scored: see ``finish_run``
        self._scored_results: tuple[int, Any] | None = None
        # (key, top k of the configs' latest runs), (key, their scores): see ``QueryHealthMixin``
        self._top_cache: tuple[Any, Any] | None = None
        self._peers_cache: tuple[Any, Any] | None = None
        # ((version id, (hash, creation time)), its queries frame): see ``QueryHealthMixin``
        self._queries_cache: tuple[Any, Any] | None = None
        # test set version id -> (its hash and creation time, judgments): see ``_judgments``
        self._judgments_cache: dict[int, tuple[Any, Any]] = {}
        # ((version id, hash, creation time), its judgments coded): see ``_judged_ids``
        self._judged_ids_cache: tuple[Any, Any] | None = None
        # (version and what was read, content) of the last test set loaded: ``load_test_set``
        self._content_cache: tuple[Any, Any] | None = None
        # an SQLite connection held open and idle while the store is (``_hold_sqlite_open``);
        # None until the first session, False when there is none to hold
        self._keeper: Any = None

    def _judgments(self, session: Session, version: Any) -> Any:
        """The ``judgment`` rows of ``version`` (a ``TestSetVersion``): ``query_id, doc_id,
        grade, source`` by query then document.

        A version's judgments never change, and one command reads them for several steps (the
        grade views, the optimistic bound, the page), so the last version read is kept, keyed
        by its hash and creation time (a deleted version's id may be reused). The frame is
        shared: callers must not modify it in place."""
        from sqlalchemy import select

        from evalplat.db.bulk import read_frame
        from evalplat.db.models import Judgment
        from evalplat.store.copies import read_judgments

        stamp = (version.content_hash, version.created_at)
        cached = self._judgments_cache.get(version.id)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        types = {"query_id": "str", "doc_id": "str", "grade": "int64", "source": "str"}
        frame = read_judgments(session, version.id, types)
        if frame is None:  # imported before versions kept a copy
            frame = read_frame(
                session,
                select(Judgment.query_id, Judgment.doc_id, Judgment.grade, Judgment.source)
                .where(Judgment.test_set_version_id == version.id)
                .order_by(Judgment.query_id, Judgment.doc_id),
                list(types),
                types,
            )
        if not session.info.get("wrote"):  # committed rows only
            self._judgments_cache = {version.id: (stamp, frame)}
        return frame

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        project_file: Path | None = None,
        check: bool = True,
        read_only: bool = False,
    ) -> Self:
        """Open the database at ``url`` (resolved by the documented precedence).

        With ``check`` (the default) a database whose schema is not this evalplat's raises
        ``SchemaOutdatedError`` telling the user what to run. ``read_only`` opens it so that
        nothing can be written (SQLite ``mode=ro``, PostgreSQL read-only transactions): the
        reading commands open it so; a SQLite file this process cannot write is opened so
        whatever is asked.
        """
        resolved = resolve_url(url, project_file)
        missing = sqlite_file(resolved)
        if missing is not None and not missing.exists():
            raise SchemaOutdatedError(
                f"database file {missing} does not exist: run `evalplat init` to create it"
            )
        read_only = read_only or (missing is not None and not _writable(missing))
        store = cls(create_db_engine(resolved, read_only=read_only))
        if read_only:
            store.url = describe_url(resolved)
            store.read_only = True
        if check:
            try:
                migrate.ensure_current(store.engine)
            except BaseException:
                store.close()
                raise
        return store

    @classmethod
    def init(cls, url: str | None = None, *, project_file: Path | None = None) -> Self:
        """Create or upgrade the database to this evalplat's schema (idempotent).

        ``store.migrated`` tells the schema revision before and after.
        """
        store = cls(create_db_engine(resolve_url(url, project_file)))
        store.migrated = migrate.upgrade(store.engine)
        return store

    @property
    def description(self) -> str:
        return describe_url(self.url)

    @contextmanager
    def session(self, *, write: bool = False) -> Iterator[Session]:
        """A session in one transaction: committed on success, rolled back on any error.

        ``write=True`` takes SQLite's write lock at the start (``BEGIN IMMEDIATE``), for a
        transaction that reads and then writes according to what it read (the next version
        number of a name): two such writers run one after the other instead of both reading
        the same state. A writer waits for the lock up to the busy timeout. Database failures
        (locked, full, read-only, unreachable) become one-line evalplat errors; unique-key
        conflicts stay ``IntegrityError`` for callers that expect them.

        Every commit that wrote something is a crash point (``evalplat.db.faults``) for the
        crash-recovery tests. Once a lock this store holds is lost (``lock_lost``), a session
        that wrote is rolled back with that error instead of committed.
        """
        if self._keeper is None:
            self._hold_sqlite_open()
        session = self._sessions()
        try:
            with session.begin():
                if write and self.engine.dialect.name == "sqlite":
                    session.execute(text("BEGIN IMMEDIATE"))
                yield session
                if self.lock_lost is not None:
                    session.flush()
                    if session.info.get("wrote"):
                        raise type(self.lock_lost)(str(self.lock_lost))
            if session.info.pop("wrote", False):
                crash_point("commit")
        except IntegrityError:
            raise
        except DBAPIError as error:
            if error.connection_invalidated or _is_connect_error(error):
                raise DatabaseUnavailableError(
                    f"database {self.description} became unreachable: {_first_line(error)}"
                ) from None
            raise translate(error, f"database {self.description}") from None
        except Exception as error:
            if is_database_error(error) and not isinstance(error, EvalplatError):
                raise translate(error, f"database {self.description}") from None
            raise
        finally:
            session.close()
            remove_leftovers(session.info)

    def _hold_sqlite_open(self) -> None:
        """Keep one connection to an SQLite file open, idle, for the store's life.

        Sessions take their connections from the engine's pool, which closes those it has no
        room to keep (``evalplat.db.engine``). When the last connection to the file closes,
        SQLite checkpoints the write-ahead log into the database, syncs it and deletes the log,
        and the next connection creates it again: a run that commits a batch of results and
        refreshes its heartbeat many times paid that on each commit while every session opened
        its own. With this connection open the others close without it; SQLite still checkpoints
        as the log grows (``wal_autocheckpoint``), and the last close (``close``) leaves the
        database whole in one file. It never begins a transaction, so it holds no lock and no
        snapshot that would keep other writers or the checkpoint waiting. A plain connection of
        the driver, outside the engine's pool: nothing else uses it.
        """
        import sqlite3

        database = sqlite_file(self.url)
        if self.read_only or database is None or not database.exists():
            self._keeper = False
            return
        keeper = sqlite3.connect(database, check_same_thread=False)
        try:
            # a first read puts it in write-ahead-log mode, in which it keeps the shared lock
            # that tells the other connections' close they are not the last
            keeper.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.Error:
            keeper.close()
            self._keeper = False
            return
        self._keeper = keeper

    def close(self) -> None:
        keeper, self._keeper = self._keeper, False
        if keeper:
            keeper.close()
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _note_flush(session: Session, _context: Any) -> None:
    session.info["wrote"] = True


def _note_write(state: ORMExecuteState) -> None:
    if state.is_insert or state.is_update or state.is_delete:
        state.session.info["wrote"] = True


def _writable(path: Path) -> bool:
    """Whether a SQLite file can be written: the file, and its folder for the WAL files."""
    return os.access(path, os.W_OK) and os.access(path.resolve().parent, os.W_OK)


def claim_name(session: Session, model: Any, name: str) -> Any:
    """The row of ``model`` (a table with ``name`` and ``created_at``) named ``name``, created
    if new and locked for the rest of the transaction.

    Concurrent writers of one new name both get the same row: the insert does nothing when the
    name exists (PostgreSQL waits for the other transaction to commit first), and ``FOR
    UPDATE`` makes the second writer wait until the first has added its version. SQLite gets
    the same order from ``session(write=True)``.
    """
    from sqlalchemy import select
    from sqlalchemy.dialects import postgresql, sqlite

    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    session.execute(
        insert(model)
        .values(name=name, created_at=utcnow())
        .on_conflict_do_nothing(index_elements=["name"])
    )
    return session.scalar(select(model).where(model.name == name).with_for_update())


def _first_line(error: DBAPIError) -> str:
    text = str(error.orig) if error.orig is not None else str(error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def _is_connect_error(error: DBAPIError) -> bool:
    name = type(error.orig).__name__ if error.orig is not None else ""
    return name in {"OperationalError"} and "connect" in str(error.orig).lower()
