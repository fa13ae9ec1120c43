"""A leaderboard of many runs on one test set version: each run's mean with its interval, and
which runs differ, with the family-wise error controlled over everything shown.

Pure: it takes each run's per-query scores (tidy frames, as ``Store.evaluation_scores`` gives
them) and returns frozen dataclasses; ``evalplat.store.leaderboard`` feeds it from the database.

Per metric (only measures aggregated as a mean: a percentile or a sum has no paired mean to
permute):

- **mean and interval**: the (weighted) mean over queries and its percentile bootstrap
  interval, resampling queries (``evalplat.comparison.shared_draws``, one stream of resamples
  for every run and metric), within the measure's range (P@5 is never above 1);
- **each versus the baseline**: the comparison ``compare`` makes of the pair, with the same
  gates (the default rule set, ``evalplat.comparison.thresholds.default_gates``, or those
  given) and code (``evalplat.comparison.verdicts.compare_scores``; the store passes the
  comparisons ``Store.compare_runs`` makes, unjudged bound included), so that the leaderboard
  and ``compare`` never give one pair two verdicts; a metric no gate holds is "not gated";
- **all pairs**: the randomized Tukey HSD (``evalplat.comparison.tukey``), family-wise at
  ``alpha`` over the pairs of the metric, and the compact letter display of the pairs that
  differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalplat.comparison import stats, tukey
from evalplat.comparison.results import CompareOptions, _plain
from evalplat.comparison.scores import wide_scores
from evalplat.comparison.shared_draws import WIDE_BLOCK_ROWS, SharedDraws
from evalplat.errors import InputError
from evalplat.inputs.validation import SEED_MAX

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.verdicts import ComparisonResult, Gate
    from evalplat.metrics.registry import Metric

__all__ = ["Leaderboard", "LeaderboardOptions", "MetricBoard", "PairDifference", "Standing",
           "check_rankable", "leaderboard"]  # fmt: skip

MAX_DRAWS = 1_000_000
NOT_GATED = "not gated"  # the verdict of a metric no gate holds


@dataclass(frozen=True)
class LeaderboardOptions:
    """How a leaderboard is computed. ``alpha``: the family-wise level of each metric's pairs
    (the verdicts against the baseline are at their gates' level, as ``compare`` gives them);
    ``draws``: permutations of the Tukey HSD; ``permutations`` and ``bootstrap``: those of the
    tests against the baseline and of the intervals, as ``compare`` draws them."""

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
    """One run on one metric. ``delta = mean - baseline mean``; ``p_value``, ``p_corrected``
    and ``verdict`` are those of ``compare``'s comparison with the baseline (``improvement``,
    ``regression``, ``unchanged``, ``needs_judgments``..., ``not gated`` for a metric no gate
    holds; None for the baseline)."""

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
    they differ at ``alpha``."""

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
    tests: int = 0  # gated (metric, run) verdicts against the baseline
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
            "gated_verdicts": self.tests,
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
    gates: Sequence[Gate] | None = None,
    against: Sequence[ComparisonResult | None] | None = None,
) -> Leaderboard:
    """The leaderboard of ``runs`` (labels) from their per-query ``scores`` (tidy frames
    ``query_id, metric, value`` over the same queries) on ``metrics``; ``baseline`` is the
    index of the baseline run. ``weights`` (query id -> weight) weights every mean and test as
    ``compare`` does. ``against`` holds each run's comparison with the baseline (None for the
    baseline itself); without it each is made here as ``compare`` makes it on the scores, with
    ``gates`` (None: the default rule set)."""
    from evalplat.comparison import segments
    from evalplat.metrics.names import parse

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
    intervals = _intervals(scaled, compare, chosen)
    if against is None:
        against = _comparisons(scores, chosen, baseline, gates, compare, weights)
    hsd = tukey.hsd_p_values(scaled, options.draws, options.seed)
    boards = []
    tests = 0
    for index, metric in enumerate(chosen):
        x = scaled[index]
        means = x.mean(axis=0) if len(queries) else np.zeros(len(runs))
        order = sorted(range(len(runs)), key=lambda j: (-metric.direction * means[j], j))
        differ = hsd[index] <= options.alpha
        names = tukey.letters(order, differ)
        standings = []
        for rank, j in enumerate(order, start=1):
            compared = against[j]
            row = None if compared is None else compared.metric(str(metric))
            tests += row is not None and row.gated
            standings.append(
                Standing(
                    run=runs[j], run_id=None if run_ids is None else run_ids[j], rank=rank,
                    mean=float(means[j]), ci_low=intervals[index][j][0],
                    ci_high=intervals[index][j][1], letters=names[j],
                    delta=None if j == baseline else float(means[j] - means[baseline]),
                    p_value=None if row is None else row.p_value,
                    p_corrected=None if row is None else row.p_corrected,
                    verdict=None if row is None else row.verdict if row.gated else NOT_GATED,
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
        test_set=test_set, weighted=w is not None, tests=tests,
    )  # fmt: skip


def _comparisons(
    scores: Sequence[pd.DataFrame],
    chosen: list[Metric],
    baseline: int,
    gates: Sequence[Gate] | None,
    options: CompareOptions,
    weights: Mapping[str, float] | pd.Series | None,
) -> list[ComparisonResult | None]:
    """Each run's comparison with the baseline as ``compare`` makes it on the scores."""
    from evalplat.comparison.verdicts import compare_scores

    mapping = None if weights is None else dict(weights)
    return [
        None
        if j == baseline
        else compare_scores(scores[baseline], frame, chosen, gates, options, weights=mapping)
        for j, frame in enumerate(scores)
    ]


def check_rankable(metrics: Sequence[str | Metric]) -> None:
    """Refuse a metric the leaderboard cannot rank: one not aggregated as a mean."""
    from evalplat.metrics.names import parse

    for metric in (parse(str(m)) for m in metrics):
        if metric.aggregate != "mean" or not metric.gateable:
            kind = metric.aggregate if metric.gateable else f"{metric.aggregate} count"
            raise InputError(f"--metric {metric}: the leaderboard ranks means; {metric} is "
                             f"aggregated as a {kind}")  # fmt: skip


def _matrix(
    metric: Metric, runs: Sequence[str], wide: list[pd.DataFrame], queries: pd.Index
) -> stats.FloatArray:
    """Queries by runs: the metric's per-query values, refused when it is not a mean or a run
    lacks it."""
    name = str(metric)
    check_rankable([metric])
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
    scaled: list[stats.FloatArray], options: CompareOptions, chosen: list[Metric]
) -> list[list[tuple[float, float]]]:
    """Bootstrap interval of every run's mean on every metric, from one stream of resamples,
    within the measure's range (weighted resamples can step past it)."""
    draws = SharedDraws(options, block_rows=WIDE_BLOCK_ROWS)
    rows: list[list[dict[str, Any]]] = []
    for x in scaled:
        rows.append([{} for _ in range(x.shape[1])])
        for j in range(x.shape[1]):
            if x.shape[0]:
                draws.mean_interval(rows[-1][j], x[:, j], None, 1.0)
    draws.run()
    return [[_within(metric, row.get("ci_low", 0.0), row.get("ci_high", 0.0)) for row in rs]
            for metric, rs in zip(chosen, rows, strict=True)]  # fmt: skip


def _within(metric: Metric, low: float, high: float) -> tuple[float, float]:
    if not metric.spec.bounded:
        return low, high
    return min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)
