"""Columnar reads while other threads of the same process write (evalplat.db.bulk.read_frame).

On SQLite the columnar reader bundles a second copy of SQLite: had it opened the database file
itself, its close would checkpoint and delete the write-ahead log under the process's own
connections (POSIX locks belong to the process, so the copies never see each other's locks),
which surfaced as "disk I/O error", a crash, or a corrupt index. Here threads write through the
engine, as the lock heartbeat and the runner do, while the main thread reads many times: every
write succeeds, every read sees one consistent snapshot (each row's two columns move together,
and a reader never sees fewer rows than before), and the file passes ``integrity_check``.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Column, Engine, Integer, MetaData, Table, column, func, select, text
from sqlalchemy.orm import Session

from evalplat.db.bulk import read_frame
from evalplat.db.engine import create_db_engine
from evalplat.db.sqlite_stage import staged_read

SECONDS = 3.0
WRITERS = 2


@pytest.fixture
def pairs(db_url: str) -> Iterator[tuple[Engine, Table]]:
    engine = create_db_engine(db_url)
    table = Table(
        f"pairs_{uuid.uuid4().hex[:8]}",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("a", Integer, nullable=False, index=True),
        Column("b", Integer, nullable=False, index=True),
    )
    table.create(engine)
    yield engine, table
    table.drop(engine)
    engine.dispose()


def _write(engine: Engine, table: Table, k: int, stop: threading.Event, errors: list[str]) -> None:
    step = 0
    while not stop.is_set():
        try:
            with engine.begin() as connection:
                connection.execute(table.insert().values(a=step, b=step))
                connection.execute(
                    table.update()
                    .where(table.c.id % 7 == k)
                    .values(a=table.c.a + 1, b=table.c.b + 1)
                )
        except Exception as error:  # any failure of a writer fails the test
            errors.append(repr(error))
            return
        step += 1


def test_reads_while_the_process_writes_keep_the_database_whole(
    pairs: tuple[Engine, Table],
) -> None:
    engine, table = pairs
    query = select(table.c.a, table.c.b)
    stop, errors = threading.Event(), []
    threads = [
        threading.Thread(target=_write, args=(engine, table, k, stop, errors))
        for k in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    reads, seen, torn = 0, 0, 0
    try:
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline and not errors:
            with Session(engine) as session:
                frame = read_frame(session, query, ["a", "b"], {"a": "int64", "b": "int64"})
            torn += int((frame["a"] != frame["b"]).sum())
            assert len(frame) >= seen  # rows are only added: a snapshot never goes back
            seen = len(frame)
            reads += 1
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert errors == []
    assert torn == 0
    assert reads > 10 and seen > 0
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            assert connection.execute(text("PRAGMA integrity_check")).scalars().all() == ["ok"]
        assert connection.execute(select(func.count()).select_from(table)).scalar_one() >= seen


def test_the_sqlite_read_goes_through_the_columnar_driver(pairs: tuple[Engine, Table]) -> None:
    """The safe path is the fast one, not a silent fallback to Python tuples."""
    engine, table = pairs
    if engine.dialect.name != "sqlite":
        return
    with engine.begin() as connection:
        connection.execute(table.insert(), [{"a": i, "b": -i} for i in range(100)])
    with Session(engine) as session:
        raw = session.connection().connection.driver_connection
        arrow = staged_read(raw, f"SELECT a, b FROM {table.name} ORDER BY id", [])
    assert arrow is not None
    assert arrow.column(0).to_pylist() == list(range(100))
    assert arrow.column(1).to_pylist() == [-i for i in range(100)]


def test_a_read_only_database_is_read_through_a_scratch_copy(tmp_path: Path) -> None:
    """``mode=ro`` holds for the database, not for the scratch file it attaches."""
    path = tmp_path / "ro.db"
    writable = create_db_engine(f"sqlite:///{path}")
    with writable.begin() as connection:
        connection.execute(text("CREATE TABLE t (a INTEGER, b TEXT)"))
        connection.execute(text("INSERT INTO t VALUES (1, 'x'), (2, NULL)"))
    writable.dispose()
    engine = create_db_engine(f"sqlite:///{path}", read_only=True)
    query = select(column("a"), column("b")).select_from(text("t")).order_by(column("a"))
    with Session(engine) as session:
        raw = session.connection().connection.driver_connection
        assert staged_read(raw, "SELECT a, b FROM t", []) is not None
        frame = read_frame(session, query, ["a", "b"], {"a": "int64", "b": "str"})
    engine.dispose()
    assert frame["a"].tolist() == [1, 2]
    assert frame["b"].iloc[0] == "x" and frame["b"].isna().tolist() == [False, True]
