"""SQLite bulk writes staged through Arrow, inside the session's transaction.

Binding a million Python tuples through ``executemany`` costs more than SQLite's own work of
storing them. ``adbc-driver-sqlite`` writes an Arrow table in C, but only on a connection of its
own, outside the session's transaction. So the columns go first into a scratch database file
that nothing else reads (no journal, no fsync), and the session's connection copies them with
one ``INSERT ... SELECT`` from that file, attached under a name of its own: the rows reach the
evalplat database only through the session's transaction, so a failed write (or a rollback)
leaves nothing there.

Reads go the other way (``staged_read``): the session's connection copies the query's rows
into a scratch file with one ``CREATE TABLE ... AS SELECT`` and detaches it, then the driver
reads that file straight into Arrow. The driver bundles a second copy of SQLite, and two copies
in one process must never open the same file: POSIX locks belong to the process, so the second
copy takes the first's locks for its own, checkpoints and deletes the write-ahead log under it
when it closes, and its ``close`` drops every lock the first holds ("How To Corrupt An SQLite
Database File", sections 2.2 and 2.2.1). Here it only ever opens scratch files that no other
connection has open.

The scratch file is unlinked as soon as it has been copied (the connection keeps its handle
until it closes); a file the system will not unlink while open is removed when the session
closes (``leftover_files``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

if TYPE_CHECKING:
    import pyarrow as pa

# SQLite attaches at most 10 databases to a connection (main and temp count); a scratch file
# stays attached until the transaction ends, so a connection takes a few and then executemany.
MAX_ATTACHED = 8
# Below this many rows executemany is as fast and needs no scratch file.
MIN_STAGED_ROWS = 2_000
LEFTOVER_FILES = "evalplat_stage_files"
# the schema name of every scratch file attached to a session's connection: a pooled connection
# detaches them when it is given back (``evalplat.db.engine``)
SCRATCH_PREFIX = "evalplat_scratch_"


def can_stage(raw: Any, rows: int) -> bool:
    """Whether a write of ``rows`` rows on the connection ``raw`` should go through a scratch
    file."""
    if rows < MIN_STAGED_ROWS:
        return False
    cursor = raw.cursor()
    try:
        attached = len(cursor.execute("PRAGMA database_list").fetchall())
    finally:
        cursor.close()
    if attached >= MAX_ATTACHED:
        return False
    try:
        import adbc_driver_sqlite.dbapi  # noqa: F401
    except ImportError:
        return False
    return True


def staged_insert(
    session: Session,
    raw: Any,
    table_name: str,
    columns: Sequence[str],
    arrays: pa.Table,
    constants: Mapping[str, Any],
) -> bool:
    """Insert ``arrays`` (one Arrow column per name in it) plus ``constants`` (one value for
    every row) into ``table_name`` as columns ``columns``, on the session connection ``raw``.

    Returns False, having written nothing, when the scratch file cannot be written: the caller
    then writes the rows another way. The caller sorts ``arrays`` by the table's primary key:
    SQLite then appends to its key index instead of splitting pages all over it.
    """
    import adbc_driver_sqlite.dbapi as adbc

    try:
        handle, path = tempfile.mkstemp(prefix="evalplat-stage-", suffix=".db")
    except OSError:  # no writable temporary folder
        return False
    os.close(handle)
    schema = f"{SCRATCH_PREFIX}write_{uuid.uuid4().hex[:12]}"
    try:
        try:
            with adbc.connect(path, autocommit=True) as connection, connection.cursor() as cursor:
                cursor.execute("PRAGMA journal_mode=OFF")
                cursor.execute("PRAGMA synchronous=OFF")
                cursor.adbc_ingest("staged", arrays, mode="create")
        except adbc.Error:  # no room in the temporary folder, a type the driver lacks...
            return False
        names = ", ".join(columns)
        selected = ", ".join("?" if name in constants else f'"{name}"' for name in columns)
        values = [constants[name] for name in columns if name in constants]
        cursor = raw.cursor()
        try:
            cursor.execute(f"ATTACH DATABASE ? AS {schema}", (path,))
            cursor.execute(
                f"INSERT INTO main.{table_name} ({names}) SELECT {selected} FROM {schema}.staged",
                values,
            )
        finally:
            cursor.close()
        return True
    finally:
        try:
            os.unlink(path)
        except OSError:  # still open and the system will not unlink it: after the session
            session.info.setdefault(LEFTOVER_FILES, []).append(path)


def staged_read(raw: Any, sql: str, parameters: Sequence[Any]) -> pa.Table | None:
    """The rows of the query ``sql`` on the session connection ``raw`` as an Arrow table, read
    by the driver from a scratch copy; None when that cannot be done (the connection is inside
    a transaction and cannot detach, a scratch file it cannot attach or write, no temporary
    folder, the driver missing, or a column whose type changes part-way: the driver
    types columns by their first rows)."""
    import sqlite3

    if raw.in_transaction:
        return None
    try:
        import adbc_driver_sqlite.dbapi as adbc
    except ImportError:
        return None
    try:
        handle, path = tempfile.mkstemp(prefix="evalplat-read-", suffix=".db")
    except OSError:  # no writable temporary folder
        return None
    os.close(handle)
    schema = f"{SCRATCH_PREFIX}read_{uuid.uuid4().hex[:12]}"
    try:
        cursor = raw.cursor()
        try:
            cursor.execute(f"ATTACH DATABASE ? AS {schema}", (path,))
            try:
                cursor.execute(f"PRAGMA {schema}.journal_mode=OFF")
                cursor.execute(f"PRAGMA {schema}.synchronous=OFF")
                cursor.execute(f"CREATE TABLE {schema}.rows AS {sql}", list(parameters))
            finally:
                cursor.execute(f"DETACH DATABASE {schema}")
        finally:
            cursor.close()
        # the session's connection has closed the file: the driver's copy is alone on it
        with adbc.connect(path) as connection, connection.cursor() as reader:
            reader.execute("SELECT * FROM rows")
            table: pa.Table = reader.fetch_arrow_table()
        return table
    except (sqlite3.Error, adbc.Error, OSError):  # a type change part-way: Arrow's OSError
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def remove_leftovers(info: dict[str, Any]) -> None:
    """Remove the scratch files a closed session could not unlink while it was open."""
    for path in info.pop(LEFTOVER_FILES, []):
        with contextlib.suppress(OSError):
            os.unlink(path)
