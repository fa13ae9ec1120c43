"""Alembic migrations run from code: `evalplat init`, `db upgrade`, `db current`, `db check`.

The migration scripts live in ``migrations/`` (packaged into the wheel); Alembic gets its
configuration here rather than from an ``alembic.ini``, and the connection is handed to
``migrations/env.py`` through ``Config.attributes`` so the caller's engine settings apply.

Every command checks the schema on open (``ensure_current``): one ``SELECT`` of the stored
revision, compared with the head read from the migration files' names. Alembic itself, slow to
import, is loaded only to migrate, diff, or explain a mismatch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import DBAPIError

from evalplat.db.engine import describe_url
from evalplat.db.metadata import METADATA
from evalplat.errors import DatabaseUnavailableError, SchemaOutdatedError
from evalplat.resources import data_dir

if TYPE_CHECKING:
    from alembic.config import Config


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(data_dir("migrations")))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The latest migration's id. Ids are numbered ``0001``, ``0002``, ... in one line (each
    revises the one before; a test checks that Alembic finds the same single head), so the
    head is the highest number among the files' names: no need to load Alembic for it."""
    numbers = [
        path.name.split("_", 1)[0]
        for path in (data_dir("migrations") / "versions").glob("[0-9][0-9][0-9][0-9]_*.py")
    ]
    if not numbers:
        raise SchemaOutdatedError("evalplat has no migrations (broken installation)")
    return max(numbers)


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
    from alembic.migration import MigrationContext

    with connect(engine) as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> tuple[str | None, str | None]:
    """Migrate to ``revision``; return (revision before, revision after). Idempotent."""
    from alembic import command

    before = current_revision(engine)
    with connect(engine) as connection, connection.begin():
        command.upgrade(alembic_config(connection), revision)
    return before, current_revision(engine)


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    with connect(engine) as connection, connection.begin():
        command.downgrade(alembic_config(connection), revision)


def schema_differences(engine: Engine) -> list[Any]:
    """What autogenerate would change to make the database match the models (empty = in sync)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with connect(engine) as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, METADATA))


def ensure_current(engine: Engine) -> None:
    """Raise one actionable line when the database is not at this evalplat's schema."""
    head = head_revision()
    if _stored_revision(engine) == head:
        return
    from alembic.script import ScriptDirectory

    current = current_revision(engine)
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


def _stored_revision(engine: Engine) -> str | None:
    """The revision in ``alembic_version`` read with one plain query; None when there is no
    such table or not exactly one row (``current_revision`` then tells what is there)."""
    with connect(engine) as connection:
        try:
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        except DBAPIError:
            return None
        finally:
            connection.rollback()
    return str(rows[0][0]) if len(rows) == 1 else None
