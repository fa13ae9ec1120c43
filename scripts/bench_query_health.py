"""Benchmark: the query-health read of 10,000 queries over 30 nightly runs, and its page.

Run: ``python scripts/bench_query_health.py [--queries N] [--runs N] [--configs N]``. Builds the
frames the store hands over (scores of every run, run records, the latest top 10 of every config)
and times ``query_health`` (pivot, trend, flips, sections, fix and judge lists) and the page's
HTML. The store's read is a handful of columnar queries (``evalplat/store/query_health.py``)
and is not part of this figure. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--configs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
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
