"""Change points of a history series, and whose change each one is.

**Detection.** A series is one value per night of one metric of one config on one test set
(nights without a value are left out). Its change points are the ends of the segments of the
optimal segmentation under the squared-error cost with a penalty per change (PELT: Killick,
Fearnhead and Eckley 2012, "Optimal detection of changepoints with a linear computational
cost", JASA 107(500); the ``ruptures`` implementation, Truong, Oudre and Vayatis 2020)::

    minimise  sum over segments S of  sum_{t in S} (x_t - mean(S))^2  +  penalty · #changes

    penalty = PENALTY_FACTOR · sigma^2 · ln(n)

``sigma`` is the night-to-night noise, estimated robustly from first differences so that the
steps themselves barely move it: ``sigma = MAD(diff(x)) / (0.6745 · sqrt(2))`` (the median
absolute deviation of a normal variable is 0.6745 of its standard deviation, and a difference
of two nights has twice a night's variance). A series whose differences are mostly zero (a
deterministic engine on fixed judgments) falls back to the standard deviation of the
differences over ``sqrt(2)``; a constant series has no change point. ``2 · sigma^2 · ln(n)`` is
the Schwarz (BIC) penalty for one more mean; ``PENALTY_FACTOR`` is set higher so that nights of
pure noise are not marked (``docs/regression-detection.md`` has the measurement). One or two
wild nights are not a step: a night further than ``OUTLIER_SIGMAS · sigma`` from the median of
the five nights around it is replaced by that median before the search (the squared-error cost
would cut it off as a segment of its own), so a step shows once it has held three nights (and the
first three nights count as one level), and the means before and after are of the recorded
values.

**Labelling.** A change point belongs to the *test set* (its judgments, documents or queries
changed) when the run after it was scored on another test set version than the run before it,
or when every config of the test set (two or more, each with a value that night and the night
before) has a change point on that same night; otherwise it belongs to the *config*, and says
so when the config's version changed that night.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MIN_NIGHTS",
    "PENALTY_FACTOR",
    "ChangePoint",
    "Night",
    "Step",
    "VersionFacts",
    "find_steps",
    "label_change_points",
    "noise_sigma",
    "what_changed",
    "without_outliers",
]

# measured on simulated series of 60 nights (docs/regression-detection.md): normal A/A noise
# marked in 1 of 500 seeds, a step of 4 sigma found alone at its very night in 188 of 200
PENALTY_FACTOR = 8.0
MIN_NIGHTS = 2
OUTLIER_WINDOW = 5
OUTLIER_SIGMAS = 4.0
FloatArray = NDArray[np.float64]
_MAD_TO_SIGMA = 0.6745 * math.sqrt(2.0)

TEST_SET = "test set"
CONFIG = "config"


@dataclass(frozen=True)
class Step:
    """A change point of one series: ``index`` is the first value after it; ``before`` and
    ``after`` the means of the segments on either side; ``size = after - before``."""

    index: int
    before: float
    after: float

    @property
    def size(self) -> float:
        return self.after - self.before


@dataclass(frozen=True)
class Night:
    """One value of a config's history series: the run, its night (UTC day), the metric's value
    and the versions it was run with (``test_set_version``: the judgments it was scored on)."""

    run_id: int
    night: date
    value: float
    config_version: int
    test_set_version: int | None


@dataclass(frozen=True)
class VersionFacts:
    """What the store knows of a test set version: its documents (the corpus it names), and how
    many queries and judgments it holds."""

    corpus: int | None
    queries: int
    judgments: int


def what_changed(before: VersionFacts | None, after: VersionFacts | None) -> str:
    """``documents changed``, ``queries and judgments changed``, ...: what differs from
    ``before`` to ``after``. A new version whose documents and counts are the same changed its
    grades (its content hash differs): ``judgments changed``. Unknown versions: ``new test set
    version``."""
    if before is None or after is None:
        return "new test set version"
    parts = [
        name
        for name, differs in (
            ("documents", before.corpus != after.corpus),
            ("queries", before.queries != after.queries),
            ("judgments", before.judgments != after.judgments),
        )
        if differs
    ]
    return f"{' and '.join(parts or ['judgments'])} changed"


@dataclass(frozen=True)
class ChangePoint:
    """A labelled change point of a config's series: the first run after it and its night,
    the means before and after and ``size = after - before``; ``owner`` is ``"test set"`` or
    ``"config"``, ``reason`` says why (``judgments changed``, ``every config stepped``,
    ``config v3``)."""

    metric: str
    run_id: int
    night: date
    before: float
    after: float
    size: float
    owner: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["night"] = self.night.isoformat()
        return data

    @property
    def arrow(self) -> str:
        """``▲`` when the metric went up, ``▼`` when down (whichever way is better)."""
        return "▲" if self.size > 0 else "▼"

    def text(self) -> str:
        """``▼ -0.0801 test set: judgments changed (v1 → v2)``, as history's table and the
        history page say it."""
        from evalplat.metrics.numbers import delta_text

        return f"{self.arrow} {delta_text(self.size, self.metric)} {self.owner}: {self.reason}"


def noise_sigma(values: Sequence[float] | FloatArray) -> float:
    """The night-to-night noise of ``values`` (see the module's docstring); 0 for a constant
    series or one of fewer than two values."""
    diffs = np.diff(np.asarray(values, dtype=np.float64))
    if diffs.size == 0:
        return 0.0
    sigma = float(np.median(np.abs(diffs - np.median(diffs)))) / _MAD_TO_SIGMA
    if sigma > 0:
        return sigma
    return float(np.std(diffs)) / math.sqrt(2.0)


def without_outliers(x: FloatArray, sigma: float) -> FloatArray:
    """``x`` with each night further than ``OUTLIER_SIGMAS · sigma`` from the median of the
    ``OUTLIER_WINDOW`` nights around it (shifted inward at either end) replaced by that median:
    the squared-error cost would otherwise cut one wild night off as a segment of its own."""
    n, half = x.size, OUTLIER_WINDOW // 2
    if n < OUTLIER_WINDOW:
        return x
    starts = np.clip(np.arange(n) - half, 0, n - OUTLIER_WINDOW)
    windows = np.lib.stride_tricks.sliding_window_view(x, OUTLIER_WINDOW)[starts]
    medians = np.median(windows, axis=1)
    return np.where(np.abs(x - medians) > OUTLIER_SIGMAS * sigma, medians, x)


def find_steps(values: Sequence[float], penalty_factor: float = PENALTY_FACTOR) -> list[Step]:
    """The change points of ``values`` (oldest first, all finite), oldest first."""
    import ruptures

    raw = np.asarray(values, dtype=np.float64)
    n = raw.size
    sigma = noise_sigma(raw)
    if n < 2 * MIN_NIGHTS or sigma == 0:
        return []
    x = without_outliers(raw, sigma)
    penalty = penalty_factor * sigma**2 * math.log(n)
    search = ruptures.Pelt(custom_cost=_squared_error_kind()(), min_size=MIN_NIGHTS, jump=1)
    ends = search.fit(x).predict(pen=penalty)
    bounds = [0, *ends]
    means = [float(raw[a:b].mean()) for a, b in itertools.pairwise(bounds)]
    return [Step(index=end, before=means[i], after=means[i + 1]) for i, end in enumerate(ends[:-1])]


@functools.cache
def _squared_error_kind() -> Any:
    """ruptures' ``l2`` cost from cumulative sums: a segment's cost in constant time
    (``sum x^2 - (sum x)^2 / m``) instead of a variance over its slice, which made PELT's many
    calls most of its time. Built on first use: importing ruptures takes about a second, which
    no command but history's should pay."""
    from ruptures.base import BaseCost

    class SquaredError(BaseCost):  # type: ignore[misc]
        model = "l2_cumulative"
        min_size = MIN_NIGHTS

        def fit(self, signal: Any) -> SquaredError:
            x = np.asarray(signal, dtype=np.float64).reshape(-1)
            self.signal = x.reshape(-1, 1)
            self._sums = np.concatenate([[0.0], np.cumsum(x)]).tolist()
            self._squares = np.concatenate([[0.0], np.cumsum(x * x)]).tolist()
            return self

        def error(self, start: int, end: int) -> float:
            total = float(self._sums[end] - self._sums[start])
            squares = float(self._squares[end] - self._squares[start])
            return squares - total * total / (end - start)

    return SquaredError


def label_change_points(
    metric: str,
    series: Mapping[str, Sequence[Night]],
    versions: Mapping[int, VersionFacts] | None = None,
    penalty_factor: float = PENALTY_FACTOR,
) -> dict[str, list[ChangePoint]]:
    """The change points of every config's series of ``metric`` on one test set, labelled.

    ``series``: config name -> its nights, oldest first. ``versions``: the test set's versions,
    by number, to say what changed (``what_changed``) where the store knows.
    """
    facts = versions or {}
    found = {
        config: [(nights[s.index - 1], nights[s.index], s) for s in find_steps(
            [n.value for n in nights], penalty_factor
        )]
        for config, nights in series.items()
    }  # fmt: skip
    # the nights on which a config could have stepped at all: a value that night and before it
    able: dict[date, set[str]] = {}
    for config, nights in series.items():
        for before, after in itertools.pairwise(nights):
            if before.night != after.night:
                able.setdefault(after.night, set()).add(config)
    stepped: dict[date, set[str]] = {}
    for config, steps in found.items():
        for _, after, _ in steps:
            stepped.setdefault(after.night, set()).add(config)
    labelled: dict[str, list[ChangePoint]] = {}
    for config, steps in found.items():
        points = []
        for before, after, step in steps:
            owner, reason = _whose(before, after, stepped, able, facts)
            points.append(
                ChangePoint(metric, after.run_id, after.night, step.before, step.after,
                            step.size, owner, reason)
            )  # fmt: skip
        labelled[config] = points
    return labelled


def _whose(
    before: Night,
    after: Night,
    stepped: Mapping[date, set[str]],
    able: Mapping[date, set[str]],
    facts: Mapping[int, VersionFacts],
) -> tuple[str, str]:
    old, new = before.test_set_version, after.test_set_version
    if old is not None and new is not None and old != new:
        return TEST_SET, f"{what_changed(facts.get(old), facts.get(new))} (v{old} → v{new})"
    could = able.get(after.night, set())
    if len(could) >= 2 and could <= stepped.get(after.night, set()):
        return TEST_SET, f"every config stepped ({len(could)})"
    if after.config_version != before.config_version:
        return CONFIG, f"config v{after.config_version}"
    return CONFIG, "this config only"
