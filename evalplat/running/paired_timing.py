"""Timing two config versions together: a sample of the test set's queries searched by the
baseline's version and the candidate's one after the other, so that a latency verdict compares
timings taken under one load (``evalplat.comparison.paired_latency`` decides on them).

- **Which queries.** :data:`SAMPLE` (200) pairs: 200 of the test set's queries, drawn with a
  fixed seed (:data:`SEED`), so that two nights time the same queries; a test set with fewer
  queries is timed whole, round after round, until it has 200 pairs or more. 200 pairs are
  enough for the signed-rank test to see a typical slowdown of 20 % in timings that vary by a
  factor of two from query to query (``scripts/latency_noise.py``), at four searches per query
  (below); fewer let a fast engine's noise under load pass for a slowdown on nights where
  nothing changed (the measurements are in docs/performance.md).
- **In which order.** Per query, both versions search it once untimed in the first round (an
  engine's caches then hold it for both: the candidate's run searched it minutes before, the
  baseline's version may not have for a day), then once timed, the first of the two
  alternating from query to query and from round to round, so that neither always follows
  the other. As many queries at once as the candidate's run searched: the two searches of a
  pair then run under the same load, whatever it is.
- **What is timed.** The same as a run (``evalplat.running.search_driver.search_one``): the
  successful attempt from the send, with the collector's full passes kept short. A query that
  fails on either side has no pair and is left out.

The timings are kept with the candidate's run (``Store.save_paired_timings``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalplat.comparison.paired_latency import PairedTimings
from evalplat.metrics.names import parse
from evalplat.running.collector import steady_collector
from evalplat.running.runner import create_searcher
from evalplat.running.search_driver import RunSettings, search_one
from evalplat.searchers import RetryPolicy

if TYPE_CHECKING:
    from evalplat.comparison.results import Gate
    from evalplat.searchers import Searcher
    from evalplat.store import Store

SAMPLE = 200
SEED = 0


def gates_timings(gates: Sequence[Gate] | None) -> bool:
    """Does one of ``gates`` gate a timing measure (latency), which needs paired timings?"""
    return any(parse(gate.metric).spec.paired_timings for gate in gates or ())


def time_gated_pairs(
    store: Store, baseline_ref: str | int, candidate_ref: str | int, gates: Sequence[Gate] | None
) -> PairedTimings | None:
    """``compare``'s step before comparing: when ``gates`` gate latency and the candidate's
    run holds no timings against the baseline's version yet, time both versions now, if both
    configs can be searched (not imported run files, their engines reachable). None when
    nothing was timed; the comparison then says why latency is not gated."""
    from evalplat.errors import EvalplatError

    if not gates_timings(gates):
        return None
    baseline, candidate = store.resolve_run(baseline_ref), store.resolve_run(candidate_ref)
    if store.paired_timings(baseline, candidate) is not None:
        return None
    try:
        return time_pairs(store, baseline, candidate)
    except EvalplatError:  # a config that cannot be searched: latency stays unpaired
        return None


def sample_positions(count: int, size: int = SAMPLE, seed: int = SEED) -> list[int]:
    """Positions of the sampled queries among ``count``, in test set order; fewer than
    ``size`` are all taken, round after round, until there are ``size`` or more."""
    if count < size:
        return list(range(count)) * -(-size // count) if count else []
    return sorted(random.Random(seed).sample(range(count), size))


def time_pairs(
    store: Store, baseline_run: int, candidate_run: int, *, sample: int = SAMPLE
) -> PairedTimings:
    """Time the config versions of ``baseline_run`` and ``candidate_run`` together on the
    candidate's test set version, keep the timings with the candidate's run, return them."""
    baseline = store.run_info(baseline_run)
    candidate = store.run_info(candidate_run)
    content = store.load_test_set(f"{candidate.test_set}@{candidate.test_set_version}")
    ids = content.queries["query_id"].tolist()
    texts = content.queries["text"].tolist()
    picked = [(str(ids[i]), str(texts[i])) for i in sample_positions(len(ids), sample)]
    # as many queries at once as the candidate's run searched: each pair shares the load
    concurrency = int(candidate.options.get("concurrency") or 1)
    settings = RunSettings(depth=candidate.depth, concurrency=concurrency)
    sides = []
    for info in (baseline, candidate):
        config = store.config_version(f"{info.config}@{info.config_version}")
        sides.append(create_searcher(store, config.searcher, config.params, content, settings))
    with sides[0], sides[1]:
        pairs = _timed(sides[0], sides[1], picked, candidate.depth, concurrency, len(ids))
    kept = [(qid, b, c) for qid, (b, c) in zip([q for q, _ in picked], pairs, strict=True)
            if b is not None and c is not None]  # fmt: skip
    timings = PairedTimings(
        baseline_version=baseline.config_version_id,
        candidate_version=candidate.config_version_id,
        query_ids=tuple(qid for qid, _, _ in kept),
        baseline_ms=tuple(b for _, b, _ in kept),
        candidate_ms=tuple(c for _, _, c in kept),
        seed=SEED,
        queries=len(ids),
    )
    store.save_paired_timings(candidate_run, timings)
    return timings


def _timed(
    baseline: Searcher,
    candidate: Searcher,
    queries: list[tuple[str, str]],
    depth: int,
    concurrency: int,
    round_size: int,
) -> list[tuple[float | None, float | None]]:
    """Per query: both warmed in the first round, then both timed, the first alternating
    from query to query and from round to round (see the module); a round is ``round_size``
    queries (a sample is one round)."""
    from concurrent.futures import ThreadPoolExecutor

    policies = [RetryPolicy(retries=3 if s.retries is None else s.retries)
                for s in (baseline, candidate)]  # fmt: skip
    searchers = (baseline, candidate)

    def pair(position: int, qid: str, text: str) -> tuple[float | None, float | None]:
        turn, index = divmod(position, round_size or 1)
        if not turn:
            for side in (0, 1):
                search_one(searchers[side], qid, text, depth, policies[side], None)
        ms: list[float | None] = [None, None]
        for side in (0, 1) if (index + turn) % 2 == 0 else (1, 0):
            outcome = search_one(searchers[side], qid, text, depth, policies[side], None)
            ms[side] = outcome.latency_ms if outcome.status == "ok" else None
        return ms[0], ms[1]

    with steady_collector(), ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = [pool.submit(pair, i, qid, text) for i, (qid, text) in enumerate(queries)]
        return [future.result() for future in futures]
