"""Benchmark: ``evalplat sweep`` of the builtin engine on Cranfield, the searches' time apart
from evalplat's own.

Run: ``python scripts/bench_sweep.py [--db URL] [--concurrency N] [--grid ...]``. Imports the
bundled Cranfield collection (225 queries, 1400 documents) into a fresh SQLite database (or
``--db``), then sweeps 50 settings of the builtin engine (2 tokenizers, 5 title and 5 text weights)
and prints: the wall time, the engine's time (building the FTS5 indexes and answering queries,
timed around the searcher's calls), and evalplat's own time (everything else: storing results,
scoring, cross-validation, the bootstrap, the comparison) next to its yardstick, each as wall
time and as CPU time (user + sys of the process; the engine's measured on the threads that ran
it), then the in-sample and held-out gains. The same sweep then runs again on the same database,
every setting reused ("re-run"). With ``--concurrency 1`` (the default) the engine's time is
wall time; with more, searches overlap and the split is not a sum. On a busy machine wall time
waits for the processor: the load average is printed before and after. Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from evalplat.searchers import builtin
from evalplat.store import Store
from evalplat.testsets.content import load_testset

ROOT = Path(__file__).resolve().parents[1] / "testsets" / "cranfield"
GRID = ["tokenizer=porter,unicode61", "weights.title=0.5,1,2,3,5", "weights.text=0.5,1,2,4,8"]
YARDSTICK_S = 10.0  # "seconds of evalplat's own time beyond the searches" (issue 30)

_lock = threading.Lock()
_engine = [0.0, 0.0]  # wall, CPU (of the threads that ran the engine)


def _timed(method: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return method(*args, **kwargs)
        finally:
            with _lock:
                _engine[0] += time.perf_counter() - start
                _engine[1] += time.thread_time() - cpu

    return wrapper


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--grid", action="append", default=None)
    args = parser.parse_args()
    from evalplat.running.runner import RunSettings
    from evalplat.running.sweep import SweepOptions, plan_sweep, sweep

    searcher = builtin.BuiltinSearcher
    searcher.__init__ = _timed(searcher.__init__)  # type: ignore[method-assign]
    searcher.search_with_fields = _timed(searcher.search_with_fields)  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as folder:
        url = args.db or f"sqlite:///{folder}/bench.db"
        store = Store.init(url)
        content = load_testset(ROOT / "qrels.txt", ROOT / "queries.tsv", ROOT / "docs.jsonl")
        store.import_test_set("cranfield", content)
        store.add_config("bm25", "builtin", {})
        options = SweepOptions(settings=RunSettings(concurrency=args.concurrency, cache_dir=
                               Path(folder) / "cache"))  # fmt: skip
        print(f"load average before: {_load()}")
        timings = []
        for _ in ("first", "re-run"):
            _engine[:] = [0.0, 0.0]
            start, cpu = time.perf_counter(), time.process_time()
            plan = plan_sweep(store, "bm25", "cranfield", args.grid or GRID, options)
            result = sweep(store, plan)
            timings.append((time.perf_counter() - start, time.process_time() - cpu, *_engine))
        print(f"load average after: {_load()}")
    held = result.held_out
    print(f"settings {len(result.rows)} x queries {len(content.queries)}, "
          f"concurrency {args.concurrency}")  # fmt: skip
    print(f"{'':28}{'wall':>8}{'CPU':>8}{'re-run':>8}{'CPU':>8}{'yardstick':>11}")
    (wall, cpu, engine, engine_cpu), (again, again_cpu, _, _) = timings
    rows = [
        ("sweep (s)", wall, cpu, again, again_cpu),
        ("engine: index + search (s)", engine, engine_cpu, 0.0, 0.0),
        ("evalplat own time (s)", wall - engine, cpu - engine_cpu, again, again_cpu),
    ]
    for name, *values in rows:
        print(f"{name:28}" + "".join(f"{value:8.1f}" for value in values)
              + (f"{YARDSTICK_S:11.1f}" if name.startswith("evalplat") else ""))  # fmt: skip
    settings = len(result.rows)
    print(f"{'per setting, own (s)':28}{(wall - engine) / settings:8.2f}"
          f"{(cpu - engine_cpu) / settings:8.2f}{again / settings:8.2f}"
          f"{again_cpu / settings:8.2f}")  # fmt: skip
    print(f"baseline {result.baseline} nDCG@10 {result.baseline_mean:.4f}; "
          f"in-sample best {result.winner} {held.in_sample_gain:+.4f}; "
          f"held-out {held.held_out_gain:+.4f} [{held.interval[0]:+.4f}, {held.interval[1]:+.4f}]"
          f"; winner vs baseline: {result.comparison.verdict}")  # fmt: skip
    print(result.verdict_line)


if __name__ == "__main__":
    main()
