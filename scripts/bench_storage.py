"""Store a synthetic run (default 10,000 queries x 100 results) on SQLite and PostgreSQL.

Measures what the runner does: query outcomes and ranked results committed in batches through
``Store.record_outcomes`` (COPY on PostgreSQL, executemany on SQLite), then reading the results
back and pruning them. Prints rows per second for each backend.

    python scripts/bench_storage.py [--queries 10000] [--depth 100] [--batch 200]
        [--postgres postgresql+psycopg://root@127.0.0.1:5432/test] [--backend sqlite]

PostgreSQL runs in a scratch database created on the given server and dropped afterwards;
it is skipped (with a note) when the server cannot be reached.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

import pandas as pd
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from evalplat.store import QueryOutcome, Store
from evalplat.store.base import utcnow
from evalplat.testsets.content import TestSetContent


def content(queries: int) -> TestSetContent:
    ids = [f"q{n}" for n in range(queries)]
    return TestSetContent(
        queries=pd.DataFrame(
            {
                "query_id": ids,
                "text": ids,
                "weight": [float("nan")] * queries,
                "tags": [None] * queries,
            }
        ),
        judgments=pd.DataFrame(
            {
                "query_id": ids,
                "doc_id": ["d0"] * queries,
                "grade": [1] * queries,
                "source": [None] * queries,
            }
        ),
    )


def bench(url: str, queries: int, depth: int, batch: int) -> None:
    store = Store.init(url)
    store.import_test_set("bench", content(queries))
    store.add_config("bench", "python", {"function": "json:loads"})
    run_id = store.create_run(
        store.config_version_id("bench"),
        store.test_set_version_id("bench"),
        depth=depth,
        queries_total=queries,
    )
    outcomes = [
        QueryOutcome(
            f"q{n}", "ok", [(f"doc{n * 7 + r}", float(depth - r)) for r in range(depth)], 1.0
        )
        for n in range(queries)
    ]
    rows = queries * depth
    start = time.perf_counter()
    for first in range(0, queries, batch):
        store.record_outcomes(run_id, outcomes[first : first + batch])
    store.finish_run(run_id, "complete")
    stored = time.perf_counter() - start
    start = time.perf_counter()
    loaded = store.load_results(run_id)
    read = time.perf_counter() - start
    if len(loaded) != rows:
        raise SystemExit(f"read back {len(loaded)} rows, expected {rows}")
    start = time.perf_counter()
    store.prune_results(0, now=utcnow())
    pruned = time.perf_counter() - start
    store.close()
    name = make_url(url).get_backend_name()
    print(
        f"{name:<11} store {rows:,} results in {stored:6.2f}s = {rows / stored:>10,.0f} rows/s"
        f" | read back {read:5.2f}s = {rows / read:>10,.0f} rows/s | prune {pruned:5.2f}s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--batch", type=int, default=200, help="queries per committed batch")
    parser.add_argument("--postgres", default="postgresql+psycopg://root@127.0.0.1:5432/test")
    parser.add_argument("--backend", choices=["both", "sqlite", "postgresql"], default="both")
    args = parser.parse_args()
    if args.backend != "postgresql":
        with tempfile.TemporaryDirectory() as folder:
            bench(f"sqlite:///{Path(folder) / 'bench.db'}", args.queries, args.depth, args.batch)
    if args.backend == "sqlite":
        return
    admin = create_engine(args.postgres, isolation_level="AUTOCOMMIT")
    database = f"evalplat_bench_{uuid.uuid4().hex[:8]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{database}"'))
    except Exception as error:  # no server: say so and stop
        print(f"postgresql  skipped: {str(error).splitlines()[0]}")
        return
    try:
        url = make_url(args.postgres).set(database=database)
        bench(url.render_as_string(hide_password=False), args.queries, args.depth, args.batch)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
