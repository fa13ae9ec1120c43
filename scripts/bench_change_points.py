"""Benchmark: ``evalplat.comparison.change_points.find_steps`` on simulated history series.

Run: ``python scripts/bench_change_points.py [--seeds N]``. Prints the fastest of 15 calls on
300 nights with two steps (and ruptures' own ``l2`` cost on the same series, for scale), how
many of ``--seeds`` A/A series of 60 nights are marked (normal scores; log-normal latencies),
and how often a planted step of 2 to 5 sigma halfway through 60 nights is found alone and at
its very night. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numpy as np
import ruptures

from evalplat.comparison.change_points import PENALTY_FACTOR, find_steps, noise_sigma


def fastest(call: Callable[[], object], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=500)
    seeds = parser.parse_args().seeds
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(m, 0.01, 100) for m in (0.50, 0.53, 0.49)])
    penalty = PENALTY_FACTOR * noise_sigma(x) ** 2 * math.log(x.size)
    own = ruptures.Pelt(model="l2", min_size=2, jump=1)
    ours = fastest(lambda: find_steps(x))
    theirs = fastest(lambda: own.fit(x).predict(pen=penalty))
    print(f"300 nights: find_steps {ours:.1f} ms, ruptures' l2 PELT {theirs:.1f} ms")
    normal = sum(bool(find_steps(np.random.default_rng(s).normal(0.4, 0.02, 60)))
                 for s in range(seeds))  # fmt: skip
    latency = sum(bool(find_steps(np.random.default_rng(s).lognormal(math.log(40), 0.3, 60)))
                  for s in range(seeds))  # fmt: skip
    print(f"A/A over 60 nights marked: normal {normal} of {seeds}, log-normal {latency} of {seeds}")
    for size in (2.0, 3.0, 4.0, 5.0):
        found = 0
        for s in range(200):
            r = np.random.default_rng(1000 + s)
            y = np.concatenate([r.normal(0, 1, 30), r.normal(size, 1, 30)])
            found += [step.index for step in find_steps(y)] == [30]
        print(f"step of {size:g} sigma at night 30 of 60: found alone, at its night, {found}/200")


if __name__ == "__main__":
    main()
