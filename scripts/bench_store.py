"""Benchmark the store path at several sizes: import judgments, store runs, compare them.

For each size (queries; 100 judgments and 100 results per query) and each database:

- **import**: read and validate a TREC qrels file plus a queries TSV, then write the version in
  one transaction (``Store.import_test_set``), the two stages timed apart;
- **store**: a run's ranked results written as the runner writes them
  (``Store.record_outcomes`` in batches of 1,000 queries), in rows per second; two runs are
  stored and scored (scoring is not timed here: ``bench_evaluate.py`` measures it);
- **compare**: ``evalplat compare A B --metric nDCG@10 --metric AP --report page.html`` as a
  fresh process, the median wall time of ``--repeats`` runs (each run stores a comparison).

Run from the repository root::

    python scripts/bench_store.py [--sizes 1000,10000,100000] [--repeats 3]
        [--postgres postgresql+psycopg://root@127.0.0.1:5432/test] [--no-sqlite]

PostgreSQL runs in a scratch database created on that server and dropped afterwards. To pair
the figures with an older evalplat, run the script with ``PYTHONPATH`` pointing at its source.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from evalplat.running.search_driver import score_and_finish
from evalplat.store import QueryOutcome, Store
from evalplat.testsets.content import load_testset

PER_QUERY = 100
DEPTH = 100
DOC_POOL = 1_000_000
METRICS = ["nDCG@10", "AP", "Judged@10"]


def generate(folder: Path, queries: int, seed: int = 7) -> tuple[Path, Path]:
    """A qrels file (``PER_QUERY`` judgments per query, grades 0-3) and a queries TSV."""
    rng = np.random.default_rng(seed)
    docs = rng.integers(0, DOC_POOL, size=(queries, PER_QUERY))
    grades = rng.integers(0, 4, size=(queries, PER_QUERY))
    qrels, topics = folder / "qrels.txt", folder / "queries.tsv"
    with qrels.open("w", encoding="utf-8") as handle:
        for q in range(queries):
            # drop repeated doc ids within a query: a duplicate judgment is an input error
            seen = dict.fromkeys(docs[q].tolist())
            handle.write("".join(f"q{q} 0 doc{d} {grades[q][i]}\n" for i, d in enumerate(seen)))
    with topics.open("w", encoding="utf-8") as handle:
        handle.writelines(f"q{q}\tquery number {q}\n" for q in range(queries))
    return qrels, topics


def outcomes(queries: int, seed: int) -> list[QueryOutcome]:
    """A run over the qrels' document pool: about half of each top 100 is judged."""
    rng = np.random.default_rng(seed)
    judged = np.random.default_rng(7).integers(0, DOC_POOL, size=(queries, PER_QUERY))
    found = []
    for q in range(queries):
        pool = np.concatenate([judged[q][:50], rng.integers(0, DOC_POOL, size=80)])
        ids = list(dict.fromkeys(f"doc{d}" for d in rng.permutation(pool)))[:DEPTH]
        found.append(
            QueryOutcome(f"q{q}", "ok", [(d, float(DEPTH - r)) for r, d in enumerate(ids)])
        )
    return found


def bench(label: str, url: str, folder: Path, queries: int, repeats: int) -> dict[str, float]:
    qrels, topics = folder / "qrels.txt", folder / "queries.tsv"
    start = time.perf_counter()
    content = load_testset(qrels, queries=topics)
    read_s = time.perf_counter() - start
    store = Store.init(url)
    start = time.perf_counter()
    store.import_test_set("bench", content)
    write_s = time.perf_counter() - start
    judgments = len(content.judgments)
    store.add_config("bench", "python", {"function": "json:loads"})
    store_s = []
    runs = []
    rows = 0
    for seed in (1, 2):
        found = outcomes(queries, seed)
        rows = sum(len(o.hits) for o in found)
        run_id = store.create_run(
            store.config_version_id("bench"),
            store.test_set_version_id("bench"),
            depth=DEPTH,
            queries_total=queries,
        )
        start = time.perf_counter()
        for first in range(0, queries, 1000):
            store.record_outcomes(run_id, found[first : first + 1000])
        store_s.append(time.perf_counter() - start)
        score_and_finish(store, run_id, content, METRICS)
        runs.append(run_id)
    store.close()
    compare_s = []
    command = [sys.executable, "-c", "from evalplat.cli import main; main()", "compare"]
    command += [str(runs[0])]
    command += [str(runs[1]), "--metric", "nDCG@10", "--metric", "AP"]
    command += ["--report", str(folder / "page.html"), "--db", url]
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        compare_s.append(time.perf_counter() - start)
    figures = {
        "read_s": read_s,
        "write_s": write_s,
        "judgments": judgments,
        "store_rows_s": rows / min(store_s),
        "compare_s": statistics.median(compare_s),
    }
    print(
        f"{label:<11}{queries:>8,} queries | import {judgments:>10,} judgments: read "
        f"{read_s:5.2f}s + write {write_s:5.2f}s = {read_s + write_s:5.2f}s | store "
        f"{rows:>10,} results at {figures['store_rows_s']:>9,.0f} rows/s | compare+report "
        f"{figures['compare_s']:5.2f}s",
        flush=True,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server to test too")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    for queries in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            generate(folder, queries)
            if not args.no_sqlite:
                bench("SQLite", f"sqlite:///{folder / 'bench.db'}", folder, queries, args.repeats)
            if args.postgres:
                database = f"evalplat_bench_{uuid.uuid4().hex[:8]}"
                admin = create_engine(args.postgres, isolation_level="AUTOCOMMIT")
                with admin.connect() as connection:
                    connection.execute(text(f'CREATE DATABASE "{database}"'))
                try:
                    url = make_url(args.postgres).set(database=database)
                    rendered = url.render_as_string(hide_password=False)
                    bench("PostgreSQL", rendered, folder, queries, args.repeats)
                finally:
                    with admin.connect() as connection:
                        connection.execute(
                            text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
                        )
                    admin.dispose()


if __name__ == "__main__":
    main()
