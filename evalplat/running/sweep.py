"""A sweep: run a config's settings over a grid, choose one on held-out queries, gate it.

``plan_sweep`` checks everything before anything is written (the grid against the searcher's
declared params, the metric, the folds, the budget); ``sweep`` then runs it:

1. the baseline (default: the config's latest version as it is) gets a complete run;
2. with ``halving``, the early rungs search query subsets in memory and drop the worse half;
3. every setting that reaches the last rung is a config version ``CONFIG~param=v,...`` with a
   complete run on the test set version, searched with the runner's concurrency and retries.
   A setting whose version already has a complete run there is not searched again (a run of it
   left partial or interrupted is resumed), and a run not scored with the metric is rescored;
4. the per-query values go to cross-validation (``evalplat.comparison.tuning``), and the best
   setting is compared with the baseline the way ``compare`` compares (its default gates).

Settings get config names of their own so that the config's latest version stays what the team
runs (the baseline, the nightly), ``runs list CONFIG`` and ``history CONFIG`` stay its history,
and ``CONFIG~*`` finds every setting (a glob, a leaderboard).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evalplat.comparison.tuning import HeldOut, assign_folds, cross_validate, verdict_line
from evalplat.errors import InputError
from evalplat.inputs.validation import SEED_MAX, check_number
from evalplat.metrics.names import parse
from evalplat.metrics.numbers import counted
from evalplat.metrics.registry import DEFAULT_METRICS, Metric
from evalplat.running import sweep_runs
from evalplat.running.runner import RunSettings, check_query_texts
from evalplat.running.sweep_plan import (
    STRATEGIES,
    Rung,
    Setting,
    expand,
    grid_size,
    halving_schedule,
    parse_grid,
    sample,
)
from evalplat.searchers import validate_config
from evalplat.store.refs import VersionRef

if TYPE_CHECKING:
    from evalplat.comparison.results import ComparisonResult
    from evalplat.store import Store
    from evalplat.store.configs import ConfigVersionInfo
    from evalplat.testsets.content import TestSetContent

Progress = Callable[[str], None]
MAX_RUNS_LIMIT = 10_000


@dataclass(frozen=True)
class SweepOptions:
    metric: str | None = None  # default: the first gated relevance metric of the defaults
    folds: int = 5
    seed: int = 0
    max_runs: int = 50
    strategy: str = "grid"
    baseline: str | None = None  # a config reference; default the swept config's current version
    settings: RunSettings = field(default_factory=RunSettings)
    trigger: str = "manual"


@dataclass(frozen=True)
class SweepPlan:
    """A checked sweep: nothing is written until :func:`sweep` runs it."""

    config: ConfigVersionInfo
    test_set: VersionRef
    baseline: VersionRef
    metric: Metric
    grid: list[Setting]
    candidates: list[Setting]
    rungs: list[Rung]
    options: SweepOptions
    content: TestSetContent = field(repr=False)


@dataclass(frozen=True)
class SettingRow:
    label: str
    config: str | None  # NAME@VERSION when it reached the last rung
    run_id: int | None
    mean: float | None  # over every query; None when dropped in an early rung
    rung: int  # the last rung it was scored in (0-based)
    rung_mean: float
    cached: bool
    chosen_in_folds: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SweepResult:
    config: str
    test_set: str
    metric: str
    strategy: str
    grid_size: int
    max_runs: int
    rungs: list[Rung]
    rows: list[SettingRow]  # ranked: full runs by mean, then early-rung drops
    baseline: str
    baseline_run_id: int
    baseline_mean: float
    searched: int  # full runs searched by this sweep (cached ones are not)
    cached: int
    held_out: HeldOut
    verdict_line: str
    winner: str
    winner_run_id: int
    comparison: ComparisonResult

    @property
    def compare_command(self) -> str:
        return f"evalplat compare {self.baseline_run_id} {self.winner_run_id}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "test_set": self.test_set,
            "metric": self.metric,
            "strategy": self.strategy,
            "grid_size": self.grid_size,
            "max_runs": self.max_runs,
            "rungs": [{"settings": r.settings, "queries": r.queries} for r in self.rungs],
            "settings": [row.to_dict() for row in self.rows],
            "baseline": {
                "config": self.baseline,
                "run_id": self.baseline_run_id,
                "mean": self.baseline_mean,
            },
            "searched": self.searched,
            "cached": self.cached,
            "held_out": self.held_out.to_dict(),
            "verdict_line": self.verdict_line,
            "winner": {"setting": self.winner, "run_id": self.winner_run_id},
            "verdict": self.comparison.verdict,
            "comparison_id": self.comparison.id,
            "compare_command": self.compare_command,
        }


def default_metric() -> Metric:
    """The first metric ``compare`` gates by default among the default metrics (nDCG@10)."""
    from evalplat.comparison.thresholds import gated_by_default

    return next(m for m in map(parse, DEFAULT_METRICS) if gated_by_default(m))


def plan_sweep(
    store: Store, config_ref: str, test_set_ref: str, grid: list[str], options: SweepOptions
) -> SweepPlan:
    """Check a sweep without writing: one-line errors name the option at fault."""
    if options.strategy not in STRATEGIES:
        raise InputError(f"--strategy must be one of {', '.join(STRATEGIES)}, "
                         f"got {options.strategy!r}")  # fmt: skip
    check_number(options.max_runs, "--max-runs", minimum=1, maximum=MAX_RUNS_LIMIT)
    check_number(options.folds, "--folds", minimum=2)
    check_number(options.seed, "--seed", minimum=0, maximum=SEED_MAX)
    axes = parse_grid(grid)
    size = grid_size(axes)
    if options.strategy == "grid" and size > options.max_runs:
        raise InputError(f"--grid has {size} settings, more than --max-runs {options.max_runs}; "
                         "raise --max-runs or use --strategy random or halving")  # fmt: skip
    if size > 100_000:
        raise InputError(f"--grid has {size} settings; at most 100000 are expanded")
    try:
        metric = parse(options.metric) if options.metric else default_metric()
    except InputError as error:
        raise InputError(f"--metric {options.metric}: {error}") from None
    if not metric.gateable:
        raise InputError(f"--metric {metric}: a sweep ranks on a measure compare can gate")
    config = store.config_version(config_ref)
    if "~" in config.name:
        raise InputError(f"config {config.name!r} is a sweep's setting; sweep its config")
    test_set = store.test_set_version(test_set_ref)
    test_key = VersionRef(test_set.name, test_set.version)
    baseline_info = store.config_version(options.baseline or config.name)
    content = store.load_test_set(test_key)
    if options.folds > len(content.queries):
        raise InputError(f"--folds {options.folds} is more than the test set's "
                         f"{counted(len(content.queries), 'query')}")  # fmt: skip
    settings = expand(config.params, axes)
    for setting in settings:
        try:
            validate_config(config.searcher, setting.params)
        except InputError as error:
            raise InputError(f"--grid {setting.label()}: {error}") from None
    check_query_texts(config.searcher, config.params, content, str(test_key))
    candidates, rungs = _search_space(settings, len(content.queries), options)
    return SweepPlan(
        config=config,
        test_set=test_key,
        baseline=VersionRef(baseline_info.name, baseline_info.version),
        metric=metric,
        grid=settings,
        candidates=candidates,
        rungs=rungs,
        options=options,
        content=content,
    )


def _search_space(
    settings: list[Setting], queries: int, options: SweepOptions
) -> tuple[list[Setting], list[Rung]]:
    if options.strategy == "halving":
        rungs = halving_schedule(len(settings), queries, options.max_runs)
        return sample(settings, rungs[0].settings, options.seed), rungs
    chosen = sample(settings, options.max_runs, options.seed)
    return chosen, [Rung(len(chosen), queries)]


def sweep(store: Store, plan: SweepPlan, progress: Progress | None = None) -> SweepResult:
    """Run a checked sweep; see the module docstring for the steps."""
    return _sweep(store, plan, progress or (lambda _: None))


def _sweep(store: Store, plan: SweepPlan, say: Progress) -> SweepResult:
    metric = str(plan.metric)
    metrics = list(dict.fromkeys([metric, *DEFAULT_METRICS]))
    runs = sweep_runs.RunSource(store, plan.test_set, plan.content, metrics, plan.options)
    baseline = runs.full(plan.baseline.name, None, plan.baseline.version)
    survivors = list(plan.candidates)
    dropped: list[SettingRow] = []
    query_ids = [str(q) for q in plan.content.queries["query_id"]]
    sign = 1.0 if plan.metric.higher_is_better else -1.0
    for index, rung in enumerate(plan.rungs[:-1]):
        settings = counted(len(survivors), "setting")
        say(f"rung {index + 1}: {settings} on {counted(rung.queries, 'query')}")
        scored = runs.on_subset(plan.config, survivors, rung.queries, plan.options.seed)
        order = sorted(range(len(survivors)), key=lambda i: -sign * scored[i])
        keep = plan.rungs[index + 1].settings
        for i in order[keep:]:
            label = survivors[i].label()
            dropped.append(SettingRow(label, None, None, None, index, scored[i], False, 0))
        survivors = [survivors[i] for i in sorted(order[:keep])]
    full = []
    for number, setting in enumerate(survivors, 1):
        say(f"setting {number}/{len(survivors)}: {setting.label()}")
        name = setting.config_name(plan.config.name)
        full.append(runs.full(name, (plan.config.searcher, setting.params)))
    values = np.array([runs.values(run.run_id, query_ids) for run in full]) * sign
    base_values = np.array(runs.values(baseline.run_id, query_ids)) * sign
    held = cross_validate(
        values,
        base_values,
        assign_folds(_strata(plan.content), plan.options.folds, plan.options.seed),
        weights=_weights(plan.content),
        seed=plan.options.seed,
    )
    last = len(plan.rungs) - 1
    rows = [
        SettingRow(
            setting.label(),
            run.config,
            run.run_id,
            run.mean,
            last,
            run.mean,
            run.cached,
            held.chosen.count(i),
        )
        for i, (setting, run) in enumerate(zip(survivors, full, strict=True))
    ]
    rows.sort(key=lambda row: -sign * (row.mean or 0.0))
    dropped.sort(key=lambda row: (-row.rung, -sign * row.rung_mean))
    winner = survivors[held.best]
    comparison = store.compare_runs(str(baseline.run_id), str(full[held.best].run_id))
    return SweepResult(
        config=plan.config.name,
        test_set=str(plan.test_set),
        metric=metric,
        strategy=plan.options.strategy,
        grid_size=len(plan.grid),
        max_runs=plan.options.max_runs,
        rungs=plan.rungs,
        rows=rows + dropped,
        baseline=baseline.config,
        baseline_run_id=baseline.run_id,
        baseline_mean=baseline.mean,
        searched=sum(not run.cached for run in full),
        cached=sum(run.cached for run in full),
        held_out=held,
        verdict_line=verdict_line(held, winner.label()),
        winner=winner.label(),
        winner_run_id=full[held.best].run_id,
        comparison=comparison,
    )


def _strata(content: TestSetContent) -> list[str]:
    """Each query's first segment tag ("" without one): the folds keep segments in proportion."""
    import json

    strata = []
    for tags in content.queries["tags"]:
        parsed = json.loads(tags) if isinstance(tags, str) and tags else []
        strata.append(str(parsed[0]) if parsed else "")
    return strata


def _weights(content: TestSetContent) -> np.ndarray[Any, np.dtype[np.float64]] | None:
    weights = content.queries["weight"].astype(float)
    if weights.isna().all():
        return None
    return np.asarray(weights.fillna(1.0), dtype=np.float64)


__all__ = ["SweepOptions", "SweepPlan", "SweepResult", "plan_sweep", "sweep"]
