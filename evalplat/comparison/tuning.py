"""Choosing a setting on some queries and scoring it on others: k-fold cross-validation.

A setting picked because it scored best on a test set looks better on that test set than it
will on the next queries: with many settings, the best mean is partly luck (the winner's curse).
:func:`cross_validate` measures what the *choice* is worth instead:

- the queries are dealt into ``k`` folds (seeded; stratified by a stratum per query, such as
  the first segment tag, so each fold holds every segment in proportion);
- for each fold ``f`` the setting with the best mean over the other folds is chosen (ties: the
  first in the given order), and its per-query values on ``f`` minus the baseline's are kept;
- every query is held out exactly once, so the held-out differences ``d_q`` cover the test set:
  the expected held-out gain is their (weighted) mean, with a percentile bootstrap interval
  over queries (:func:`evalplat.comparison.stats.bootstrap_ci`, seeded: the bootstrap of
  ``compare``'s intervals).

The in-sample gain is the best setting's mean over every query minus the baseline's: the number
a tuning tool usually reports. Inputs are plain arrays, so this runs without a database.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from evalplat.comparison.stats import bootstrap_ci
from evalplat.errors import InputError
from evalplat.metrics.numbers import counted

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class HeldOut:
    """What cross-validation says about tuning on this test set (higher is better throughout:
    values of lower-is-better metrics are negated before they get here)."""

    folds: int
    best: int  # index of the best setting on every query (in-sample)
    in_sample_gain: float
    held_out_gain: float
    interval: tuple[float, float]
    confidence: float
    chosen: tuple[int, ...]  # the setting chosen on each training fold
    beats_baseline: bool  # the interval's lower end is above 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["interval"] = list(self.interval)
        data["chosen"] = list(self.chosen)
        return data


def assign_folds(strata: Sequence[str], folds: int, seed: int) -> list[int]:
    """A fold (0..folds-1) per query: within each stratum a seeded shuffle dealt round-robin,
    the deal carrying on from stratum to stratum so fold sizes differ by at most one."""
    if folds < 2:
        raise InputError(f"--folds must be at least 2, got {folds}")
    if folds > len(strata):
        raise InputError(
            f"--folds {folds} is more than the test set's {counted(len(strata), 'query')}"
        )
    rng = random.Random(seed)
    by_stratum: dict[str, list[int]] = {}
    for index, stratum in enumerate(strata):
        by_stratum.setdefault(stratum, []).append(index)
    assigned = [0] * len(strata)
    dealt = 0
    for stratum in sorted(by_stratum):
        members = by_stratum[stratum]
        rng.shuffle(members)
        for index in members:
            assigned[index] = dealt % folds
            dealt += 1
    return assigned


def cross_validate(
    values: Array,
    baseline: Array,
    fold_of: Sequence[int],
    *,
    weights: Array | None = None,
    seed: int = 0,
    confidence: float = 0.95,
    resamples: int = 10_000,
) -> HeldOut:
    """``values``: one row per setting, one column per query; ``baseline``: one value per
    query; ``fold_of`` from :func:`assign_folds`. Means are weighted by ``weights`` when given
    (one per query)."""
    values = np.asarray(values, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    folds = np.asarray(fold_of)
    w = np.ones(len(baseline)) if weights is None else np.asarray(weights, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] != len(baseline) or not len(values):
        raise InputError("cross-validation needs one value per setting and query")
    means = values @ w / w.sum()
    best = int(np.argmax(means))
    in_sample = float(means[best] - baseline @ w / w.sum())
    held = np.empty(len(baseline))
    chosen = []
    for fold in range(int(folds.max()) + 1):
        test = folds == fold
        train = ~test
        pick = int(np.argmax(values[:, train] @ w[train]))
        chosen.append(pick)
        held[test] = values[pick, test] - baseline[test]
    gain = float(held @ w / w.sum())
    low, high = bootstrap_ci(held, resamples, seed, confidence, weights=w)
    return HeldOut(
        folds=int(folds.max()) + 1,
        best=best,
        in_sample_gain=in_sample,
        held_out_gain=gain,
        interval=(low, high),
        confidence=confidence,
        chosen=tuple(chosen),
        beats_baseline=low > 0,
    )


def verdict_line(result: HeldOut, best_label: str) -> str:
    """One sentence a reader can act on, plain about a gain that does not hold out of sample."""
    low, high = result.interval
    held = f"{result.held_out_gain:+.4f} [{low:+.4f}, {high:+.4f}]"
    if result.beats_baseline:
        return (f"Tuning holds up on held-out queries: expected gain {held} over the baseline "
                f"(in-sample best {best_label}: {result.in_sample_gain:+.4f}).")  # fmt: skip
    worse = "is worse than" if high < 0 else "does not credibly beat"
    return (f"The best in-sample setting ({best_label}, {result.in_sample_gain:+.4f}) {worse} "
            f"the baseline on held-out queries: expected held-out gain {held}.")  # fmt: skip
