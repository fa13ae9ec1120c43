"""Does offline predict online? Agreement of offline metrics with online KPIs across versions.

Inputs, one row per config version (``version`` is its ``NAME@VER`` label):

- ``offline``: ``version, metric, value``: the mean of each offline metric in the version's
  latest offline run on one test set;
- ``online``: ``version, day, kpi, value, sessions``: the mean of each KPI in each of the
  version's online runs (one per day) and the sessions it counts.

A version's KPI is pooled over its days weighted by sessions (the mean over every session of
the window). For each chosen (offline metric, KPI) pair over the versions that have both:

- **Kendall's tau-b and Spearman's rho** (``scipy.stats``) between the offline means and the
  pooled KPIs, and the two-sided p-value of tau from an **exact permutation test**: under "no
  relation" every pairing of the offline means with the KPIs is equally likely, so p is the
  share of the N! orderings of the KPIs whose |tau| is at least the observed one. Every ordering
  is enumerated up to :data:`EXACT_MAX_VERSIONS` versions (8! = 40320); above, ``samples``
  random orderings are drawn (seeded) and p counts the observed ordering too, so it is never 0
  (``scipy.stats.permutation_test``). No interval: a bootstrap over a handful of versions
  resamples duplicates, and over three of them its interval was [+1, +1].
- **A/B sign agreement**: two versions with online runs on the same day were an A/B pair. Its
  online delta is the difference of their KPI pooled over the days they shared, its offline
  delta the difference of their offline means; the pair *agrees* when both deltas say the same
  version is better. Pairs where either delta is exactly zero are ties, counted apart and left
  out of the share.

Both figures are direction-aware: when exactly one of the metric and the KPI is
lower-is-better (``online:Abandonment`` against ``nDCG@10``) the coefficients are negated, so a
positive tau always means "offline better goes with online better".

Below :data:`MIN_VERSIONS` versions there is no figure, only ``too few versions``: the smallest
two-sided p-value an exact permutation test of tau can give over N versions without ties is
2 / N! (the two perfect orderings), which is 0.33 at 3 versions, 0.083 at 4 and 0.017 at 5; under
5 versions no agreement, however perfect, could be told from chance at the 5 % level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations, count
from math import factorial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

ALPHA = 0.05
# the smallest N at which the exact two-sided test can reach p < ALPHA at all (module doc)
MIN_VERSIONS = next(n for n in count(2) if 2 / factorial(n) < ALPHA)
EXACT_MAX_VERSIONS = 8
DEFAULT_PERMUTATIONS = 9999
TOO_FEW = "too few versions"
DEFAULT_METRIC = "nDCG@10"  # the pair shown without a project's choice
DEFAULT_KPI = "online:CTR"
OFFLINE_COLUMNS = ["version", "metric", "value"]
ONLINE_COLUMNS = ["version", "day", "kpi", "value", "sessions"]
_BATCH = 4096  # orderings per vectorised step: batch x n x n pair signs in memory


@dataclass(frozen=True)
class Agreement:
    """How one offline metric agrees with one KPI (module doc). ``status`` is ``ok``,
    ``too few versions`` (under :data:`MIN_VERSIONS`) or ``no variation`` (one side constant);
    the coefficients are ``None`` unless it is ``ok``. ``permutations`` is how many orderings
    the test of tau counted, ``exact`` whether that was all of them."""

    metric: str
    kpi: str
    versions: int
    status: str
    tau: float | None = None
    tau_p: float | None = None
    rho: float | None = None
    pairs: int = 0
    agreeing: int = 0
    ties: int = 0
    permutations: int = 0
    exact: bool = False

    @property
    def sign_agreement(self) -> float | None:
        """Share of A/B pairs (ties left out) whose offline and online deltas agree."""
        counted = self.pairs - self.ties
        return None if self.status != "ok" or counted == 0 else self.agreeing / counted

    @property
    def label(self) -> str:
        """The status as a reader sees it: ``too few versions (3)``."""
        return f"{TOO_FEW} ({self.versions})" if self.status == TOO_FEW else self.status

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sign_agreement"] = self.sign_agreement
        data["label"] = self.label
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
    pairs: Sequence[tuple[str, str]] | None = None,
    metrics: Sequence[str] | None = None,
    kpis: Sequence[str] | None = None,
    samples: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
) -> list[Agreement]:
    """One :class:`Agreement` per (offline metric, KPI) of ``pairs``, in their order; without
    ``pairs``, every metric against every KPI in the order given (default: every one present,
    sorted)."""
    from evalplat.metrics.names import parse

    if pairs is None:
        chosen_metrics = list(metrics) if metrics else sorted(set(offline["metric"]))
        chosen_kpis = list(kpis) if kpis else sorted(set(online["kpi"]))
        pairs = [(metric, kpi) for metric in chosen_metrics for kpi in chosen_kpis]
    pooled = pooled_kpis(online)
    # a pair's online delta depends on the KPI only: computed once, not once per metric
    deltas = {kpi: online_deltas(online[online["kpi"] == kpi]) for kpi in {k for _, k in pairs}}
    found = []
    for metric, kpi in pairs:
        sign = parse(metric).direction * parse(kpi).direction
        found.append(_pair(offline, pooled, deltas[kpi], metric, kpi, sign, samples, seed))
    return found


def _pair(
    offline: pd.DataFrame,
    pooled: pd.DataFrame,
    deltas: OnlineDeltas,
    metric: str,
    kpi: str,
    sign: int,
    samples: int,
    seed: int,
) -> Agreement:
    import numpy as np
    from scipy import stats

    off = offline[offline["metric"] == metric].set_index("version")["value"]
    on = pooled[pooled["kpi"] == kpi].set_index("version")["value"]
    versions = sorted(set(off.index) & set(on.index))
    if len(versions) < MIN_VERSIONS:
        return Agreement(metric, kpi, len(versions), TOO_FEW)
    pairs, agreeing, ties = _sign_agreement(off, deltas, versions, sign)
    x = off.loc[versions].to_numpy(dtype="float64")
    y = on.loc[versions].to_numpy(dtype="float64")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return Agreement(metric, kpi, len(versions), "no variation", pairs=pairs, ties=ties)
    tau = float(stats.kendalltau(x, y, variant="b").statistic)
    rho = float(stats.spearmanr(x, y).statistic)
    p_value, orderings, exact = tau_permutation_test(x, y, samples=samples, seed=seed)
    return Agreement(
        metric=metric,
        kpi=kpi,
        versions=len(versions),
        status="ok",
        tau=sign * tau,
        tau_p=p_value,
        rho=sign * rho,
        pairs=pairs,
        agreeing=agreeing,
        ties=ties,
        permutations=orderings,
        exact=exact,
    )


def tau_permutation_test(
    x: np.ndarray, y: np.ndarray, *, samples: int = DEFAULT_PERMUTATIONS, seed: int = 0
) -> tuple[float, int, bool]:
    """(two-sided p-value of tau-b, orderings counted, exact) of the permutation test that
    pairs ``x`` with every ordering of ``y`` (module doc): all N! of them up to
    :data:`EXACT_MAX_VERSIONS` values, else ``samples`` random ones. The p-value does not
    depend on the direction of the metrics: |tau| is what is compared."""
    import numpy as np
    from scipy import stats

    n = len(x)
    exact = n <= EXACT_MAX_VERSIONS
    orderings = factorial(n) if exact else samples

    def statistic(values: np.ndarray, axis: int = -1) -> np.ndarray:
        rows = np.moveaxis(values, axis, -1).reshape(-1, n)
        tau, _ = resampled_coefficients(np.broadcast_to(x, rows.shape), rows)
        return tau.reshape(np.moveaxis(values, axis, -1).shape[:-1])

    result = stats.permutation_test(
        (y,),
        statistic,
        permutation_type="pairings",
        vectorized=True,
        n_resamples=orderings,
        alternative="two-sided",
        batch=_BATCH,
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue), orderings, exact


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


def ab_pairs(
    offline: pd.DataFrame,
    online: pd.DataFrame,
    metric: str,
    kpi: str,
    control: str | None = None,
) -> list[ABPair]:
    """Every A/B pair of versions with ``metric`` offline and ``kpi`` online, in version order.
    A pair holding ``control`` (the control arm's version, ``NAME@VER``) takes it as the
    baseline, so its deltas are the other arm's against the control; in any other pair the
    earlier version of the sorted pair is the baseline."""
    off = offline[offline["metric"] == metric].set_index("version")["value"]
    chosen = online[online["kpi"] == kpi]
    versions = sorted(set(off.index) & set(chosen["version"]))
    found = _pairs(off, online_deltas(chosen), versions)
    return [_against(pair, control) for pair in found]


def _against(pair: ABPair, control: str | None) -> ABPair:
    """The pair seen from ``control`` when it is the pair's candidate (deltas negated)."""
    if control is None or pair.candidate != control:
        return pair
    return ABPair(baseline=pair.candidate, candidate=pair.baseline, days=pair.days,
                  offline_delta=-pair.offline_delta,
                  online_delta=-pair.online_delta)  # fmt: skip


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


def resampled_coefficients(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and Spearman's rho of each row pair of ``x`` and ``y`` (orderings x n),
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
