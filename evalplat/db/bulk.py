"""Fast bulk inserts inside the caller's transaction.

The ORM's executemany of dictionaries is fine for hundreds of rows but not for the millions a
large test set or run produces. PostgreSQL gets ``COPY ... FROM STDIN`` through psycopg 3;
SQLite gets the DB-API ``executemany`` with plain tuples, which its C loop runs quickly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from evalplat.db.models import Base

if TYPE_CHECKING:
    import pandas as pd


def mark_written(session: Session) -> None:
    """Note that the session wrote rows the ORM does not see (its commit is a crash point)."""
    session.info["wrote"] = True


def bulk_insert(
    session: Session, model: type[Base], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``model``'s table, in the session's
    transaction.

    JSON columns take JSON text (or None for NULL).
    """
    mark_written(session)
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


def bulk_insert_frame(session: Session, model: type[Base], frame: pd.DataFrame) -> None:
    """Insert the rows of ``frame`` (its columns named as the table's) into ``model``'s table.

    The columnar path for large loads: on PostgreSQL the whole frame is formatted as COPY text
    with vectorised string operations, which is several times faster than a per-row write;
    missing values (None, NaN, NA) become NULL.
    """
    mark_written(session)
    connection = session.connection()
    if connection.dialect.name != "postgresql":
        columns = [_python_values(frame[name]) for name in frame.columns]
        bulk_insert(session, model, list(frame.columns), zip(*columns, strict=True))
        return
    raw = connection.connection.driver_connection
    if raw is None:
        raise RuntimeError("no DB-API connection behind the session")
    statement = f"COPY {model.__tablename__} ({', '.join(frame.columns)}) FROM STDIN"
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        for start in range(0, len(frame), _COPY_CHUNK):
            chunk = frame.iloc[start : start + _COPY_CHUNK]
            fields = [_copy_field(chunk[name]) for name in chunk.columns]
            line = fields[0]
            for field in fields[1:]:
                line = line + "\t" + field
            copy.write((line + "\n").str.cat())


_COPY_CHUNK = 200_000
_COPY_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _copy_field(column: pd.Series[Any]) -> pd.Series[Any]:
    """One column as PostgreSQL COPY text: escaped, with ``\\N`` for missing values."""
    missing = column.isna()
    text = column.astype(object).where(~missing, "").astype(str)
    if text.str.contains(r"[\\\t\n\r]", regex=True).any():
        for char, escaped in _COPY_ESCAPES.items():
            text = text.str.replace(char, escaped, regex=False)
    return text.where(~missing, "\\N")


def _python_values(column: pd.Series[Any]) -> list[Any]:
    """Plain Python values with None for missing ones (what the SQLite driver accepts)."""
    values = column.astype(object).where(column.notna(), None).tolist()
    return values
