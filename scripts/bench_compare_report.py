"""Benchmark ``evalplat compare A B --metric nDCG@10 --metric AP --report page.html``, paired.

Two stored 10k-query runs of 100 results each (1M results per run, the test set of
``bench_store.py``) are built once in a database given with ``--db`` (``--build``), then the
command runs as a fresh process, alternating between the source trees given with ``--source``
(the current checkout when none is given), ``--repeat`` times each, and prints each tree's
wall times and CPU times (user + system: on a machine shared with other work the CPU time moves
less with the load than the wall time does). Every tree's page is kept
and compared byte for byte with the first tree's (the comparison's id and the time it was made
aside, which differ from one stored comparison to the next). Run from the repository root::

    python scripts/bench_compare_report.py --db sqlite:////tmp/pair.db --build
    python scripts/bench_compare_report.py --db sqlite:////tmp/pair.db \\
        --source /path/to/older/checkout --source . --repeat 5

Each ``--source`` is put first on ``PYTHONPATH``; the command runs from a scratch folder so that
the working directory does not shadow it. With ``--yardstick DIR`` each round also times Y,
``evalplat evaluate`` (from the last ``--source``) of the 1M-line run ``bench_evaluate.py``
writes once into ``DIR``, and every tree's medians are printed as multiples of Y's.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = 10_000
METRICS = ["nDCG@10", "AP", "Judged@10"]


def build(url: str, queries: int) -> tuple[int, int]:
    """Import the test set and store, score and finish two runs; their ids."""
    from bench_store import DEPTH, generate, outcomes  # scripts/bench_store.py

    from evalplat.running.search_driver import score_and_finish
    from evalplat.store import Store
    from evalplat.testsets.content import load_testset

    with tempfile.TemporaryDirectory() as name:
        qrels, topics = generate(Path(name), queries)
        content = load_testset(qrels, queries=topics)
    store = Store.init(url)
    store.import_test_set("bench", content)
    store.add_config("bench", "python", {"function": "json:loads"})
    runs = []
    for seed in (1, 2):
        found = outcomes(queries, seed)
        run_id = store.create_run(
            store.config_version_id("bench"),
            store.test_set_version_id("bench"),
            depth=DEPTH,
            queries_total=queries,
        )
        for first in range(0, queries, 1000):
            store.record_outcomes(run_id, found[first : first + 1000])
        score_and_finish(store, run_id, content, METRICS)
        runs.append(run_id)
    store.close()
    return runs[0], runs[1]


# what differs between two stored comparisons of the same pair: the id and the time made
_VOLATILE = re.compile(rb"comparison \d+|\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(\+00:00)?")


def timed(source: Path, command: list[str], page: Path | None) -> tuple[float, float]:
    """(wall time, CPU time: user + system) of one run of the command."""
    env = dict(os.environ, PYTHONPATH=str(source))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [*command, *([] if page is None else ["--report", str(page)])],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
            cwd=scratch,
        )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="database URL holding (or to hold) the pair")
    parser.add_argument("--build", action="store_true", help="store the two runs first")
    parser.add_argument("--queries", type=int, default=QUERIES)
    parser.add_argument("--runs", default="1,2", help="the pair's run ids (default 1,2)")
    parser.add_argument("--source", action="append", type=Path, help="source tree, repeatable")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--yardstick", type=Path, help="also time Y (evaluate of 1M lines) from this workload dir"
    )
    args = parser.parse_args()
    if args.build:
        baseline, candidate = build(args.db, args.queries)
        print(f"stored runs {baseline} and {candidate} in {args.db}", flush=True)
        return
    baseline, candidate = args.runs.split(",")
    sources = [s.resolve() for s in args.source or [Path(".")]]
    command = [sys.executable, "-c", "from evalplat.__main__ import main; main()", "compare"]
    command += [baseline, candidate, "--metric", "nDCG@10", "--metric", "AP", "--db", args.db]
    timings: dict[Path, list[tuple[float, float]]] = {s: [] for s in sources}
    yardstick = None if args.yardstick is None else evaluate_command(args.yardstick.resolve())
    ys: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as name:
        pages = {s: Path(name) / f"page{i}.html" for i, s in enumerate(sources)}
        # alternate the trees so that a change in the machine's load weighs on each alike
        for _ in range(args.repeat):
            for source in sources:
                timings[source].append(timed(source, command, pages[source]))
            if yardstick is not None:
                ys.append(timed(sources[-1], yardstick, None))
        if ys:
            y_wall = statistics.median(wall for wall, _ in ys)
            y_cpu = statistics.median(cpu for _, cpu in ys)
            print(f"Y (evaluate, 1M lines): wall median {y_wall:.2f} s, CPU median {y_cpu:.2f} s "
                  f"[{', '.join(f'{w:.2f}/{c:.2f}' for w, c in ys)}]", flush=True)  # fmt: skip
        first = _VOLATILE.sub(b"", pages[sources[0]].read_bytes())
        for source in sources:
            walls = [wall for wall, _ in timings[source]]
            cpus = [cpu for _, cpu in timings[source]]
            same = _VOLATILE.sub(b"", pages[source].read_bytes()) == first
            print(
                f"{source}: wall {min(walls):.2f}-{max(walls):.2f} s (median "
                f"{statistics.median(walls):.2f}), CPU {min(cpus):.2f}-{max(cpus):.2f} s (median "
                f"{statistics.median(cpus):.2f}), {args.repeat} runs "
                f"[{', '.join(f'{w:.2f}/{c:.2f}' for w, c in timings[source])}]; page "
                f"{'the same' if same else 'DIFFERENT'}"
                + (
                    f"; {statistics.median(walls) / y_wall:.1f} Y wall, "
                    f"{statistics.median(cpus) / y_cpu:.1f} Y CPU (goal 2 Y)"
                    if ys
                    else ""
                ),
                flush=True,
            )


def evaluate_command(folder: Path) -> list[str]:
    """Y's command line: ``evaluate`` of the 1M-line run and qrels of ``bench_evaluate.py``
    (written into ``folder`` on first use), with that benchmark's measures."""
    from bench_evaluate import METRICS as MEASURES  # scripts/bench_evaluate.py
    from bench_evaluate import generate

    qrels, run = generate(folder, 100)
    measures = [arg for name in MEASURES for arg in ("-m", name)]
    return [sys.executable, "-c", "from evalplat.__main__ import main; main()", "evaluate",
            "--qrels", str(qrels), "--run", str(run), *measures, "--format", "json"]  # fmt: skip


if __name__ == "__main__":
    main()
