"""Benchmark: the leaderboard's family-wise false-positive rate, and its time at 50 runs.

Run: ``python scripts/bench_leaderboard.py [--repetitions 200] [--runs 12] [--queries 225]
[--big-runs 50] [--big-queries 10000] [--metrics 1]``.

1. **A/A**: ``--repetitions`` leaderboards of ``--runs`` runs over ``--queries`` queries, every
   run drawn from one distribution (per query a shared difficulty plus independent noise, the
   same for every run), on one metric at the command's defaults (alpha 0.05, 1,000 HSD draws,
   10,000 sign flips, seeds 0, 1, 2, ...). Prints how many boards flagged anything: a pair
   apart in the letters (Tukey HSD, family-wise at alpha = 5 %, the yardstick), a verdict
   against the baseline (each pair's own, as ``compare`` decides it), either; with the
   binomial 95 % interval of each observed share.
2. **Planted**: the same with 3 of the runs better by 0.06 (a margin 225 queries resolve):
   how often the 3 are told apart from the baseline and from the 8 equal runs.
3. **Time**: one leaderboard of ``--big-runs`` x ``--big-queries`` on ``--metrics`` metrics,
   split into the three procedures, beside the yardstick of seconds.

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from evalplat.comparison.leaderboard import Leaderboard, LeaderboardOptions, leaderboard

METRICS = ["nDCG@10", "AP", "P@10", "RR", "R@100"]


def boards(
    runs: int, queries: int, seed: int, better: tuple[int, ...] = (), margin: float = 0.06,
    metrics: int = 1,
) -> tuple[list[str], list[pd.DataFrame]]:  # fmt: skip
    """Per-query scores in [0, 1]: a difficulty per query shared by every run, noise per run."""
    rng = np.random.default_rng(10_000 + seed)
    ids = [f"q{i}" for i in range(queries)]
    names = METRICS[:metrics]
    frames = []
    difficulty = {name: rng.beta(2, 3, size=queries) for name in names}
    for j in range(runs):
        parts = []
        for name in names:
            noise = rng.normal(0.0, 0.12, size=queries)
            values = np.clip(difficulty[name] + noise + (margin if j in better else 0.0), 0, 1)
            parts.append(pd.DataFrame({"query_id": ids, "metric": name, "value": values}))
        frames.append(pd.concat(parts, ignore_index=True))
    return names, frames


def flags(board: Leaderboard) -> tuple[bool, bool]:
    """(a pair differs in the letters, a run differs from the baseline)."""
    pairs = any(p.differ for m in board.metrics for p in m.pairs)
    holm = any(s.verdict not in (None, "unchanged") for m in board.metrics for s in m.standings)
    return pairs, holm


def interval(hits: int, n: int) -> str:
    low, high = scipy_stats.binomtest(hits, n).proportion_ci(0.95)
    return f"{hits / n:6.1%} [{low:.1%}, {high:.1%}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--queries", type=int, default=225)
    parser.add_argument("--big-runs", type=int, default=50)
    parser.add_argument("--big-queries", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=1)
    parser.add_argument("--only-time", action="store_true", help="skip the A/A and planted parts")
    args = parser.parse_args()
    if not args.only_time:
        _rates(args)
    _time(args)


def _rates(args: argparse.Namespace) -> None:
    labels = [f"run{j}" for j in range(args.runs)]

    pair_hits = holm_hits = any_hits = 0
    start = time.perf_counter()
    for rep in range(args.repetitions):
        names, frames = boards(args.runs, args.queries, rep)
        board = leaderboard(labels, frames, names, options=LeaderboardOptions(seed=rep))
        pairs, holm = flags(board)
        pair_hits += pairs
        holm_hits += holm
        any_hits += pairs or holm
    elapsed = time.perf_counter() - start
    n = args.repetitions
    print(f"A/A: {n} boards of {args.runs} equal runs x {args.queries} queries, 1 metric "
          f"({elapsed:.1f} s)")  # fmt: skip
    print(f"  flagged a pair (Tukey HSD, alpha)          {interval(pair_hits, n)}   yardstick 5 %")
    print(f"  flagged a run vs baseline (compare's)      {interval(holm_hits, n)}")
    print(f"  flagged anything                           {interval(any_hits, n)}")

    better = (3, 6, 9)
    found = apart = clean = 0
    planted = min(n, 50)
    for rep in range(planted):
        names, frames = boards(args.runs, args.queries, rep, better=better)
        board = leaderboard(labels, frames, names, options=LeaderboardOptions(seed=rep))
        standings = {s.run: s for s in board.metrics[0].standings}
        good = [labels[j] for j in better]
        equal = [r for r in labels[1:] if r not in good]
        found += all(standings[r].verdict == "improvement" for r in good)
        clean += all(standings[r].verdict == "unchanged" for r in equal)
        apart += all(not set(standings[g].letters) & set(standings[e].letters)
                     for g in good for e in [labels[0], *equal])  # fmt: skip
    print(f"planted: {planted} boards, 3 of {args.runs} runs better by 0.06")
    print(f"  the 3 found better than the baseline (Holm)   {interval(found, planted)}")
    print(f"  no equal run called different (Holm)          {interval(clean, planted)}")
    print(f"  the 3 share no letter with the 9 others (HSD) {interval(apart, planted)}")


def _time(args: argparse.Namespace) -> None:
    names, frames = boards(args.big_runs, args.big_queries, 0, metrics=args.metrics)
    big = [f"run{j}" for j in range(args.big_runs)]
    start, cpu = time.perf_counter(), time.process_time()
    board = leaderboard(big, frames, names)
    whole, used = time.perf_counter() - start, time.process_time() - cpu
    _time_parts(board, frames, names, big)
    print(f"time: {args.big_runs} runs x {args.big_queries} queries x {len(names)} metric(s): "
          f"{whole:.1f} s whole leaderboard, {used:.1f} s of CPU (yardstick: seconds)")  # fmt: skip


def _time_parts(board: Leaderboard, frames: list[pd.DataFrame], names: list[str],
                runs: list[str]) -> None:  # fmt: skip
    from evalplat.comparison import tukey
    from evalplat.comparison.scores import wide_scores
    from evalplat.comparison.shared_draws import WIDE_BLOCK_ROWS, randomization_tests

    wide = [wide_scores(f, r) for f, r in zip(frames, runs, strict=True)]
    matrices = [np.column_stack([w[name].to_numpy() for w in wide]) for name in names]
    options = board.options
    start, cpu = time.perf_counter(), time.process_time()
    tukey.hsd_p_values(matrices, options.draws, options.seed)
    hsd, hsd_cpu = time.perf_counter() - start, time.process_time() - cpu
    columns = np.column_stack([x[:, j] - x[:, 0] for x in matrices for j in range(1, len(runs))])
    start, cpu = time.perf_counter(), time.process_time()
    randomization_tests(columns, options.permutations, options.seed, block_rows=WIDE_BLOCK_ROWS)
    signs, signs_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"  Tukey HSD, {options.draws} draws: {hsd:.1f} s ({hsd_cpu:.1f} s CPU); sign-flip "
          f"tests vs baseline, {options.permutations} permutations x {columns.shape[1]} columns: "
          f"{signs:.1f} s ({signs_cpu:.1f} s CPU)")  # fmt: skip


if __name__ == "__main__":
    main()
