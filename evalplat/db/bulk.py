"""Fast bulk inserts inside the caller's transaction.

The ORM's executemany of dictionaries is fine for hundreds of rows but not for the millions a
large test set or run produces. PostgreSQL gets ``COPY ... FROM STDIN`` through psycopg 3;
SQLite gets the DB-API ``executemany`` with plain tuples, which its C loop runs quickly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.orm import Session


def bulk_insert(
    session: Session, table: Table, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``table`` in the session's transaction.

    JSON columns take JSON text (or None for NULL).
    """
    connection = session.connection()
    dialect = connection.dialect.name
    raw = connection.connection.driver_connection
    if raw is None:
        raise RuntimeError("no DB-API connection behind the session")
    column_list = ", ".join(columns)
    if dialect == "postgresql":
        with raw.cursor() as cursor:
            with cursor.copy(f"COPY {table.name} ({column_list}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        return
    placeholders = ", ".join("?" for _ in columns)
    cursor = raw.cursor()
    try:
        cursor.executemany(
            f"INSERT INTO {table.name} ({column_list}) VALUES ({placeholders})", rows
        )
    finally:
        cursor.close()
