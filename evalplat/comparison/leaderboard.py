"""A leaderboard of many runs on one test set version: each run's mean with its interval, and
which runs differ, with the family-wise error controlled over everything shown.

Pure: it takes each run's per-query scores (tidy frames, as ``Store.evaluation_scores`` gives
them) and returns frozen dataclasses; ``evalplat.store.leaderboard`` feeds it from the database.

Per metric (only measures aggregated as a mean: a percentile or a sum has no paired mean to
permute):

- **mean and interval**: the (weighted) mean over queries and its percentile bootstrap
  interval, resampling queries (``evalplat.comparison.shared_draws``, one stream of resamples
  for every run and metric);
- **all versus the baseline**: the paired randomization test of each run against the baseline
  (the sign flips shared by every run and metric), Holm-corrected over every (metric, run)
  shown, as ``compare`` corrects its gated metrics;
- **all pairs**: the randomized Tukey HSD (``evalplat.comparison.tukey``), family-wise over the
  pairs of the metric, and the compact letter display of the pairs that differ.

One level for everything shown: ``alpha`` is split in two halves (Bonferroni), one for the
all-versus-baseline family and one for each metric's all-pairs family, so that on one metric
the chance that anything at all is flagged between equivalent runs is at most ``alpha``.
``p_corrected`` (Holm) and the HSD ``p_value`` of a pair are shown as computed and compared
with ``alpha / 2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalplat.comparison import stats, tukey
from evalplat.comparison.results import CompareOptions, _plain
from evalplat.comparison.scores import wide_scores
from evalplat.comparison.shared_draws import WIDE_BLOCK_ROWS, SharedDraws, randomization_tests
from evalplat.errors import InputError
from evalplat.inputs.validation import SEED_MAX

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.metrics.registry import Metric

__all__ = ["Leaderboard", "LeaderboardOptions", "MetricBoard", "PairDifference", "Standing",
           "leaderboard"]  # fmt: skip

MAX_DRAWS = 1_000_000


@dataclass(frozen=True)
class LeaderboardOptions:
    """How a leaderboard is computed. ``draws``: permutations of the Tukey HSD;
    ``permutations`` and ``bootstrap``: those of the tests against the baseline and of the
    intervals, as ``compare`` draws them."""

    alpha: float = 0.05
    draws: int = 1_000
    seed: int = 0
    permutations: int = 10_000
    bootstrap: int = 2_000
    ci_level: float = 0.95

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise InputError(f"--alpha must be more than 0 and less than 1, got {self.alpha}")
        if not 1 <= self.draws <= MAX_DRAWS:
            raise InputError(f"--draws must be from 1 to {MAX_DRAWS}, got {self.draws}")
        if not 0 <= self.seed <= SEED_MAX:
            raise InputError(f"--seed must be from 0 to {SEED_MAX}, got {self.seed}")


@dataclass(frozen=True)
class Standing:
    """One run on one metric. ``delta = mean - baseline mean``; ``verdict`` against the
    baseline (``improvement`` / ``regression`` / ``unchanged``; None for the baseline)."""

    run: str
    run_id: int | None
    rank: int
    mean: float
    ci_low: float
    ci_high: float
    letters: str
    delta: float | None
    p_value: float | None
    p_corrected: float | None
    verdict: str | None

    def to_dict(self) -> dict[str, Any]:
        return {key: _plain(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class PairDifference:
    """Two runs of one metric: ``delta = mean(a) - mean(b)``, the HSD p-value, and whether
    they differ at ``alpha / 2``."""

    a: str
    b: str
    delta: float
    p_value: float
    differ: bool

    def to_dict(self) -> dict[str, Any]:
        return {key: _plain(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class MetricBoard:
    """One metric: the runs best first, and every pair."""

    metric: str
    higher_is_better: bool
    standings: tuple[Standing, ...]
    pairs: tuple[PairDifference, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "runs": [s.to_dict() for s in self.standings],
            "pairs": [p.to_dict() for p in self.pairs],
        }


@dataclass(frozen=True)
class Leaderboard:
    """The whole board: its runs (labels, in the order given, the baseline among them)."""

    runs: tuple[str, ...]
    run_ids: tuple[int | None, ...]
    baseline: str
    queries: int
    metrics: tuple[MetricBoard, ...]
    options: LeaderboardOptions
    test_set: str | None = None
    weighted: bool = False
    tests: int = 0  # hypotheses in the all-versus-baseline family (Holm)
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "test_set": self.test_set,
            "queries": self.queries,
            "baseline": self.baseline,
            "runs": [{"run": r, "id": i} for r, i in zip(self.runs, self.run_ids, strict=True)],
            "alpha": self.options.alpha,
            "draws": self.options.draws,
            "seed": self.options.seed,
            "permutations": self.options.permutations,
            "holm_tests": self.tests,
            "weighted": self.weighted,
            "metrics": [m.to_dict() for m in self.metrics],
        }

    def csv_rows(self) -> list[dict[str, Any]]:
        """One row per (metric, run), best first within a metric: the ``--csv`` export."""
        return [
            {"metric": board.metric, **{k: v for k, v in s.to_dict().items()}}
            for board in self.metrics
            for s in board.standings
        ]


def leaderboard(
    runs: Sequence[str],
    scores: Sequence[pd.DataFrame],
    metrics: Sequence[str | Metric],
    *,
    baseline: int = 0,
    options: LeaderboardOptions | None = None,
    weights: Mapping[str, float] | pd.Series | None = None,
    run_ids: Sequence[int | None] | None = None,
    test_set: str | None = None,
) -> Leaderboard:
    """The leaderboard of ``runs`` (labels) from their per-query ``scores`` (tidy frames
    ``query_id, metric, value`` over the same queries) on ``metrics``; ``baseline`` is the
    index of the baseline run. ``weights`` (query id -> weight) weights every mean and test as
    ``compare`` does."""
    from evalplat.comparison import segments
    from evalplat.metrics.registry import parse

    options = options or LeaderboardOptions()
    if len(runs) < 2:
        raise InputError("a leaderboard needs two runs or more")
    if len(scores) != len(runs) or not 0 <= baseline < len(runs):
        raise InputError("a leaderboard needs one score frame per run and a baseline among them")
    chosen = list({str(parse(str(m))): parse(str(m)) for m in metrics}.values())
    if not chosen:
        raise InputError("a leaderboard needs at least one metric")
    wide = [wide_scores(frame, run) for frame, run in zip(scores, runs, strict=True)]
    queries = wide[0].index
    for run, frame in zip(runs, wide, strict=True):
        if set(frame.index) != set(queries):
            raise InputError(f"{run} was scored over other queries than {runs[0]}: "
                             "rescore both against one test set version")  # fmt: skip
    w = segments.weight_vector(queries, weights)
    w = stats.query_weights(w, len(queries)) if w is not None else None
    matrices = [_matrix(metric, runs, wide, queries) for metric in chosen]
    # each row scaled by w / mean(w): plain means of the scaled rows are the weighted means
    scaled = [x if w is None else x * (w / w.mean())[:, None] for x in matrices]
    compare = CompareOptions(seed=options.seed, permutations=options.permutations,
                             bootstrap=options.bootstrap, ci_level=options.ci_level)  # fmt: skip
    intervals = _intervals(scaled, compare)
    others = [j for j in range(len(runs)) if j != baseline]
    columns = [x[:, j] - x[:, baseline] for x in scaled for j in others]
    p_values = np.ones(len(columns))
    if columns and len(queries):
        p_values = randomization_tests(np.column_stack(columns), options.permutations,
                                       options.seed, block_rows=WIDE_BLOCK_ROWS)  # fmt: skip
    corrected = stats.holm(p_values)
    hsd = tukey.hsd_p_values(scaled, options.draws, options.seed)
    level = options.alpha / 2
    boards = []
    for index, metric in enumerate(chosen):
        x = scaled[index]
        means = x.mean(axis=0) if len(queries) else np.zeros(len(runs))
        order = sorted(range(len(runs)), key=lambda j: (-metric.direction * means[j], j))
        differ = hsd[index] <= level
        names = tukey.letters(order, differ)
        at = index * len(others)
        tested = {j: (float(p_values[at + n]), float(corrected[at + n])) for n, j in
                  enumerate(others)}  # fmt: skip
        standings = []
        for rank, j in enumerate(order, start=1):
            p, p_corr = tested.get(j, (None, None))
            delta = None if j == baseline else float(means[j] - means[baseline])
            standings.append(
                Standing(
                    run=runs[j], run_id=None if run_ids is None else run_ids[j], rank=rank,
                    mean=float(means[j]), ci_low=intervals[index][j][0],
                    ci_high=intervals[index][j][1], letters=names[j], delta=delta,
                    p_value=p, p_corrected=p_corr,
                    verdict=None if delta is None else _verdict(metric, delta, p_corr, level),
                )
            )  # fmt: skip
        pairs = tuple(
            PairDifference(runs[a], runs[b], float(means[a] - means[b]), float(hsd[index][a, b]),
                           bool(differ[a, b]))
            for i, a in enumerate(order) for b in order[i + 1 :]
        )  # fmt: skip
        boards.append(MetricBoard(str(metric), metric.higher_is_better, tuple(standings), pairs))
    return Leaderboard(
        runs=tuple(runs), run_ids=tuple(run_ids) if run_ids is not None else (None,) * len(runs),
        baseline=runs[baseline], queries=len(queries), metrics=tuple(boards), options=options,
        test_set=test_set, weighted=w is not None, tests=len(columns),
    )  # fmt: skip


def _matrix(
    metric: Metric, runs: Sequence[str], wide: list[pd.DataFrame], queries: pd.Index
) -> stats.FloatArray:
    """Queries by runs: the metric's per-query values, refused when it is not a mean or a run
    lacks it."""
    name = str(metric)
    if metric.aggregate != "mean" or not metric.gateable:
        kind = metric.aggregate if metric.gateable else f"{metric.aggregate} count"
        raise InputError(f"--metric {name}: the leaderboard ranks means; {name} is aggregated "
                         f"as a {kind}")  # fmt: skip
    columns = []
    for run, frame in zip(runs, wide, strict=True):
        if name not in frame.columns:
            raise InputError(f"{run} has no scores for {name}: rescore it with -m '{name}'")
        values = frame.loc[queries, name].to_numpy(dtype=np.float64)
        if np.isnan(values).any():
            raise InputError(f"{run} lacks {name} for some queries: rescore it")
        columns.append(values)
    return np.column_stack(columns)


def _intervals(
    scaled: list[stats.FloatArray], options: CompareOptions
) -> list[list[tuple[float, float]]]:
    """Bootstrap interval of every run's mean on every metric, from one stream of resamples."""
    draws = SharedDraws(options, block_rows=WIDE_BLOCK_ROWS)
    rows: list[list[dict[str, Any]]] = []
    for x in scaled:
        rows.append([{} for _ in range(x.shape[1])])
        for j in range(x.shape[1]):
            if x.shape[0]:
                draws.mean_interval(rows[-1][j], x[:, j], None, 1.0)
    draws.run()
    return [[(row.get("ci_low", 0.0), row.get("ci_high", 0.0)) for row in metric_rows]
            for metric_rows in rows]  # fmt: skip


def _verdict(metric: Metric, delta: float, p_corrected: float | None, level: float) -> str:
    if p_corrected is None or not p_corrected < level or delta == 0:
        return "unchanged"
    return "improvement" if metric.direction * delta > 0 else "regression"
