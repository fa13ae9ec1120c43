"""Benchmark reading ranked results out of SQLite as columns (``evalplat.db.bulk.read_frame``).

A table shaped as the results table (query id, doc id, rank, score) holds ``--rows`` rows; it
is read three ways, each the median of ``--repeats`` reads:

- **scratch + ADBC**: what ``read_frame`` does, the session's connection copies the rows into a
  scratch file that ``adbc-driver-sqlite`` then reads into Arrow;
- **fetchall**: the session's connection returns Python tuples, made into columns;
- **ADBC direct** (yardstick): the driver reads the database file itself, as evalplat did before
  it read through a scratch copy. Safe here only because no other connection is open on the
  file while it reads; in evalplat it is not, so this is the speed given up, not an option.

Run from the repository root::

    python scripts/bench_sqlite_read.py [--rows 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, select, text
from sqlalchemy.orm import Session

from evalplat.db.bulk import read_frame
from evalplat.db.engine import create_db_engine

TYPES = {"query_id": "str", "doc_id": "str", "rank": "int64", "score": "float64"}


def _median(repeats: int, read: Callable[[], int], rows: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        assert read() == rows
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "read.db"
        engine = create_db_engine(f"sqlite:///{path}")
        table = Table(
            "results",
            MetaData(),
            Column("query_id", String, primary_key=True),
            Column("doc_id", String, primary_key=True),
            Column("rank", Integer, nullable=False),
            Column("score", Float, nullable=False),
        )
        table.create(engine)
        with engine.begin() as connection:
            connection.execute(
                text(
                    "WITH RECURSIVE n(i) AS"
                    " (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < :last)"
                    " INSERT INTO results SELECT 'q' || (i / 100), 'doc' || i, i % 100 + 1,"
                    " 1.0 / (i % 100 + 1) FROM n"
                ),
                {"last": args.rows - 1},
            )
        query = select(table.c.query_id, table.c.doc_id, table.c.rank, table.c.score)
        columns = list(TYPES)

        def scratch() -> int:
            with Session(engine) as session:
                return len(read_frame(session, query, columns, TYPES))

        def tuples() -> int:
            with Session(engine) as session, session.begin():
                session.execute(text("SAVEPOINT bench"))  # in a transaction: no scratch copy
                return len(read_frame(session, query, columns, TYPES))

        def direct() -> int:
            import adbc_driver_sqlite.dbapi as adbc

            engine.dispose()
            with adbc.connect(str(path)) as connection, connection.cursor() as cursor:
                cursor.execute("SELECT query_id, doc_id, rank, score FROM results")
                return int(cursor.fetch_arrow_table().to_pandas().shape[0])

        figures = {
            "scratch + ADBC": _median(args.repeats, scratch, args.rows),
            "fetchall": _median(args.repeats, tuples, args.rows),
            "ADBC direct (yardstick)": _median(args.repeats, direct, args.rows),
        }
        engine.dispose()
    print(f"SQLite read of {args.rows:,} ranked results, median of {args.repeats}:")
    for name, seconds in figures.items():
        print(f"  {name:<24} {seconds:6.2f}s  {args.rows / seconds:>12,.0f} rows/s")


if __name__ == "__main__":
    main()
