"""Database URL resolution and engine creation.

URL precedence (PRODUCT.md): ``--db`` > ``EVALPLAT_DATABASE_URL`` > project file >
``sqlite:///evalplat.db``. No engine is created at import time.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import NullPool

from evalplat.errors import InputError

DEFAULT_URL = "sqlite:///evalplat.db"
ENV_VAR = "EVALPLAT_DATABASE_URL"
PROJECT_FILE = "evalplat.toml"


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
            from evalplat.searchers.env import expand_env

            expanded = expand_env(str(url))
            return _relative_to(normalise_url(expanded), path.resolve().parent)
    return DEFAULT_URL


def normalise_url(url: str) -> str:
    """Accept the common short forms: ``postgresql://`` means psycopg 3, a bare path SQLite."""
    if "://" not in url:
        return f"sqlite:///{url}"
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _relative_to(url: str, folder: Path) -> str:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return url
    if parsed.database == ":memory:" or Path(parsed.database).is_absolute():
        return url
    return parsed.set(database=str(folder / parsed.database)).render_as_string(hide_password=False)


def create_db_engine(url: str) -> Engine:
    """Create an engine with evalplat's connection settings for the backend."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise InputError(f"not a database URL: {url!r}") from None
    backend = parsed.get_backend_name()
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        # Each connection is cheap; NullPool avoids sharing one file handle across threads
        # and lets other processes (a second nightly, a reader) see committed data at once.
        kwargs["poolclass"] = NullPool
        kwargs["connect_args"] = {"timeout": 30}
    elif backend == "postgresql":
        kwargs["pool_pre_ping"] = True
        kwargs["connect_args"] = {"connect_timeout": 10}
    engine = create_engine(parsed, **kwargs)
    if backend == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # Foreign keys are off by default in SQLite; WAL lets report readers work during a run.
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def describe_url(url: str) -> str:
    """The URL with any password masked, for messages."""
    return make_url(url).render_as_string(hide_password=True)


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL (None for other backends and in-memory SQLite)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)
