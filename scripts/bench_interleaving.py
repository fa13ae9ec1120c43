"""Benchmark: how many sessions interleaving needs to find the better ranker, against an A/B test.

Run: ``python scripts/bench_interleaving.py [--ranker-a degraded|nostem] [--margin M]
[--method team_draft|balanced] [--users homogeneous|varied|published|both|all] [--reps N]
[--draws N]
[--seed N] [--quick]``. Not part of the test suite; the default run takes a few minutes,
``--quick`` (20 repetitions, 200 draws) well under one.

The planted preference: ranker B is the demo's production config (builtin BM25, Porter stemming)
and ranker A is worse: by default B's own top 10 where each position is, with probability
``--margin``, given B's next document from ranks 11-30 instead, or with ``--ranker-a nostem``
the demo's ``bm25-nostem`` (no stemming: a real system, 0.02 lower nDCG@10 on Cranfield). Both
rank Cranfield's 225 queries over its 1400 documents; users click by Cranfield's grades through
the demo's click model (``evalplat.demo.events.DEMO_MODEL``: a position-biased cascade),
searching 1 or 2 queries per session, the same population for both tests. ``--users``:
every user alike and queries uniformly drawn (``homogeneous``), users and queries that differ
(``varied``: ``evalplat.events.population.Population``'s defaults), both side by side, or
``published``: ``Population.published()``'s sessions and users clicking by
``evalplat.events.synthetic.PUBLISHED_MODEL`` (fitted to published click figures); ``all``:
the three. Each user model's log is described beside the published figures first.

- **A/B test**: N sessions per arm, each arm's users see its own ranker; per session
  ``online:CTR`` (share of its searches with a click); the comparison ``evalplat compare`` runs on
  online runs (``comparison.sessions.bootstrap_two_sample``, ``--draws`` resamples). Detected:
  p < 0.05 and B's CTR higher.
- **Interleaving**: N sessions in all, each search shows A and B interleaved (``--method``);
  per session the ranker that won more of its searches (``interleaving.combine``), then
  ``interleaving.preference``: detected when the sign test gives p < 0.05 and delta < 0 (B).

For each test the smallest N at which at least 80 % of ``--reps`` seeded repetitions detect B
is found by doubling N and then bisecting between the last miss and the first hit (power is
estimated, so N is known to about the bisection's last step). Then A/A: both sides B (identical
rankings), interleaved at the A/B test's total N: the share of repetitions with p < 0.05.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from evalplat.comparison.sessions import bootstrap_two_sample
from evalplat.demo.events import DEMO_MODEL
from evalplat.events.interleaving import preference
from evalplat.events.population import Population
from evalplat.events.synthetic import (
    PUBLISHED_MODEL,
    CascadeModel,
    InterleavedQueries,
    attraction_rows,
    click_profile,
    interleaved_outcomes,
    interleaved_queries,
    session_ctr,
)
from evalplat.resources import bundled_testset
from evalplat.searchers.builtin import BuiltinSearcher
from evalplat.searchers.kinds import SearchContext

# What published logs show (docs/online.md gives the sources).
PUBLISHED = {"searches_per_session": 2.02, "clicks_per_search": 0.95,
             "two_clicks_or_more": 0.23, "clicks_at_position_1": 0.496}  # fmt: skip
POWER = 0.8
ALPHA = 0.05
DEPTH = 10


def _cranfield() -> tuple[list[tuple[str, str]], list[dict[str, int]], list[dict[str, str]]]:
    root = bundled_testset("cranfield")
    lines = (root / "docs.jsonl").read_text(encoding="utf-8").splitlines()
    docs = [json.loads(line) for line in lines]
    queries = [
        (query, text)
        for query, text in (
            line.split("\t", 1)
            for line in (root / "queries.tsv").read_text(encoding="utf-8").splitlines()
        )
    ]
    grades: dict[str, dict[str, int]] = {}
    for line in (root / "qrels.txt").read_text(encoding="utf-8").splitlines():
        query, _, doc, grade = line.split()
        grades.setdefault(query, {})[doc] = int(grade)
    return queries, [grades.get(q, {}) for q, _ in queries], docs


def _rankings(queries: list[tuple[str, str]], docs: list[dict[str, str]], tokenizer: str
              ) -> list[list[str]]:  # fmt: skip
    params = {"tokenizer": tokenizer, "operator": "or", "weights": {}}
    with BuiltinSearcher(params, SearchContext(documents=docs, corpus_key="cranfield")) as s:
        return [[doc for doc, _ in s.search(q, text, 30)] for q, text in queries]


def _degraded(ranking: list[str], margin: float, rng: np.random.Generator) -> list[str]:
    deep = ranking[DEPTH:]
    return [deep.pop(0) if deep and rng.random() < margin else d for d in ranking[:DEPTH]]


def _smallest(detects: Callable[[int], float], start: int, label: str) -> tuple[int, float]:
    """The smallest N whose detection rate reaches POWER: doubling, then bisection."""
    low, n = 0, start
    while (power := detects(n)) < POWER:
        print(f"  {label}: N = {n:>7,}  detected in {power:5.1%}", flush=True)
        low, n = n, n * 2
    high, best = n, power
    print(f"  {label}: N = {n:>7,}  detected in {power:5.1%}", flush=True)
    while high - low > max(2, high // 16):
        mid = (low + high) // 2
        power = detects(mid)
        print(f"  {label}: N = {mid:>7,}  detected in {power:5.1%}", flush=True)
        if power >= POWER:
            high, best = mid, power
        else:
            low = mid
    return high, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranker-a", choices=("nostem", "degraded"), default="degraded")
    parser.add_argument("--margin", type=float, default=0.2)
    parser.add_argument("--method", choices=("team_draft", "balanced"), default="team_draft")
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--attraction",
        default=None,
        help="click chance of grades 0, 1, ... (default: the demo's model; the published "
        "users keep their fitted model)",
    )
    parser.add_argument(
        "--users",
        choices=("homogeneous", "varied", "published", "both", "all"),
        default="both",
        help="every user alike, users and queries that differ (evalplat.events.population), "
        "both side by side, users and clicks from published log figures, or all three",
    )
    parser.add_argument("--quick", action="store_true", help="20 repetitions, 200 draws")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.draws = 20, 200
    model = DEMO_MODEL
    if args.attraction:
        chances = [float(x) for x in args.attraction.split(",")]
        model = replace(DEMO_MODEL, attraction=dict(enumerate(chances)))
    began = time.perf_counter()
    queries, grades, docs = _cranfield()
    b = _rankings(queries, docs, "porter")
    if args.ranker_a == "nostem":
        a = _rankings(queries, docs, "unicode61")
    else:
        planted = np.random.default_rng(args.seed)
        a = [_degraded(ranking, args.margin, planted) for ranking in b]
    a, b = [r[:DEPTH] for r in a], [r[:DEPTH] for r in b]
    populations: dict[str, tuple[Population | None, CascadeModel]] = {
        "homogeneous": (None, model),
        "varied": (Population(seed=args.seed), model),
        "published": (Population.published(seed=args.seed), PUBLISHED_MODEL),
    }
    chosen = {"both": ["homogeneous", "varied"], "all": list(populations)}.get(
        args.users, [args.users]
    )
    print(f"ranker A: {args.ranker_a}"
          + (f" (margin {args.margin})" if args.ranker_a == "degraded" else "")
          + f", ranker B: porter; {args.reps} repetitions per N, {args.draws} draws")  # fmt: skip
    results = []
    for name in chosen:
        population, clicks = populations[name]
        rows_a = attraction_rows(a, grades, clicks, DEPTH)
        rows_b = attraction_rows(b, grades, clicks, DEPTH)
        tests = interleaved_queries(a, b, grades, clicks, method=args.method, depth=DEPTH)
        same = interleaved_queries(b, b, grades, clicks, method=args.method, depth=DEPTH)
        _describe(name, rows_b, clicks, population)
        results.append(_measure(args, name, population, clicks, (rows_a, rows_b), tests, same))
    print()
    print(f"{'users':<13}{'CTR A / B':>16}{'A/B sessions':>14}{'interleaved':>13}{'ratio':>8}"
          f"{'A/A p<0.05':>12}{'seconds':>9}")  # fmt: skip
    for name, ctr, ab_n, il_n, false_alarms, seconds in results:
        print(f"{name:<13}{ctr:>16}{ab_n:>14,}{il_n:>13,}{ab_n / il_n:>7.1f}x"
              f"{false_alarms:>12.1%}{seconds:>9.0f}")  # fmt: skip
    print(f"A/B sessions: both arms; A/A: the interleaved test on identical rankers at the A/B "
          f"test's sessions, share of {args.reps} repetitions with p < {ALPHA}")  # fmt: skip
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"measured in {time.perf_counter() - began:.0f} s on {os.cpu_count()} cores, load "
        f"average {load} at the end (a shared machine slows the seconds, not the counts)"
    )


def _describe(name: str, rows_b: NDArray[np.float64], model: CascadeModel,
              population: Population | None) -> None:  # fmt: skip
    """Print what ranker B's log looks like under this user model, beside published logs."""
    profile = click_profile(rows_b, 200_000, model, np.random.default_rng(7),
                            population=population)  # fmt: skip
    print(f"{name} users on ranker B (200,000 sessions; published logs in brackets): "
          + ", ".join(f"{key.replace('_', ' ')} {value:.3f}"
                      + (f" [{PUBLISHED[key]}]" if key in PUBLISHED else "")
                      for key, value in profile.items()))  # fmt: skip


def _measure(
    args: argparse.Namespace,
    name: str,
    population: Population | None,
    model: CascadeModel,
    rows: tuple[NDArray[np.float64], NDArray[np.float64]],
    tests: InterleavedQueries,
    same: InterleavedQueries,
) -> tuple[str, str, int, int, float, float]:
    """One user model's row: CTRs, sessions each test needs, the A/A false-positive rate."""
    began = time.perf_counter()
    rows_a, rows_b = rows

    def ab(n: int) -> float:
        hits = 0
        for rep in range(args.reps):
            rng = np.random.default_rng([args.seed, n, rep, 1])
            ctr_a = session_ctr(rows_a, n, model, rng, population=population)
            ctr_b = session_ctr(rows_b, n, model, rng, population=population)
            p, _ = bootstrap_two_sample(ctr_a, ctr_b, n=args.draws, seed=rep)
            hits += p < ALPHA and ctr_b.mean() > ctr_a.mean()
        return hits / args.reps

    def interleaved(n: int) -> float:
        hits = 0
        for rep in range(args.reps):
            rng = np.random.default_rng([args.seed, n, rep, 2])
            won = interleaved_outcomes(tests, n, model, rng, population=population)
            outcomes = np.array(["b", "tie", "a"])[won + 1].tolist()
            result = preference(outcomes, draws=args.draws, seed=rep)
            hits += result.p_value < ALPHA and result.delta < 0
        return hits / args.reps

    ctr_a, ctr_b = (
        float(session_ctr(r, 200_000, model, np.random.default_rng(9), population=population)
              .mean())
        for r in rows
    )  # fmt: skip
    print(f"{name} users: CTR per session A {ctr_a:.4f}, B {ctr_b:.4f} (200,000 sessions each)")
    ab_n, _ = _smallest(ab, 250, f"{name}, A/B on CTR, per arm")
    il_n, _ = _smallest(interleaved, 25, f"{name}, interleaved ({args.method})")
    aa_n = 2 * ab_n
    false_alarms = 0.0
    for rep in range(args.reps):
        rng = np.random.default_rng([args.seed, aa_n, rep, 3])
        won = interleaved_outcomes(same, aa_n, model, rng, population=population)
        outcome = preference(np.array(["b", "tie", "a"])[won + 1].tolist(), draws=10, seed=rep)
        false_alarms += outcome.p_value < ALPHA
    return (name, f"{ctr_a:.4f} / {ctr_b:.4f}", 2 * ab_n, il_n, false_alarms / args.reps,
            time.perf_counter() - began)  # fmt: skip


if __name__ == "__main__":
    main()
