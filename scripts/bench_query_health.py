"""Benchmark: the query-health read of 10,000 queries over 30 nightly runs, and its page.

Run: ``python scripts/bench_query_health.py [--queries N] [--runs N] [--configs N]``. Two parts:

- **in memory**: builds the frames the store hands over (scores of every run, run records, the
  latest top 10 of every config) and times ``query_health`` (pivot, trend, flips, sections, fix
  and judge lists) and the page's HTML;
- **from a database** (``--sqlite`` and/or ``--postgres ADMIN_URL``, which works in a scratch
  database dropped afterwards): stores a test set of ``--queries`` queries, ``--runs`` runs of
  one config and one run of each other config (top 10 per query, scored with nDCG@10 and
  Judged@10) through the store's API, then times ``evalplat queries CONFIG --testset bench
  --json`` as a fresh process (median of ``--repeat``), and in one process the store's read
  (``Store.query_health_inputs``), the computation and the page.

Not part of the test suite.
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
import pandas as pd

from evalplat.comparison.query_health import HealthInputs, query_health
from evalplat.reports.health import health_html, health_page


def inputs(queries: int, runs: int, configs: int, k: int = 10) -> HealthInputs:
    rng = np.random.default_rng(7)
    ids = np.array([f"q{i}" for i in range(queries)])
    base = rng.random(queries)
    values = np.clip(base[:, None] + rng.normal(0, 0.1, (queries, runs)), 0, 1)
    scores = pd.DataFrame(
        {
            "run_id": np.tile(np.arange(1, runs + 1), queries),
            "query_id": np.repeat(ids, runs),
            "value": values.ravel(),
        }
    )
    records = scores[["run_id", "query_id"]].assign(
        results_count=rng.integers(0, 20, len(scores)), status="ok"
    )
    names = [f"config-{c}" for c in range(configs)]
    peers = pd.DataFrame(
        {
            "config": np.repeat(names, queries),
            "query_id": np.tile(ids, configs),
            "value": np.clip(np.tile(base, configs) + rng.normal(0, 0.1, queries * configs), 0, 1),
        }
    )
    top = pd.DataFrame(
        {
            "config": np.repeat(names, queries * k),
            "query_id": np.tile(np.repeat(ids, k), configs),
            "doc_id": [f"d{n}" for n in rng.integers(0, 50_000, queries * k * configs)],
            "rank": np.tile(np.arange(1, k + 1), queries * configs),
            "judged": rng.random(queries * k * configs) < 0.7,
        }
    ).drop_duplicates(["config", "query_id", "doc_id"])
    return HealthInputs(
        config=names[0], test_set="bench", metric="nDCG@10", higher_is_better=True,
        runs=tuple(range(1, runs + 1)), scores=scores, records=records,
        queries=pd.DataFrame({"query_id": ids, "text": [f"query {i}" for i in ids],
                              "weight": 1.0, "tags": None}),
        peers=peers, top=top, window="30d",
    )  # fmt: skip


def build(url: str, queries: int, runs: int, configs: int, k: int = 10) -> None:
    """The test set ``bench`` and the runs, stored through the store's API as a night would."""
    from evalplat.running.search_driver import score_and_finish
    from evalplat.store import QueryOutcome, Store
    from evalplat.testsets.content import TestSetContent

    ids = [f"q{i}" for i in range(queries)]
    judgments = pd.DataFrame(
        {
            "query_id": np.repeat(ids, 6),
            "doc_id": [f"{q}-d{j}" for q in ids for j in range(6)],
            "grade": np.tile(np.array([2, 1, 1, 0, 0, 0], dtype=np.int64), queries),
            "source": None,
        }
    )
    topics = pd.DataFrame(
        {"query_id": ids, "text": [f"query {q}" for q in ids], "weight": np.nan, "tags": None}
    )
    content = TestSetContent(queries=topics, judgments=judgments)
    rng = np.random.default_rng(11)
    with Store.init(url) as store:
        store.import_test_set("bench", content)
        version = store.test_set_version_id("bench")
        plan = [("config-0", n) for n in range(runs)] + [
            (f"config-{c}", 0) for c in range(1, configs)
        ]
        for name, _ in plan:
            store.add_config(name, "python", {"function": "json:loads"})
            run_id = store.create_run(
                store.config_version_id(name), version, depth=k, queries_total=queries
            )
            # per query, a shuffle of its 6 judged documents and k unjudged ones, cut at k;
            # every 500th query gets nothing
            order = rng.permuted(np.tile(np.arange(6 + k), (queries, 1)), axis=1)[:, :k]
            found = [
                QueryOutcome(
                    q,
                    "ok",
                    [] if i % 500 == 0 else [
                        (f"{q}-d{d}" if d < 6 else f"{q}-u{d}", float(k - r))
                        for r, d in enumerate(row)
                    ],
                )
                for i, (q, row) in enumerate(zip(ids, order, strict=True))
            ]  # fmt: skip
            for first in range(0, queries, 1000):
                store.record_outcomes(run_id, found[first : first + 1000])
            score_and_finish(store, run_id, content, ["nDCG@10", "Judged@10"])


def bench_database(label: str, url: str, args: argparse.Namespace) -> None:
    from evalplat.comparison.query_health import parse_since
    from evalplat.store import Store

    start = time.perf_counter()
    build(url, args.queries, args.runs, args.configs)
    built = time.perf_counter() - start
    command = [sys.executable, "-c", "from evalplat.cli import main; main()", "queries"]
    command += ["config-0", "--testset", "bench", "--json", "--db", url]
    whole = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        whole.append(time.perf_counter() - start)
    read, compute, page = [], [], []
    with Store.open(url) as store:
        for _ in range(args.repeat):
            start = time.perf_counter()
            data = store.query_health_inputs("config-0", "bench", parse_since("30d"), window="30d")
            read.append(time.perf_counter() - start)
            start = time.perf_counter()
            health = query_health(data)
            compute.append(time.perf_counter() - start)
            start = time.perf_counter()
            health_html(health_page(health))
            page.append(time.perf_counter() - start)
    print(
        f"{label}: {args.queries} queries x {args.runs} runs, {args.configs} configs "
        f"(stored in {built:.0f} s): `evalplat queries --json` median "
        f"{statistics.median(whole):.2f} s of {args.repeat}; in one process best of "
        f"{args.repeat}: read {min(read):.2f} s, compute {min(compute):.2f} s, "
        f"page {min(page):.2f} s",
        flush=True,
    )


def postgres(admin_url: str, args: argparse.Namespace) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    database = f"evalplat_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{database}"'))
    try:
        url = make_url(admin_url).set(database=database)
        bench_database("PostgreSQL", url.render_as_string(hide_password=False), args)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--configs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sqlite", action="store_true", help="also time the read from SQLite")
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server to time too")
    args = parser.parse_args()
    in_memory(args)
    if args.sqlite:
        with tempfile.TemporaryDirectory() as name:
            bench_database("SQLite", f"sqlite:///{Path(name) / 'bench.db'}", args)
    if args.postgres:
        postgres(args.postgres, args)


def in_memory(args: argparse.Namespace) -> None:
    data = inputs(args.queries, args.runs, args.configs)
    compute, render, size = [], [], 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        health = query_health(data)
        compute.append(time.perf_counter() - start)
        start = time.perf_counter()
        html = health_html(health_page(health))
        render.append(time.perf_counter() - start)
        size = len(html.encode())
    print(
        f"query health: {args.queries} queries x {args.runs} runs, {args.configs} configs: "
        f"compute best {min(compute):.3f} s, page best {min(render):.3f} s "
        f"({size / 1e6:.1f} MB) of {args.repeat}"
    )


if __name__ == "__main__":
    main()
