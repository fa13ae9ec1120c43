"""Alembic migrations run from code: `evalplat init`, `db upgrade`, `db current`, `db check`.

The migration scripts live in ``migrations/`` (packaged into the wheel); Alembic gets its
configuration here rather than from an ``alembic.ini``, and the connection is handed to
``migrations/env.py`` through ``Config.attributes`` so the caller's engine settings apply.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect
from sqlalchemy.exc import DBAPIError

from evalplat.db.engine import describe_url
from evalplat.db.models import Base
from evalplat.errors import DatabaseUnavailableError, SchemaOutdatedError
from evalplat.resources import data_dir


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(data_dir("migrations")))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise SchemaOutdatedError("evalplat has no migrations (broken installation)")
    return head


@contextmanager
def connect(engine: Engine) -> Iterator[Connection]:
    """A connection, with an unreachable database turned into one clear error."""
    try:
        connection = engine.connect()
    except DBAPIError as error:
        first_line = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        raise DatabaseUnavailableError(
            f"cannot open database {describe_url(str(engine.url))}: {first_line}"
        ) from None
    try:
        yield connection
    finally:
        connection.close()


def current_revision(engine: Engine) -> str | None:
    with connect(engine) as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> tuple[str | None, str | None]:
    """Migrate to ``revision``; return (revision before, revision after). Idempotent."""
    before = current_revision(engine)
    with connect(engine) as connection, connection.begin():
        command.upgrade(alembic_config(connection), revision)
    return before, current_revision(engine)


def downgrade(engine: Engine, revision: str) -> None:
    with connect(engine) as connection, connection.begin():
        command.downgrade(alembic_config(connection), revision)


def schema_differences(engine: Engine) -> list[Any]:
    """What autogenerate would change to make the database match the models (empty = in sync)."""
    with connect(engine) as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))


def ensure_current(engine: Engine) -> None:
    """Raise one actionable line when the database is not at this evalplat's schema."""
    current = current_revision(engine)
    head = head_revision()
    if current == head:
        return
    if current is None:
        with connect(engine) as connection:
            tables = inspect(connection).get_table_names()
        if not tables:
            raise SchemaOutdatedError(
                f"database {describe_url(str(engine.url))} is empty: run `evalplat init`"
            )
        raise SchemaOutdatedError(
            f"database {describe_url(str(engine.url))} has tables but no evalplat schema "
            "version: is this the right database?"
        )
    script = ScriptDirectory.from_config(alembic_config())
    known = {rev.revision for rev in script.walk_revisions()}
    if current not in known:
        raise SchemaOutdatedError(
            f"database schema {current} is newer than this evalplat knows (head {head}): "
            "upgrade evalplat"
        )
    raise SchemaOutdatedError(
        f"database schema {current} is behind this evalplat ({head}): run `evalplat db upgrade`"
    )
