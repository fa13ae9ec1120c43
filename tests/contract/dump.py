"""A comparable dump of every table, the same way on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from evalplat.db.engine import create_db_engine
from evalplat.db.models import Base


def dump(db_url: str) -> dict[str, list[tuple[Any, ...]]]:
    engine = create_db_engine(db_url)
    try:
        with engine.connect() as connection:
            return {
                table.name: sorted(
                    (tuple(row) for row in connection.execute(select(table))), key=repr
                )
                for table in Base.metadata.sorted_tables
            }
    finally:
        engine.dispose()
