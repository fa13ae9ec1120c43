"""Measure: how often a latency gate alerts, under the old rule and the paired one, on an
unchanged engine whose machine goes from quiet to busy (A/A), and on an engine slowed from 10
to 30 ms per query.

Run: ``python scripts/latency_noise.py [--pairs N] [--queries N] [--busy N]
[--concurrency N]``. A ``python`` searcher that sleeps ``delay_ms`` per query (10 ms; 30 ms for
the slowed one) is run in pairs on a fresh SQLite database, each side on a quiet machine or
while ``--busy`` child processes (2 by default) spin on the CPU. For every pair it prints both
runs' p95 and the verdict of ``Latency(p=95)`` under

- **old**: two runs timed apart, a paired bootstrap of the difference of the percentiles
  (p < 0.05) and a rise of more than 20 % and 35 ms (the rule before paired timings);
- **old, no floor**: the same with the 20 % alone (what dropping the 35 ms would have done);
- **paired**: both versions timed again together, query by query, after the second run, in
  its load (``evalplat.running.paired_timing``), decided by the signed-rank test of the log
  ratios and a Hodges-Lehmann slowdown of 20 % (``evalplat.comparison.paired_latency``);

then how many pairs of each setting alerted under each rule (docs/regression-detection.md).
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from evalplat.comparison import stats
from evalplat.comparison.results import Gate
from evalplat.comparison.thresholds import beyond
from evalplat.metrics.aggregate import aggregate
from evalplat.metrics.registry import parse
from evalplat.running import runner
from evalplat.running.paired_timing import time_pairs
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

ENGINE = """
import time


def search(query, depth, delay_ms=10.0, **params):
    time.sleep(delay_ms / 1000.0)
    topic = query.split()[-1]
    return [("d" + topic, 2.0), ("n" + topic, 1.0)]
"""
SPIN = "while True:\n    pass\n"
METRIC = "Latency(p=95)"
RULES = ("old", "old, no floor", "paired")


def content(queries: int) -> TestSetContent:
    ids = [f"q{n}" for n in range(queries)]
    return TestSetContent(
        queries=pd.DataFrame({"query_id": ids, "text": [f"topic {n}" for n in range(queries)],
                              "weight": [float("nan")] * queries, "tags": [None] * queries}),
        judgments=pd.DataFrame({"query_id": ids, "doc_id": [f"d{n}" for n in range(queries)],
                                "grade": [1] * queries, "source": [None] * queries}),
    )  # fmt: skip


class Spinners:
    """``count`` child processes spinning on the CPU while started."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> None:
        if not self.processes:
            self.processes = [subprocess.Popen([sys.executable, "-c", SPIN])
                              for _ in range(self.count)]  # fmt: skip

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()
        self.processes = []


def old_verdict(store: Store, a: int, b: int, floor: float | None) -> tuple[float, float, str]:
    """Both runs' p95 and the verdict of the rule on two runs timed apart."""
    metric = parse(METRIC)
    sides = []
    for run_id in (a, b):
        scores = store.evaluation_scores(run_id)
        sides.append(scores[scores["metric"] == METRIC].set_index("query_id")["value"])
    left, right = sides[0].to_numpy(np.float64), sides[1].loc[sides[0].index].to_numpy(np.float64)
    p, _ = stats.bootstrap_difference(left, right, metric, n=2000, seed=0)
    base, cand = aggregate(metric, left, None), aggregate(metric, right, None)
    rise = cand - base
    credible = p < 0.05 and beyond(abs(rise), base, floor, 0.2)
    return base, cand, ("regression" if rise > 0 else "improvement") if credible else "unchanged"


def pairs(
    store: Store, setting: tuple[bool, bool, str], spinners: Spinners, count: int, threads: int
) -> list[dict[str, str]]:
    """``count`` pairs of runs, each side busy or not, the second of config ``setting[2]``."""
    rows = []
    run_settings = runner.RunSettings(concurrency=threads)
    for _ in range(count):
        ids = []
        for busy, config in ((setting[0], "aa"), (setting[1], setting[2])):
            spinners.start() if busy else spinners.stop()
            ids.append(runner.run(store, config, "topics", settings=run_settings).id)
        time_pairs(store, ids[0], ids[1])  # in the second run's load, as a night does
        spinners.stop()
        base, cand, old = old_verdict(store, ids[0], ids[1], 35.0)
        _, _, no_floor = old_verdict(store, ids[0], ids[1], None)
        [row] = store.compare_runs(ids[0], ids[1], metrics=[METRIC], gates=[Gate(METRIC)]).metrics
        verdicts = {"old": old, "old, no floor": no_floor, "paired": row.verdict}
        rows.append(verdicts)
        print(f"  p95 {base:7.2f} -> {cand:7.2f} ms  typical x{row.timing_ratio:.3f} paired  "
              + "  ".join(f"{rule}: {v}" for rule, v in verdicts.items()), flush=True)  # fmt: skip
    return rows


SETTINGS = {
    "A/A quiet": (False, False, "aa"),
    "A/A busy": (True, True, "aa"),
    "A/A quiet then busy": (False, True, "aa"),
    "10 -> 30 ms quiet": (False, False, "slow"),
    "10 -> 30 ms quiet then busy": (False, True, "slow"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--busy", type=int, default=2, help="spinning processes")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    found = {}
    spinners = Spinners(args.busy)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "aa_engine.py").write_text(ENGINE, encoding="utf-8")
        with Store.init(f"sqlite:///{folder / 'noise.db'}") as store:
            store.import_test_set("topics", content(args.queries))
            for name, delay in (("aa", 10.0), ("slow", 30.0)):
                params = {"function": "aa_engine:search", "path": str(folder), "delay_ms": delay}
                store.add_config(name, "python", params)
            try:
                for name, setting in SETTINGS.items():
                    print(f"{name}: {args.pairs} pairs, {args.queries} queries, "
                          f"{args.busy} spinning when busy", flush=True)  # fmt: skip
                    found[name] = pairs(store, setting, spinners, args.pairs, args.concurrency)
            finally:
                spinners.stop()
    for name, rows in found.items():
        counts = ", ".join(f"{rule} {sum(r[rule] == 'regression' for r in rows)}" for rule in RULES)
        print(f"{name}: regressions of {len(rows)} pairs: {counts}")


if __name__ == "__main__":
    main()
