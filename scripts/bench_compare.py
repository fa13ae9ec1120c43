"""Benchmark: a 10,000-query paired comparison with 10,000 permutations.

Run: ``python scripts/bench_compare.py [--queries N] [--permutations N]``. Prints the time of
the randomization test alone, of a whole ``compare_scores`` over one metric (test, bootstrap
CI, wins/ties/losses, movers), and of a comparison over the metrics a run stores by default
(``nDCG@10 P@10 R@100 AP RR@10 Judged@10 NumRet``) without and with the system metrics every
search run adds (``Latency``, ``Latency(p=95)``, ``ZeroResult``). With ``--whole-process`` it
also stores two 10k-query runs (100 results per query, per-query latencies recorded) in an
SQLite database and times ``evalplat compare A B`` as a fresh process over the default metrics,
without and with the system metrics, alternating, the median of ``--repeat`` runs: the cost a
user sees. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from evalplat.comparison import stats
from evalplat.comparison.verdicts import CompareOptions, Gate, compare_scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--whole-process", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(42)
    base = rng.random(args.queries)
    cand = np.clip(base - 0.002 + rng.normal(0, 0.05, args.queries), 0, 1)

    timings = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        p = stats.randomization_test(base, cand, n=args.permutations, seed=0)
        timings.append(time.perf_counter() - start)
    print(
        f"randomization test: {args.queries} queries x {args.permutations} permutations: "
        f"best {min(timings):.3f} s of {args.repeat} (p = {p:.4f})"
    )

    ids = [f"q{i}" for i in range(args.queries)]
    frames = [pd.DataFrame({"query_id": ids, "metric": "nDCG@10", "value": v})
              for v in (base, cand)]  # fmt: skip
    start = time.perf_counter()
    result = compare_scores(
        frames[0],
        frames[1],
        gates=[Gate("nDCG@10", max_drop=0.001)],
        options=CompareOptions(permutations=args.permutations),
    )
    elapsed = time.perf_counter() - start
    m = result.metric("nDCG@10")
    print(
        f"compare_scores (1 metric, {result.options.bootstrap} bootstrap resamples): "
        f"{elapsed:.3f} s, delta {m.delta:+.4f}, verdict {m.verdict}"
    )
    system_metrics_cost(args.queries, args.repeat)
    if args.whole_process:
        whole_process_cost(args.queries, args.repeat)


def system_metrics_cost(queries: int, repeat: int) -> None:
    """compare_scores over the default stored metrics, without and with the system metrics."""
    rng = np.random.default_rng(7)
    ids = [f"q{i}" for i in range(queries)]
    relevance = ["nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10", "NumRet"]
    system = ["Latency", "Latency(p=95)", "ZeroResult"]

    def scores(shift: float) -> pd.DataFrame:
        latency = rng.lognormal(3.5, 0.5, queries) * (1 + shift)
        values = {name: np.clip(rng.random(queries) + shift, 0, 1) for name in relevance}
        values |= {
            "NumRet": np.full(queries, 100.0),
            "Latency": latency,
            "Latency(p=95)": latency,
            "ZeroResult": (rng.random(queries) < 0.02) * 1.0,
        }
        return pd.concat([pd.DataFrame({"query_id": ids, "metric": name, "value": v})
                          for name, v in values.items()], ignore_index=True)  # fmt: skip

    baseline, candidate = scores(0.0), scores(-0.002)
    sets = {"relevance": relevance, "relevance + system": relevance + system}
    timings: dict[str, list[float]] = {label: [] for label in sets}
    compare_scores(baseline, candidate, relevance)  # warm up imports and caches
    # alternate the two so that a change in the machine's load weighs on both alike
    for _ in range(repeat):
        for label, names in sets.items():
            start = time.perf_counter()
            compare_scores(baseline, candidate, names)
            timings[label].append(time.perf_counter() - start)
    best = {label: min(values) for label, values in timings.items()}
    extra = best["relevance + system"] / best["relevance"] - 1
    print(
        f"compare_scores, {queries} queries: {len(relevance)} metrics {best['relevance']:.2f} s, "
        f"with the 3 system metrics {best['relevance + system']:.2f} s ({extra:+.0%}), "
        f"best of {repeat}"
    )


def whole_process_cost(queries: int, repeat: int) -> None:
    """``evalplat compare`` of two stored runs, without and with the system metrics."""
    import statistics
    import subprocess
    import sys
    import tempfile
    from dataclasses import replace
    from pathlib import Path

    from bench_store import DEPTH, generate, outcomes  # scripts/bench_store.py

    from evalplat.running.search_driver import score_and_finish
    from evalplat.store import Store
    from evalplat.testsets.content import load_testset

    relevance = ["nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10", "NumRet"]
    system = ["Latency", "Latency(p=95)", "ZeroResult"]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        qrels, topics = generate(folder, queries)
        content = load_testset(qrels, queries=topics)
        url = f"sqlite:///{folder / 'bench.db'}"
        store = Store.init(url)
        store.import_test_set("bench", content)
        store.add_config("bench", "python", {"function": "json:loads"})
        runs = []
        for seed in (1, 2):
            latency = np.random.default_rng(seed).lognormal(3.5, 0.5, queries)
            found = [replace(o, latency_ms=float(ms)) for o, ms in
                     zip(outcomes(queries, seed), latency, strict=True)]  # fmt: skip
            run_id = store.create_run(
                store.config_version_id("bench"), store.test_set_version_id("bench"),
                depth=DEPTH, queries_total=queries,
            )  # fmt: skip
            for first in range(0, queries, 1000):
                store.record_outcomes(run_id, found[first : first + 1000])
            score_and_finish(store, run_id, content, relevance + system)
            runs.append(run_id)
        store.close()
        base = [sys.executable, "-c", "from evalplat.__main__ import main; main()", "compare",
                str(runs[0]), str(runs[1]), "--db", url]  # fmt: skip
        sets = {"relevance": relevance, "relevance + system": relevance + system}
        timings: dict[str, list[float]] = {label: [] for label in sets}
        for _ in range(repeat):
            for label, names in sets.items():
                command = base + [arg for n in names for arg in ("--metric", n)]
                start = time.perf_counter()
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
                timings[label].append(time.perf_counter() - start)
    median = {label: statistics.median(values) for label, values in timings.items()}
    extra = median["relevance + system"] / median["relevance"] - 1
    print(
        f"evalplat compare, two stored {queries}-query runs, whole process: {len(relevance)} "
        f"metrics {median['relevance']:.2f} s, with the 3 system metrics "
        f"{median['relevance + system']:.2f} s ({extra:+.0%}), median of {repeat}"
    )


if __name__ == "__main__":
    main()
