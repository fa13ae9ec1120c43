"""Measure: how often a latency gate alerts, under the old rule and the paired one, on an
unchanged engine whose machine goes from quiet to busy (A/A), and on an engine slowed from 10
to 30 ms per query.

Run: ``python scripts/latency_noise.py [--pairs N] [--queries N] [--delay-ms MS] [--sample N]
[--busy N] [--concurrency N] [--http]``. A ``python`` searcher that sleeps ``--delay-ms`` per
query (10 ms; three times that for the slowed one), or with ``--http`` an ``http`` searcher
against a server on 127.0.0.1 that does (timings of a loopback request vary far more), is run
in pairs on a fresh SQLite database, each side on a quiet machine or while ``--busy`` child
processes (2 by default) spin on the CPU;
``--sample`` is how many pairs the paired timing takes (200, as a night does; the test set's
size times each query once, as it did before small sets were timed round after round). For
every pair it prints both runs' p95 and the verdict of ``Latency(p=95)`` under

- **old**: two runs timed apart, a paired bootstrap of the difference of the percentiles
  (p < 0.05) and a rise of more than 20 % and 35 ms (the rule before paired timings);
- **old, no floor**: the same with the 20 % alone (what dropping the 35 ms would have done);
- **paired about 0**: both versions timed again together, query by query, after the second
  run, in its load (``evalplat.running.paired_timing``), decided by the signed-rank test of
  the log ratios about 0 and a Hodges-Lehmann slowdown of 20 % (the paired rule before it
  tested beyond the threshold);
- **paired**: the same timings, decided by the signed-rank test of a shift beyond the 20 %
  and the same slowdown (``evalplat.comparison.paired_latency``, the rule in use);

then how many pairs of each setting alerted under each rule (docs/regression-detection.md).
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pandas as pd

from evalplat.comparison import stats
from evalplat.comparison.paired_latency import measure_pairs, paired_verdict
from evalplat.comparison.results import Gate
from evalplat.comparison.thresholds import beyond
from evalplat.metrics.aggregate import aggregate
from evalplat.metrics.names import parse
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


class Engine(ThreadingHTTPServer):
    """``GET /{delay_ms}?q=TEXT`` sleeps ``delay_ms`` and answers ``{"results": [...]}``."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)

    def url(self, delay_ms: float) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{delay_ms}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        time.sleep(float(path.strip("/")) / 1000.0)
        topic = parse_qs(query).get("q", ["0"])[0].split()[-1]
        hits = [{"id": "d" + topic, "score": 2.0}, {"id": "n" + topic, "score": 1.0}]
        body = json.dumps({"results": hits}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


SPIN = "while True:\n    pass\n"
METRIC = "Latency(p=95)"
FIGURE = lambda values: aggregate(parse(METRIC), values, None)  # noqa: E731
RULES = ("old", "old, no floor", "paired about 0", "paired")


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
    store: Store,
    setting: tuple[bool, bool, str],
    spinners: Spinners,
    count: int,
    threads: int,
    sample: int,
) -> list[dict[str, str]]:
    """``count`` pairs of runs, each side busy or not, the second of config ``setting[2]``."""
    rows = []
    run_settings = runner.RunSettings(concurrency=threads)
    for _ in range(count):
        ids = []
        for busy, config in ((setting[0], "aa"), (setting[1], setting[2])):
            spinners.start() if busy else spinners.stop()
            ids.append(runner.run(store, config, "topics", settings=run_settings).id)
        # in the second run's load, as a night does
        timings = time_pairs(store, ids[0], ids[1], sample=sample)
        spinners.stop()
        base, cand, old = old_verdict(store, ids[0], ids[1], 35.0)
        _, _, no_floor = old_verdict(store, ids[0], ids[1], None)
        [row] = store.compare_runs(ids[0], ids[1], metrics=[METRIC], gates=[Gate(METRIC)]).metrics
        about_zero = paired_verdict(measure_pairs(timings, FIGURE), 0.05, 0.2)
        verdicts = {"old": old, "old, no floor": no_floor, "paired about 0": about_zero,
                    "paired": row.verdict}  # fmt: skip
        rows.append(verdicts)
        print(f"  p95 {base:7.2f} -> {cand:7.2f} ms  typical x{row.timing_ratio:.3f} paired  "
              + "  ".join(f"{rule}: {v}" for rule, v in verdicts.items()), flush=True)  # fmt: skip
    return rows


SETTINGS = {
    "A/A quiet": (False, False, "aa"),
    "A/A busy": (True, True, "aa"),
    "A/A quiet then busy": (False, True, "aa"),
    "3x slower quiet": (False, False, "slow"),
    "3x slower quiet then busy": (False, True, "slow"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--http", action="store_true", help="an http engine on 127.0.0.1")
    parser.add_argument("--sample", type=int, default=200, help="pairs timed together")
    parser.add_argument("--delay-ms", type=float, default=10.0, help="the engine's sleep")
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
            engine = Engine()
            threading.Thread(target=engine.serve_forever, daemon=True).start()
            for name, delay in (("aa", args.delay_ms), ("slow", 3 * args.delay_ms)):
                if args.http:
                    params = {"url": engine.url(delay), "query_params": {"q": "{{ query }}"},
                              "results_path": "results"}  # fmt: skip
                    store.add_config(name, "http", params)
                    continue
                params = {"function": "aa_engine:search", "path": str(folder), "delay_ms": delay}
                store.add_config(name, "python", params)
            try:
                for name, setting in SETTINGS.items():
                    print(f"{name}: {args.pairs} pairs, {args.queries} queries, "
                          f"{args.busy} spinning when busy", flush=True)  # fmt: skip
                    found[name] = pairs(store, setting, spinners, args.pairs, args.concurrency,
                                        args.sample)  # fmt: skip
            finally:
                spinners.stop()
    for name, rows in found.items():
        counts = ", ".join(f"{rule} {sum(r[rule] == 'regression' for r in rows)}" for rule in RULES)
        print(f"{name}: regressions of {len(rows)} pairs: {counts}")


if __name__ == "__main__":
    main()
