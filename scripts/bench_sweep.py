"""Benchmark: ``evalplat sweep`` of the builtin engine on Cranfield, the searches' time apart
from evalplat's own.

Run: ``python scripts/bench_sweep.py [--db URL] [--concurrency N] [--grid ...]``. Imports the
bundled Cranfield collection (225 queries, 1400 documents) into a fresh SQLite database (or
``--db``), then sweeps 50 settings of the builtin engine (2 tokenizers, 5 title and 5 text weights)
and prints: the wall time, the engine's time (building the FTS5 indexes and answering queries,
timed around the searcher's calls), and evalplat's own time (everything else: storing results,
scoring, cross-validation, the bootstrap, the comparison) next to its yardstick, then the
in-sample and held-out gains. With ``--concurrency 1`` (the default) the engine's time is wall
time; with more, searches overlap and the split is not a sum. Not part of the test suite.
"""

from __future__ import annotations

import argparse
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
_engine_s = 0.0


def _timed(method: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _engine_s
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            with _lock:
                _engine_s += time.perf_counter() - start

    return wrapper


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
        start = time.perf_counter()
        plan = plan_sweep(store, "bm25", "cranfield", args.grid or GRID, options)
        result = sweep(store, plan)
        wall = time.perf_counter() - start
    held = result.held_out
    own = wall - _engine_s
    print(f"settings {len(result.rows)} x queries {len(content.queries)}, "
          f"concurrency {args.concurrency}")  # fmt: skip
    print(f"{'':28}{'measured':>10}{'yardstick':>12}")
    print(f"{'wall time (s)':28}{wall:10.1f}{'':>12}")
    print(f"{'engine: index + search (s)':28}{_engine_s:10.1f}{'':>12}")
    print(f"{'evalplat own time (s)':28}{own:10.1f}{YARDSTICK_S:12.1f}")
    print(f"{'per setting, own (s)':28}{own / len(result.rows):10.2f}")
    print(f"baseline {result.baseline} nDCG@10 {result.baseline_mean:.4f}; "
          f"in-sample best {result.winner} {held.in_sample_gain:+.4f}; "
          f"held-out {held.held_out_gain:+.4f} [{held.interval[0]:+.4f}, {held.interval[1]:+.4f}]"
          f"; winner vs baseline: {result.comparison.verdict}")  # fmt: skip
    print(result.verdict_line)


if __name__ == "__main__":
    main()
