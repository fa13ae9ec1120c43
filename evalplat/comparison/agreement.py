"""Does offline predict online? Agreement of offline metrics with online KPIs across versions.

Inputs, one row per config version (``version`` is its ``NAME@VER`` label):

- ``offline``: ``version, metric, value``: the mean of each offline metric in the version's
  latest offline run on one test set;
- ``online``: ``version, day, kpi, value, sessions``: the mean of each KPI in each of the
  version's online runs (one per day) and the sessions it counts.

A version's KPI is pooled over its days weighted by sessions (the mean over every session of
the window). For each (offline metric, KPI) pair over the versions that have both:

- **Kendall's tau-b and Spearman's rho** (``scipy.stats``) between the offline means and the pooled
  KPIs, with percentile bootstrap intervals from resampling the versions with replacement
  (seeded; a resample where either side is constant has no coefficient and is skipped).
- **A/B sign agreement**: two versions with online runs on the same day were an A/B pair. Its
  online delta is the difference of their KPI pooled over the days they shared, its offline
  delta the difference of their offline means; the pair *agrees* when both deltas say the same
  version is better. Pairs where either delta is exactly zero are ties, counted apart and left
  out of the share.

Both figures are direction-aware: when exactly one of the metric and the KPI is
lower-is-better (``online:Abandonment`` against ``nDCG@10``) the coefficients are negated, so a
positive tau always means "offline better goes with online better". With fewer than
:data:`MIN_VERSIONS` versions there is no figure, only ``insufficient data``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

MIN_VERSIONS = 3
OFFLINE_COLUMNS = ["version", "metric", "value"]
ONLINE_COLUMNS = ["version", "day", "kpi", "value", "sessions"]
_CHUNK = 256  # resamples per vectorised step: chunk x n x n pair signs in memory


@dataclass(frozen=True)
class Agreement:
    """How one offline metric agrees with one KPI (module doc). ``status`` is ``ok``,
    ``insufficient data`` (fewer than 3 versions) or ``no variation`` (one side constant);
    the coefficients are ``None`` unless it is ``ok``."""

    metric: str
    kpi: str
    versions: int
    status: str
    tau: float | None = None
    tau_ci: tuple[float, float] | None = None
    rho: float | None = None
    rho_ci: tuple[float, float] | None = None
    pairs: int = 0
    agreeing: int = 0
    ties: int = 0

    @property
    def sign_agreement(self) -> float | None:
        """Share of A/B pairs (ties left out) whose offline and online deltas agree."""
        counted = self.pairs - self.ties
        return None if self.status != "ok" or counted == 0 else self.agreeing / counted

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("tau_ci", "rho_ci"):
            data[key] = None if data[key] is None else list(data[key])
        data["sign_agreement"] = self.sign_agreement
        return data


def pooled_kpis(online: pd.DataFrame) -> pd.DataFrame:
    """``version, kpi, value``: each KPI over all of a version's days, weighted by sessions."""
    weighted = online.assign(total=online["value"] * online["sessions"])
    sums = weighted.groupby(["version", "kpi"], as_index=False)[["total", "sessions"]].sum()
    sums = sums[sums["sessions"] > 0]
    return sums.assign(value=sums["total"] / sums["sessions"])[["version", "kpi", "value"]]


def agreement(
    offline: pd.DataFrame,
    online: pd.DataFrame,
    *,
    metrics: Sequence[str] | None = None,
    kpis: Sequence[str] | None = None,
    samples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[Agreement]:
    """One :class:`Agreement` per (offline metric, KPI), metrics then KPIs in the order given
    (default: every one present, sorted)."""
    from evalplat.metrics.registry import parse

    chosen_metrics = list(metrics) if metrics else sorted(set(offline["metric"]))
    chosen_kpis = list(kpis) if kpis else sorted(set(online["kpi"]))
    pooled = pooled_kpis(online)
    # a pair's online delta depends on the KPI only: computed once, not once per metric
    deltas = {kpi: online_deltas(online[online["kpi"] == kpi]) for kpi in chosen_kpis}
    found = []
    for metric in chosen_metrics:
        for kpi in chosen_kpis:
            sign = parse(metric).direction * parse(kpi).direction
            found.append(
                _pair(offline, pooled, deltas[kpi], metric, kpi, sign, samples, confidence, seed)
            )
    return found


def _pair(
    offline: pd.DataFrame,
    pooled: pd.DataFrame,
    deltas: OnlineDeltas,
    metric: str,
    kpi: str,
    sign: int,
    samples: int,
    confidence: float,
    seed: int,
) -> Agreement:
    import numpy as np
    from scipy import stats

    off = offline[offline["metric"] == metric].set_index("version")["value"]
    on = pooled[pooled["kpi"] == kpi].set_index("version")["value"]
    versions = sorted(set(off.index) & set(on.index))
    if len(versions) < MIN_VERSIONS:
        return Agreement(metric, kpi, len(versions), "insufficient data")
    x = off.loc[versions].to_numpy(dtype="float64")
    y = on.loc[versions].to_numpy(dtype="float64")
    pairs, agreeing, ties = _sign_agreement(off, deltas, versions, sign)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return Agreement(metric, kpi, len(versions), "no variation", pairs=pairs, ties=ties)
    tau = float(stats.kendalltau(x, y, variant="b").statistic)
    rho = float(stats.spearmanr(x, y).statistic)
    tau_ci, rho_ci = _bootstrap(x, y, samples, confidence, seed)
    return Agreement(
        metric=metric,
        kpi=kpi,
        versions=len(versions),
        status="ok",
        tau=sign * tau,
        tau_ci=_oriented(tau_ci, sign),
        rho=sign * rho,
        rho_ci=_oriented(rho_ci, sign),
        pairs=pairs,
        agreeing=agreeing,
        ties=ties,
    )


@dataclass(frozen=True)
class ABPair:
    """Two versions online on the same days: ``candidate - baseline`` of the offline means and
    of the KPI pooled over the ``days`` they shared (module doc)."""

    baseline: str
    candidate: str
    days: int
    offline_delta: float
    online_delta: float

    def agrees(self, sign: int) -> bool | None:
        """Whether both deltas say the same version is better (``sign`` -1 when exactly one of
        metric and KPI is lower-is-better); None for a tie."""
        if self.offline_delta == 0 or self.online_delta == 0:
            return None
        return (self.offline_delta > 0) == ((self.online_delta > 0) == (sign > 0))


def ab_pairs(offline: pd.DataFrame, online: pd.DataFrame, metric: str, kpi: str) -> list[ABPair]:
    """Every A/B pair of versions with ``metric`` offline and ``kpi`` online, in version order
    (the earlier version of the sorted pair is the baseline)."""
    off = offline[offline["metric"] == metric].set_index("version")["value"]
    chosen = online[online["kpi"] == kpi]
    versions = sorted(set(off.index) & set(chosen["version"]))
    return _pairs(off, online_deltas(chosen), versions)


OnlineDeltas = dict[tuple[str, str], tuple[int, float]]


def online_deltas(online: pd.DataFrame) -> OnlineDeltas:
    """{(a, b): (shared days, KPI of b - KPI of a)} for every two versions (a < b) of one
    KPI's ``online`` rows with a day in common, each KPI pooled over those days by sessions."""
    days: dict[str, dict[str, tuple[float, float]]] = {}
    for version, day, value, sessions in online[["version", "day", "value", "sessions"]].itertuples(
        index=False
    ):
        total, count = days.setdefault(str(version), {}).get(str(day), (0.0, 0.0))
        days[str(version)][str(day)] = (total + float(value) * sessions, count + float(sessions))
    found: OnlineDeltas = {}
    for a, b in combinations(sorted(days), 2):
        shared = days[a].keys() & days[b].keys()
        pooled = []
        for version in (a, b):
            total = sum(days[version][d][0] for d in sorted(shared))
            count = sum(days[version][d][1] for d in sorted(shared))
            pooled.append(total / count if count > 0 else None)
        if shared and pooled[0] is not None and pooled[1] is not None:
            found[(a, b)] = (len(shared), pooled[1] - pooled[0])
    return found


def _pairs(off: pd.Series, deltas: OnlineDeltas, versions: list[str]) -> list[ABPair]:
    found = []
    for a, b in combinations(versions, 2):
        if (a, b) in deltas:
            shared, online_delta = deltas[(a, b)]
            found.append(ABPair(a, b, shared, float(off[b] - off[a]), online_delta))
    return found


def _sign_agreement(
    off: pd.Series, deltas: OnlineDeltas, versions: list[str], sign: int
) -> tuple[int, int, int]:
    """(pairs, agreeing, ties) over the A/B pairs among ``versions`` (module doc)."""
    verdicts = [pair.agrees(sign) for pair in _pairs(off, deltas, versions)]
    return len(verdicts), verdicts.count(True), verdicts.count(None)


def _oriented(ci: tuple[float, float] | None, sign: int) -> tuple[float, float] | None:
    if ci is None:
        return None
    return ci if sign > 0 else (-ci[1], -ci[0])


def _bootstrap(
    x: np.ndarray, y: np.ndarray, samples: int, confidence: float, seed: int
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """Percentile intervals of tau-b and rho over ``samples`` resamples of the versions."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = len(x)
    taus: list[np.ndarray] = []
    rhos: list[np.ndarray] = []
    for start in range(0, samples, _CHUNK):
        index = rng.integers(0, n, size=(min(_CHUNK, samples - start), n))
        tau, rho = resampled_coefficients(x[index], y[index])
        taus.append(tau)
        rhos.append(rho)
    tail = (1 - confidence) / 2
    return _interval(np.concatenate(taus), tail), _interval(np.concatenate(rhos), tail)


def resampled_coefficients(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and Spearman's rho of each row pair of ``x`` and ``y`` (resamples x n),
    NaN where a row is constant.

    tau-b = S / sqrt(n_x * n_y), S the sum over pairs i < j of sgn(x_i - x_j) * sgn(y_i - y_j),
    n_x and n_y the pairs untied in x and in y; rho is Pearson's r of the average ranks."""
    import numpy as np
    from scipy.stats import rankdata

    dx = np.sign(x[:, :, None] - x[:, None, :])
    dy = np.sign(y[:, :, None] - y[:, None, :])
    untied = np.sqrt(np.count_nonzero(dx, axis=(1, 2)) * np.count_nonzero(dy, axis=(1, 2)))
    concordance = (dx * dy).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(untied > 0, concordance / np.where(untied > 0, untied, 1), np.nan)
        rx = rankdata(x, axis=1)
        ry = rankdata(y, axis=1)
        rx -= rx.mean(axis=1, keepdims=True)
        ry -= ry.mean(axis=1, keepdims=True)
        spread = np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
        rho = np.where(spread > 0, (rx * ry).sum(axis=1) / np.where(spread > 0, spread, 1), np.nan)
    return tau, rho


def _interval(draws: np.ndarray, tail: float) -> tuple[float, float] | None:
    import numpy as np

    valid = draws[~np.isnan(draws)]
    if valid.size == 0:
        return None
    low, high = np.quantile(valid, [tail, 1 - tail])
    return float(low), float(high)
