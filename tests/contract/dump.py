"""A comparable dump of every table, the same way on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from evalplat.db.engine import create_db_engine
from evalplat.db.metadata import METADATA


def dump(db_url: str) -> dict[str, list[tuple[Any, ...]]]:
    engine = create_db_engine(db_url)
    try:
        with engine.connect() as connection:
            return {
                table.name: sorted(
                    (tuple(row) for row in connection.execute(select(table))), key=repr
                )
                for table in METADATA.sorted_tables
            }
    finally:
        engine.dispose()
