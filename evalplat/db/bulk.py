"""Fast bulk inserts inside the caller's transaction.

The ORM's executemany of dictionaries is fine for hundreds of rows but not for the millions a
large test set or run produces. PostgreSQL gets ``COPY ... FROM STDIN`` through psycopg 3;
SQLite gets the DB-API ``executemany`` with plain tuples, which its C loop runs quickly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy.orm import Session

from evalplat.db.models import Base


def bulk_insert(
    session: Session, model: type[Base], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``model``'s table, in the session's
    transaction.

    JSON columns take JSON text (or None for NULL).
    """
    connection = session.connection()
    dialect = connection.dialect.name
    raw = connection.connection.driver_connection
    if raw is None:
        raise RuntimeError("no DB-API connection behind the session")
    table = model.__tablename__
    column_list = ", ".join(columns)
    if dialect == "postgresql":
        statement = f"COPY {table} ({column_list}) FROM STDIN"
        with raw.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
        return
    placeholders = ", ".join("?" for _ in columns)
    cursor = raw.cursor()
    try:
        cursor.executemany(f"INSERT INTO {table} ({column_list}) VALUES ({placeholders})", rows)
    finally:
        cursor.close()
