"""Measure: how far Latency(p=95) moves between two runs of one unchanged engine (A/A pairs).

Run: ``python scripts/latency_noise.py [--pairs N] [--queries N] [--delay MS] [--busy N]
[--concurrency N]``. A ``python`` searcher that sleeps ``--delay`` ms per query (10 by default)
is run in pairs on a fresh SQLite database: both runs on a quiet machine, both while ``--busy``
child processes (2 by default) spin on the CPU, and the first quiet, the second busy (a night
on a machine that got busy). For every pair it prints both runs' p95, the
rise (ms and relative) and the verdict of ``compare`` with the default latency gate; then the
largest rise seen in each setting. These figures chose the latency gate's default absolute rise
(docs/regression-detection.md). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from evalplat.running import runner
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


def pairs(
    store: Store, sides: tuple[bool, bool], spinners: Spinners, count: int, concurrency: int
) -> list[tuple[float, float, float, float, str]]:
    """``count`` A/A pairs, each side run busy or not (``sides``): (p95 of A, p95 of B, rise
    in ms, relative rise, verdict of the default gate)."""
    rows = []
    settings = runner.RunSettings(concurrency=concurrency)
    for _ in range(count):
        ids = []
        for busy in sides:
            spinners.start() if busy else spinners.stop()
            ids.append(runner.run(store, "aa", "topics", settings=settings).id)
        spinners.stop()
        [row] = store.compare_runs(ids[0], ids[1], metrics=["Latency(p=95)"]).metrics
        rise = row.candidate - row.baseline
        rows.append((row.baseline, row.candidate, rise, rise / row.baseline, row.verdict))
        print(f"  p95 {row.baseline:7.2f} -> {row.candidate:7.2f} ms  rise {rise:+7.2f} ms "
              f"({rise / row.baseline:+6.1%})  {row.verdict}", flush=True)  # fmt: skip
    return rows


SETTINGS = {"quiet": (False, False), "busy": (True, True), "quiet then busy": (False, True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--delay", type=float, default=10.0, help="ms per query")
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
            store.add_config(
                "aa",
                "python",
                {"function": "aa_engine:search", "path": str(folder), "delay_ms": args.delay},
            )
            try:
                for name, sides in SETTINGS.items():
                    print(f"{name}: {args.pairs} A/A pairs, {args.queries} queries, "
                          f"{args.delay:g} ms, {args.busy} spinning when busy")  # fmt: skip
                    found[name] = pairs(store, sides, spinners, args.pairs, args.concurrency)
            finally:
                spinners.stop()
    for name, rows in found.items():
        worst = max(rows, key=lambda r: r[2])
        print(f"{name}: largest rise {worst[2]:+.2f} ms ({worst[3]:+.1%}), "
              f"p95 from {min(min(r[0], r[1]) for r in rows):.2f} to "
              f"{max(max(r[0], r[1]) for r in rows):.2f} ms, "
              f"regressions under the gate: {sum(r[4] == 'regression' for r in rows)}")  # fmt: skip


if __name__ == "__main__":
    main()
