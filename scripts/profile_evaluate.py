"""Where ``evaluate``'s time goes: each step of one evaluation, timed in one process.

Usage::

    python scripts/profile_evaluate.py --qrels QRELS --run RUN [-m nDCG@10 ...]

Runs the steps of :func:`evalplat.metrics.evaluation.evaluate` one after the other (reading the
qrels, reading the run, coding and joining, ordering, each measure, the JSON output) and prints,
per step, the wall time, the user and system CPU time of the whole process (every thread) and the
minor page faults. System time is mostly page faults: memory the process touches for the first
time is zeroed by the kernel. The workload of ``scripts/bench_evaluate.py`` is the usual input.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

METRICS = ["P@10", "R@100", "nDCG@10", "nDCG@100", "AP", "RR"]


class Steps:
    """Records (name, wall, user, sys, minor faults) of each step."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float, int, int]] = []

    def run(self, name: str, step: Callable[[], Any]) -> Any:
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        result = step()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        self.rows.append(
            (
                name,
                wall,
                after.ru_utime - before.ru_utime,
                after.ru_stime - before.ru_stime,
                after.ru_minflt - before.ru_minflt,
                after.ru_maxrss // 1024,
            )
        )
        return result

    def print(self) -> None:
        header = ("step", "wall s", "user s", "sys s", "faults", "peak MiB")
        print(f"{header[0]:<28} " + " ".join(f"{h:>7}" for h in header[1:5]) + f" {header[5]:>9}")
        for name, wall, user, system, faults, peak in self.rows:
            print(f"{name:<28} {wall:7.2f} {user:7.2f} {system:7.2f} {faults:7d} {peak:9d}")
        total = [sum(row[i] for row in self.rows) for i in (1, 2, 3, 4)]
        print(f"{'total':<28} {total[0]:7.2f} {total[1]:7.2f} {total[2]:7.2f} {int(total[3]):7d}")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"peak resident memory {peak} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("-m", "--metric", action="append", default=None)
    args = parser.parse_args()
    steps = Steps()

    def imports() -> None:
        import numpy  # noqa: F401
        import pyarrow.compute
        import pyarrow.csv  # noqa: F401

        import evalplat.metrics.build  # noqa: F401

    steps.run("import numpy, pyarrow", imports)
    import json

    import pyarrow.compute as pc

    from evalplat.formats.trec import read_qrels_table, read_run_table
    from evalplat.metrics import compute
    from evalplat.metrics.aggregate import aggregate
    from evalplat.metrics.build import build, code_qrels
    from evalplat.metrics.names import parse_all
    from evalplat.metrics.sources import MeasureInputs

    chosen = parse_all(args.metric or METRICS)
    qrels = steps.run("read qrels", lambda: read_qrels_table(args.qrels, check_duplicates=False))
    run = steps.run("read run", lambda: read_run_table(args.run, check_duplicates=False))
    column = qrels.column("query_id")
    topics = steps.run(
        "topics", lambda: pc.unique(column).take(pc.array_sort_indices(pc.unique(column)))
    )
    coded = steps.run("code the qrels", lambda: code_qrels(qrels, topics))
    judgments, ranking, _ = steps.run(
        "join, order the run (build)", lambda: build(coded, run, ordering="score")
    )
    inputs = MeasureInputs(len(topics), ranking, judgments)
    means: dict[str, float] = {}
    for metric in chosen:
        values = steps.run(f"measure {metric}", lambda metric=metric: compute(metric, inputs))
        means[str(metric)] = aggregate(metric, values)
    steps.run("JSON output", lambda: json.dumps({"means": means}))
    steps.print()


if __name__ == "__main__":
    main()
