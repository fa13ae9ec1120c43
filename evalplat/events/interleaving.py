"""Interleaving: crediting a merged list's clicks to the two rankers, and the preference.

- **Team draft** (Radlinski et al., 2008): each hit of the merged list belongs to the ranker
  whose turn placed it; a search goes to the ranker whose hits got more clicks, a tie otherwise
  (no clicks: a tie).
- **Balanced** (Joachims, 2003): with k the lowest rank, in either ranker's own list, of a
  clicked hit, each ranker is credited the clicked hits within its own top k; more wins.

The preference over N units (sessions) of outcomes: ΔAB = (wins_A + ties/2) / N - 0.5, positive
when A is preferred, with a percentile bootstrap interval over the units and a two-sided
p-value from the same resamples, centred on zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["a", "b", "tie"]


def credit(teams: Sequence[str | None], clicked: Iterable[int], *, a: str, b: str) -> Outcome:
    """Team draft: ``teams[i]`` contributed position i (0-based); more clicks on a's hits → a."""
    votes = {a: 0, b: 0}
    for position in clicked:
        if 0 <= position < len(teams) and teams[position] in votes:
            votes[str(teams[position])] += 1
    return _winner(votes[a], votes[b])


def credit_balanced(
    ranks_a: Sequence[int | None], ranks_b: Sequence[int | None], clicked: Iterable[int]
) -> Outcome:
    """Balanced: ``ranks_x[i]`` is the 1-based rank of merged hit i in x's list (None: absent)."""
    clicks = [p for p in clicked if 0 <= p < len(ranks_a)]
    if not clicks:
        return "tie"
    infinite = float("inf")
    deepest_a = max((r if r is not None else infinite) for r in (ranks_a[p] for p in clicks))
    deepest_b = max((r if r is not None else infinite) for r in (ranks_b[p] for p in clicks))
    k = min(deepest_a, deepest_b)
    wins_a = sum(1 for p in clicks if (r := ranks_a[p]) is not None and r <= k)
    wins_b = sum(1 for p in clicks if (r := ranks_b[p]) is not None and r <= k)
    return _winner(wins_a, wins_b)


def _winner(a: int, b: int) -> Outcome:
    return "a" if a > b else "b" if b > a else "tie"


@dataclass(frozen=True)
class Preference:
    wins_a: int
    wins_b: int
    ties: int
    n: int
    delta: float
    low: float
    high: float
    p_value: float


def preference(
    outcomes: Sequence[Outcome], *, confidence: float = 0.95, draws: int = 10_000, seed: int = 0
) -> Preference:
    """ΔAB over ``outcomes`` with its bootstrap interval and p-value (module doc)."""
    import numpy as np

    values = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[o] for o in outcomes]) - 0.5
    n = len(values)
    wins_a = sum(1 for o in outcomes if o == "a")
    wins_b = sum(1 for o in outcomes if o == "b")
    if n == 0:
        return Preference(0, 0, 0, 0, 0.0, 0.0, 0.0, 1.0)
    delta = float(values.mean())
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, n, size=(draws, n))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = (float(v) for v in np.quantile(means, [tail, 1.0 - tail]))
    centred = means - delta
    p_value = float((np.abs(centred) >= abs(delta) - 1e-12).mean())
    return Preference(wins_a, wins_b, n - wins_a - wins_b, n, delta, low, high, p_value)
