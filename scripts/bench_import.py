"""Benchmark: import a test set with 1M judgments into SQLite and PostgreSQL.

Generates a deterministic TREC qrels file (10,000 queries x 100 judgments, grades 0-3) and a
queries TSV, then times the two stages of `evalplat testset import` separately: reading and
validating the files, and writing the version in one transaction. Run from the repository root:

    python scripts/bench_import.py                       # SQLite only
    python scripts/bench_import.py --postgres postgresql+psycopg://root@127.0.0.1:5432/test

PostgreSQL runs in a throwaway database created on that server and dropped afterwards.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from evalplat.store import Store
from evalplat.testsets.content import load_testset


def generate(folder: Path, queries: int, per_query: int, seed: int = 7) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    qrels = folder / "qrels.txt"
    topics = folder / "queries.tsv"
    grades = rng.integers(0, 4, size=queries * per_query)
    with qrels.open("w", encoding="utf-8") as handle:
        i = 0
        for q in range(queries):
            docs = rng.choice(1_000_000, size=per_query, replace=False)
            handle.write("".join(f"q{q} 0 doc{d} {grades[i + k]}\n" for k, d in enumerate(docs)))
            i += per_query
    with topics.open("w", encoding="utf-8") as handle:
        handle.writelines(f"q{q}\tquery number {q}\n" for q in range(queries))
    return qrels, topics


def timed_import(url: str, qrels: Path, topics: Path) -> tuple[float, float, int]:
    start = time.perf_counter()
    content = load_testset(qrels, queries=topics)
    parsed = time.perf_counter()
    store = Store.init(url)
    written_start = time.perf_counter()
    outcome = store.import_test_set("bench", content)
    written = time.perf_counter()
    store.close()
    return parsed - start, written - written_start, outcome.version.judgments


def postgres_database(admin_url: str) -> tuple[str, str]:
    name = f"evalplat_bench_{uuid.uuid4().hex[:8]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    return url, name


def drop_database(admin_url: str, name: str) -> None:
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--per-query", type=int, default=100)
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server to test too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        qrels, topics = generate(folder, args.queries, args.per_query)
        targets = [("SQLite", f"sqlite:///{folder / 'bench.db'}", None)]
        if args.postgres:
            url, name = postgres_database(args.postgres)
            targets.append(("PostgreSQL", url, name))
        print(
            f"{'backend':<12}{'judgments':>11}{'read+validate s':>17}{'write s':>9}"
            f"{'total s':>9}{'rows/s':>11}"
        )
        try:
            for label, url, _ in targets:
                parse_s, write_s, rows = timed_import(url, qrels, topics)
                total = parse_s + write_s
                print(
                    f"{label:<12}{rows:>11,}{parse_s:>17.2f}{write_s:>9.2f}{total:>9.2f}"
                    f"{rows / total:>11,.0f}"
                )
        finally:
            for _, _, name in targets:
                if name is not None and args.postgres:
                    drop_database(args.postgres, name)


if __name__ == "__main__":
    main()
