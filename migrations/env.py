"""Alembic environment: always run from code (evalplat.db.migrate) with a live connection."""

from __future__ import annotations

from alembic import context

from evalplat.db.metadata import METADATA

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("evalplat migrations run through `evalplat db upgrade`, not bare alembic")

context.configure(
    connection=connection,
    target_metadata=METADATA,
    # SQLite cannot ALTER most things; batch mode recreates tables instead.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
