"""The store's core: one engine, sessions, and the schema check done on open."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine, describe_url, resolve_url, sqlite_file
from evalplat.errors import DatabaseUnavailableError, SchemaOutdatedError
from evalplat.faults import crash_point


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

    @classmethod
    def open(
        cls, url: str | None = None, *, project_file: Path | None = None, check: bool = True
    ) -> Self:
        """Open the database at ``url`` (resolved by the documented precedence).

        With ``check`` (the default) a database whose schema is not this evalplat's raises
        ``SchemaOutdatedError`` telling the user what to run.
        """
        resolved = resolve_url(url, project_file)
        missing = sqlite_file(resolved)
        if missing is not None and not missing.exists():
            raise SchemaOutdatedError(
                f"database file {missing} does not exist: run `evalplat init` to create it"
            )
        store = cls(create_db_engine(resolved))
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
    def session(self) -> Iterator[Session]:
        """A session in one transaction: committed on success, rolled back on any error.

        Every commit that wrote something is a crash point (``evalplat.faults``) for the
        crash-recovery tests.
        """
        session = self._sessions()
        try:
            with session.begin():
                yield session
            if session.info.pop("wrote", False):
                crash_point("commit")
        except DBAPIError as error:
            if error.connection_invalidated or _is_connect_error(error):
                raise DatabaseUnavailableError(
                    f"database {self.description} became unreachable: {_first_line(error)}"
                ) from None
            raise
        finally:
            session.close()

    def close(self) -> None:
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


def _first_line(error: DBAPIError) -> str:
    text = str(error.orig) if error.orig is not None else str(error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def _is_connect_error(error: DBAPIError) -> bool:
    name = type(error.orig).__name__ if error.orig is not None else ""
    return name in {"OperationalError"} and "connect" in str(error.orig).lower()
