"""Benchmark: import a test set with 1M judgments into SQLite and PostgreSQL.

Generates a deterministic TREC qrels file (10,000 queries x 100 judgments, grades 0-3) and a
queries TSV, then times the two stages of `evalplat testset import` separately: reading and
validating the files, and writing the version in one transaction. Run from the repository root:

    python scripts/bench_import.py                       # SQLite only
    python scripts/bench_import.py --postgres postgresql+psycopg://root@127.0.0.1:5432/test

PostgreSQL runs in a throwaway database created on that server and dropped afterwards.

    python scripts/bench_import.py --lists 1 4           # other tools' judgment lists

reads the same judgments written as a Quepid CSV, an RRE ratings file and an SRW judgment list
of about 1 and 4 MB each (reading and validating only: the store's write is the same for every
format), so that a reader whose time grows faster than its input shows.
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


def timed_lists(folder: Path, megabytes: float) -> list[tuple[str, float, float, int]]:
    """(format, MB, seconds to read, judgments) of one set of judgments in each list format."""
    import pandas as pd

    from evalplat.formats.judgment_files import parse_judgments
    from evalplat.formats.judgment_lists import write_judgment_list

    per_query, grades = 20, [3, 2, 1, 0]
    queries = max(1, int(megabytes * 1_000_000 / 700))  # about 700 bytes a query in RRE
    ids = [f"q{q}" for q in range(queries)]
    texts = pd.DataFrame({"query_id": ids, "text": [f"query number {q}" for q in range(queries)]})
    qrels = pd.DataFrame(
        {
            "query_id": [q for q in ids for _ in range(per_query)],
            "doc_id": [f"doc{d}" for _ in ids for d in range(per_query)],
            "grade": [grades[d % 4] for _ in ids for d in range(per_query)],
        }
    )
    rows = []
    for fmt, suffix in (("quepid", "csv"), ("rre", "json"), ("srw", "json")):
        path = write_judgment_list(fmt, texts, qrels, folder / f"{fmt}.{suffix}", "bench")
        start = time.perf_counter()
        parsed = parse_judgments(path, fmt)
        seconds = time.perf_counter() - start
        rows.append((fmt, path.stat().st_size / 1e6, seconds, len(parsed.frame)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--per-query", type=int, default=100)
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server to test too")
    parser.add_argument(
        "--lists", type=float, nargs="+", metavar="MB", help="time the judgment lists instead"
    )
    args = parser.parse_args()
    if args.lists:
        print(f"{'format':<8}{'MB':>7}{'judgments':>11}{'read s':>9}")
        with tempfile.TemporaryDirectory() as folder_name:
            for megabytes in args.lists:
                for fmt, size, seconds, rows in timed_lists(Path(folder_name), megabytes):
                    print(f"{fmt:<8}{size:>7.2f}{rows:>11,}{seconds:>9.2f}")
        return
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
