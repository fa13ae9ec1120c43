"""Benchmark ``evalplat evaluate`` against pytrec_eval, ranx and ir_measures, whole process.

Usage::

    pip install -e '.[bench]'            # pytrec-eval-terrier, ranx, ir-measures
    python scripts/bench_evaluate.py [--dir bench-data] [--repeats 3] [--large]
    python scripts/bench_evaluate.py --queries 1000,10000,100000   # the scaling series

A deterministic workload (seeded) is written once to ``--dir``: 10,000 queries with 100 results
each (1M run lines) and, with ``--large``, 1,000 results each (10M lines); graded qrels (0-3) with
about 60 judgments per query, two thirds of them on retrieved documents; scores rounded to two
decimals so that ties occur (about one row in five), broken by doc id as trec_eval does. Every
tool runs as a fresh process reading the same two files and computing the same measures
(P@10, R@100, nDCG@10, nDCG@100, AP, RR); the table shows the median wall time, the peak
resident memory of the process (``wait4`` rusage) and the ratio to pytrec_eval. Tools that are not
installed are skipped. Means are compared with evalplat's at 4 decimals.

Measured on the development machine (2 shared cores, Python 3.11; medians of 3 interleaved runs;
the machine was shared, so single runs vary by up to 2x):

    1M lines    evalplat 1.23 s / 331 MiB   pytrec_eval 2.02 s / 288 MiB (0.61x time, 1.15x mem)
                ir_measures 4.35 s (2.16x)   ranx 14.6 s (6.4x, numba compilation included)
    10M lines   evalplat 5.6-7.0 s / 1324 MiB   pytrec_eval 14.0-15.4 s / 1744 MiB
                (0.40-0.45x time, 0.76x mem)   ir_measures 24-26 s (1.7x)

With the engine's lower-memory build, paired with the code before it (``--baseline``), 3
interleaved rounds on a machine at load average 15-18, so only CPU time and memory compare:

    1M lines    evalplat CPU 1.32 s / 271 MiB   before 1.42 s / 342 MiB
                pytrec_eval 1.43 s / 288 MiB (0.92x CPU, 0.94x memory; before 0.99x, 1.19x)
    10M lines   evalplat CPU 6.27 s / 897 MiB   before 8.07 s / 1147 MiB
                pytrec_eval 9.25 s / 1744 MiB (0.68x CPU, 0.51x memory; before 0.87x, 0.66x)

All tools agree with evalplat's means to 1e-14, except ranx (9.6e-05: it breaks score ties by
file order, not by doc id as trec_eval does).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = 10_000
JUDGED_PER_QUERY = 60
DOC_POOL = 2_000_000
METRICS = ["P@10", "R@100", "nDCG@10", "nDCG@100", "AP", "RR"]

# Each peer reads the files the way its documentation shows and prints {metric: mean} as JSON.
PYTREC_EVAL = """
import json, sys, pytrec_eval
def read(path, run):
    data = {}
    with open(path) as handle:
        for line in handle:
            f = line.split()
            if run:
                data.setdefault(f[0], {})[f[2]] = float(f[4])
            else:
                data.setdefault(f[0], {})[f[2]] = int(f[3])
    return data
qrels, run = read(sys.argv[1], False), read(sys.argv[2], True)
measures = {"P_10", "recall_100", "ndcg_cut_10", "ndcg_cut_100", "map", "recip_rank"}
scores = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = {"P_10": "P@10", "recall_100": "R@100", "ndcg_cut_10": "nDCG@10",
         "ndcg_cut_100": "nDCG@100", "map": "AP", "recip_rank": "RR"}
# trec_eval -c semantics: every qrels query counts, a query without results scores 0
means = {ours: sum(s.get(m, 0.0) for s in scores.values()) / len(qrels)
         for m, ours in names.items()}
print(json.dumps(means))
"""

RANX = """
import json, sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
names = {"precision@10": "P@10", "recall@100": "R@100", "ndcg@10": "nDCG@10",
         "ndcg@100": "nDCG@100", "map": "AP", "mrr": "RR"}
scores = evaluate(qrels, run, list(names), make_comparable=True)
print(json.dumps({ours: float(scores[m]) for m, ours in names.items()}))
"""

IR_MEASURES = """
import json, sys, ir_measures
from ir_measures import P, R, nDCG, AP, RR
measures = [P@10, R@100, nDCG@10, nDCG@100, AP, RR]
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
result = ir_measures.calc_aggregate(measures, qrels, ir_measures.read_trec_run(sys.argv[2]))
print(json.dumps({str(m): float(v) for m, v in result.items()}))
"""

EVALPLAT_JSON = """
import json, sys
from evalplat.metrics.evaluation import evaluate
print(json.dumps(evaluate(sys.argv[1], sys.argv[2], sys.argv[3:]).means))
"""


def generate(folder: Path, depth: int, queries: int = QUERIES) -> tuple[Path, Path]:
    """Write (once) the qrels and the run with ``depth`` results per query; returns their paths."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    size = f"{depth}" if queries == QUERIES else f"{queries}x{depth}"
    qrels_path, run_path = folder / f"qrels.{size}.txt", folder / f"run.{size}.txt"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    seed = 20240611 + depth if queries == QUERIES else 20240611 + depth + queries
    rng = np.random.default_rng(seed)
    with open(run_path, "w") as run_file, open(qrels_path, "w") as qrels_file:
        for query in range(queries):
            qid = f"q{query}"
            docs = rng.choice(DOC_POOL, size=depth, replace=False)
            scores = np.round(np.sort(rng.gamma(2.0, 4.0, size=depth))[::-1], 2)
            names = [f"D{d}" for d in docs]
            # file order: score desc, ties by doc id ascending (trec_eval will re-break them)
            order = sorted(range(depth), key=lambda i: (-scores[i], names[i]))
            run_file.write(
                "".join(
                    f"{qid} Q0 {names[i]} {rank} {scores[i]:.2f} bench\n"
                    for rank, i in enumerate(order, start=1)
                )
            )
            retrieved = rng.choice(depth, size=min(depth, 2 * JUDGED_PER_QUERY // 3), replace=False)
            judged = [names[i] for i in retrieved]
            judged += [f"D{d}" for d in rng.choice(DOC_POOL, size=JUDGED_PER_QUERY - len(judged))]
            grades = rng.choice(4, size=len(judged), p=[0.55, 0.25, 0.13, 0.07])
            seen: set[str] = set()
            lines = []
            for doc, grade in zip(judged, grades, strict=True):
                if doc not in seen:
                    seen.add(doc)
                    lines.append(f"{qid} 0 {doc} {grade}\n")
            qrels_file.write("".join(lines))
    return qrels_path, run_path


def measure(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str, float]:
    """Run ``command`` as a fresh process: (wall seconds, peak RSS in MiB, stdout, CPU seconds:
    user + system of the process and its threads, which a busy machine disturbs less)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stdout_chunks = []
    if process.stdout is not None:
        stdout_chunks.append(process.stdout.read())
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode() if process.stderr else ""
    if process.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed ({process.returncode}): {stderr[-500:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, usage.ru_maxrss // 1024, b"".join(stdout_chunks).decode(), cpu


def tools(qrels: Path, run: Path, wanted: list[str]) -> dict[str, list[str]]:
    """Command line of each wanted tool that is installed."""
    python = sys.executable
    cli = shutil.which("evalplat", path=str(Path(python).parent)) or shutil.which("evalplat")
    metric_args = [arg for name in METRICS for arg in ("-m", name)]
    commands: dict[str, list[str]] = {}
    if cli:
        commands["evalplat"] = [cli, "evaluate", "--qrels", str(qrels), "--run", str(run),
                                *metric_args, "--format", "json"]  # fmt: skip
    else:
        commands["evalplat"] = [python, "-c", EVALPLAT_JSON, str(qrels), str(run), *METRICS]
    peers = (("pytrec_eval", "pytrec_eval", PYTREC_EVAL), ("ranx", "ranx", RANX),
             ("ir_measures", "ir_measures", IR_MEASURES))  # fmt: skip
    for name, module, script in peers:
        if name not in wanted:
            continue
        probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
        if probe.returncode == 0:
            commands[name] = [python, "-c", script, str(qrels), str(run)]
        else:
            print(f"({name} is not installed: skipped)", file=sys.stderr)
    return commands


def means_of(tool: str, stdout: str) -> dict[str, float]:
    data = json.loads(stdout)
    means = data["means"] if tool.startswith("evalplat") else data
    return {k: float(v) for k, v in means.items()}


def bench(
    depth: int,
    folder: Path,
    repeats: int,
    wanted: list[str],
    queries: int = QUERIES,
    baseline: Path | None = None,
) -> None:
    qrels, run = generate(folder, depth, queries)
    lines = queries * depth
    print(f"\n{lines:,} run lines ({queries:,} queries x {depth}), {repeats} runs per tool")
    results: dict[str, tuple[float, int, dict[str, float], float]] = {}
    commands = tools(qrels, run, wanted)
    envs: dict[str, dict[str, str] | None] = {tool: None for tool in commands}
    if baseline is not None:  # the same command on another source tree, e.g. a checkout of main
        commands["evalplat@base"] = commands["evalplat"]
        envs["evalplat@base"] = {**os.environ, "PYTHONPATH": str(baseline.resolve())}
    samples: dict[str, list[tuple[float, int, str, float]]] = {tool: [] for tool in commands}
    # interleaved rounds, so that a busy spell on a shared machine hits every tool alike
    for _ in range(repeats):
        for tool, command in commands.items():
            samples[tool].append(measure(command, envs[tool]))
    for tool, runs in samples.items():
        seconds = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[3] for r in runs)
        results[tool] = (seconds, max(r[1] for r in runs), means_of(tool, runs[-1][2]), cpu)
    reference = results.get("pytrec_eval")
    ours = results["evalplat"][2]
    print(f"{'tool':<12} {'median s':>9} {'CPU s':>7} {'peak MiB':>9} {'time ratio':>11} "
          f"{'CPU ratio':>10} {'mem ratio':>10}  max |mean diff| vs evalplat")  # fmt: skip
    for tool, (seconds, peak, means, cpu) in results.items():
        time_ratio = f"{seconds / reference[0]:.2f}x" if reference else "-"
        cpu_ratio = f"{cpu / reference[3]:.2f}x" if reference else "-"
        mem_ratio = f"{peak / reference[1]:.2f}x" if reference else "-"
        diff = max(abs(means.get(m, float("nan")) - ours[m]) for m in METRICS)
        print(f"{tool:<12} {seconds:9.2f} {cpu:7.2f} {peak:9d} {time_ratio:>11} {cpu_ratio:>10} "
              f"{mem_ratio:>10}  {diff:.2e}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("bench-data"), help="workload folder")
    parser.add_argument("--repeats", type=int, default=3, help="runs per tool (median shown)")
    parser.add_argument("--large", action="store_true", help="also run the 10M-line workload")
    parser.add_argument(
        "--tools",
        default="pytrec_eval,ranx,ir_measures",
        help="peers to run besides evalplat, comma-separated (ranx compiles with numba: slow)",
    )
    parser.add_argument(
        "--queries",
        default="",
        help="a scaling series instead: query counts at 100 results each, e.g. 1000,10000,100000",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="also run evalplat from this source tree (e.g. a checkout of main), interleaved",
    )
    args = parser.parse_args()
    wanted = [name.strip() for name in args.tools.split(",") if name.strip()]
    startup()
    if args.queries:
        for queries in (int(value) for value in args.queries.split(",")):
            bench(100, args.dir, args.repeats, wanted, queries, args.baseline)
        return
    bench(100, args.dir, args.repeats, wanted, baseline=args.baseline)
    if args.large:
        bench(1000, args.dir, args.repeats, wanted, baseline=args.baseline)


def startup() -> None:
    """The fixed cost: ``evalplat --version``, and ``evaluate`` of trec_eval's 1,500-line test
    run (medians of 5)."""
    cli = shutil.which("evalplat", path=str(Path(sys.executable).parent)) or "evalplat"
    tiny = Path(__file__).resolve().parents[1] / "tests" / "data" / "trec_eval"
    qrels, run = tiny / "qrels.test", tiny / "results.test"
    version = statistics.median(measure([cli, "--version"])[0] for _ in range(5))
    command = [cli, "evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "P@10"]
    evaluate = statistics.median(measure(command)[0] for _ in range(5))
    print(f"start-up: evalplat --version {version:.3f} s; evaluate on {run.name} {evaluate:.3f} s")


if __name__ == "__main__":
    main()
