"""Database URL resolution and engine creation.

URL precedence (PRODUCT.md): ``--db`` > ``EVALPLAT_DATABASE_URL`` > project file >
``sqlite:///evalplat.db``. No engine is created at import time.
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import NullPool

from evalplat.errors import InputError

DEFAULT_URL = "sqlite:///evalplat.db"
ENV_VAR = "EVALPLAT_DATABASE_URL"
PROJECT_FILE = "evalplat.toml"
BACKENDS = ("sqlite", "postgresql")
_PG_READ_ONLY = "-c default_transaction_read_only=on"
BUSY_TIMEOUT = 30.0  # seconds a SQLite writer waits for another writer's lock


def resolve_url(cli_url: str | None = None, project_file: Path | None = None) -> str:
    """Pick the database URL by the documented precedence.

    A relative SQLite path in a project file is taken relative to that file, so a project
    works from any directory; on the command line or in the environment it is relative to the
    working directory, as a user typing it expects.
    """
    if cli_url:
        return normalise_url(cli_url)
    env_url = os.environ.get(ENV_VAR)
    if env_url:
        return normalise_url(env_url)
    path = project_file if project_file is not None else Path(PROJECT_FILE)
    if path.is_file():
        try:
            project = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise InputError(f"not a valid TOML file: {error}", path=path) from None
        url = project.get("database", {}).get("url")
        if url:
            # A password may come from the environment: expanded here, at use, never stored.
            from evalplat.inputs.env import expand_env

            expanded = expand_env(str(url))
            return _relative_to(normalise_url(expanded), path.resolve().parent)
    return DEFAULT_URL


def normalise_url(url: str) -> str:
    """Accept the common short forms: ``postgresql://`` means psycopg 3, a bare path SQLite.

    Anything that is not a SQLite or PostgreSQL URL is an ``InputError`` (exit 2).
    """
    if "\x00" in url:
        raise InputError("not a database URL: it contains a NUL character")
    if "://" not in url:
        url = f"sqlite:///{url}"
    elif url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    parsed = parse_url(url)
    if parsed.get_backend_name() not in BACKENDS:
        raise InputError(
            f"not a database URL evalplat can use: {parsed.render_as_string(hide_password=True)!r}"
            " (sqlite:///PATH or postgresql://USER@HOST/DB)"
        )
    return url


def parse_url(url: str) -> URL:
    """``make_url`` with a malformed URL as an ``InputError`` (the text is not repeated in
    full: it may hold a password)."""
    try:
        return make_url(url)
    except (ArgumentError, ValueError):
        scheme = url.split("://", 1)[0] if "://" in url else url[:20]
        raise InputError(f"not a database URL: {scheme}://... cannot be parsed") from None


def _relative_to(url: str, folder: Path) -> str:
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return url
    if parsed.database == ":memory:" or Path(parsed.database).is_absolute():
        return url
    return parsed.set(database=str(folder / parsed.database)).render_as_string(hide_password=False)


def create_db_engine(url: str, *, read_only: bool = False) -> Engine:
    """Create an engine with evalplat's connection settings for the backend.

    SQLite waits up to ``BUSY_TIMEOUT`` seconds for another writer's lock (``?timeout=N`` in
    the URL sets another wait), then fails with "database is locked". ``read_only=True``
    opens a SQLite file that cannot be written (``mode=ro``): reading commands work, writes
    fail with one line; on PostgreSQL it makes every transaction read-only
    (``default_transaction_read_only``).
    """
    parsed = parse_url(normalise_url(url))
    backend = parsed.get_backend_name()
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        # A file's connections are kept in a pool, each used by one thread at a time: opening
        # one with its settings has a cost, and a night opens thousands of sessions.
        # A connection back in the pool holds no transaction, so other processes' commits are
        # seen by its next one. An in-memory database has no file to share: one per session.
        in_memory = parsed.database in (None, "", ":memory:")
        if in_memory:
            kwargs["poolclass"] = NullPool
        kwargs["connect_args"] = {} if "timeout" in parsed.query else {"timeout": BUSY_TIMEOUT}
        if read_only and not in_memory:
            path = Path(parsed.database or "").resolve()
            # Without write access to the folder SQLite cannot create the WAL index it reads
            # through; a file nobody can write does not change, so read it as immutable.
            folder_writable = os.access(path.parent, os.W_OK)
            mode = {"mode": "ro"} if folder_writable else {"immutable": "1"}
            query = {**parsed.query, **mode, "uri": "true"}
            parsed = parsed.set(database=f"file:{path}", query=query)
    elif backend == "postgresql":
        kwargs["pool_pre_ping"] = True
        kwargs["connect_args"] = {"connect_timeout": 10}
        if read_only:  # every transaction read-only: a write fails with one line
            given = parsed.query.get("options", "")
            options = " ".join([*([given] if isinstance(given, str) else given), _PG_READ_ONLY])
            kwargs["connect_args"]["options"] = options.strip()
    engine = create_engine(parsed, **kwargs)
    if backend == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "checkin", _detach_scratch)
    return engine


def _detach_scratch(dbapi_connection: Any, record: Any) -> None:
    """Detach the scratch files a bulk write left attached (``evalplat.db.sqlite_stage``: they
    cannot be detached inside the transaction that wrote through them) when the connection goes
    back to the pool, its transaction ended: else they would stay attached to it, count against
    SQLite's ten, and keep their disk space. A connection that cannot detach one is closed."""
    import sqlite3

    from evalplat.db.sqlite_stage import SCRATCH_PREFIX

    if dbapi_connection is None:
        return
    try:
        cursor = dbapi_connection.cursor()
        try:
            names = [row[1] for row in cursor.execute("PRAGMA database_list").fetchall()]
            for name in names:
                if str(name).startswith(SCRATCH_PREFIX):
                    cursor.execute(f'DETACH DATABASE "{name}"')
        finally:
            cursor.close()
    except sqlite3.Error:
        record.invalidate()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    import sqlite3

    cursor = dbapi_connection.cursor()
    # Foreign keys are off by default in SQLite; WAL lets report readers work during a run.
    cursor.execute("PRAGMA foreign_keys=ON")
    # a read-only file keeps the journal mode it has; reading still works
    with contextlib.suppress(sqlite3.OperationalError):
        cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def describe_url(url: str) -> str:
    """The URL with any password masked, for messages."""
    return parse_url(url).render_as_string(hide_password=True)


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL (None for other backends and in-memory SQLite)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)
