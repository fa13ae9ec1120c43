"""``[[sweeps]]`` of the project file: a sweep of a config's params the nightly runs when it is
due (see :mod:`evalplat.nightly.sweeps` and ``evalplat sweep``).

```toml
[[sweeps]]
config = "lexical"                 # a config of this project (its latest version is swept)
testset = "topics"                 # a test set the config runs on
grid = { k1 = [0.9, 1.2], b = [0.5, 0.75] }   # a param (or "table.key") and its values
metric = "nDCG@10"                 # optional: what the settings are ranked on
folds = 5                          # optional: folds of the cross-validation over queries
seed = 0                           # optional
max_runs = 50                      # optional: the budget of settings searched on every query
strategy = "grid"                  # optional: grid, random or halving
every = "week"                     # optional: "week" (7 days after the last) or a weekday
```

The grid is checked as ``--grid`` is, and every setting against the searcher's params, so a bad
entry is an input error before the night writes anything.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.validation import SEED_MAX
from evalplat.nightly.project import ConfigSpec, SweepSpec
from evalplat.nightly.project_values import whole

Fail = Callable[[str, str | None, int, str | None], InputError]

SWEEP_KEYS = ("config", "testset", "grid", "metric", "folds", "seed", "max_runs", "strategy",
              "every")  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WHERE = "sweeps"


def read_sweeps(
    entries: list[Any], fail: Fail, configs: tuple[ConfigSpec, ...]
) -> tuple[SweepSpec, ...]:
    """Every ``[[sweeps]]`` entry; the same config, test set and grid twice is refused."""
    found = [_sweep(entry, index, fail, configs) for index, entry in enumerate(entries)]
    keys = [spec.key for spec in found]
    for index, key in enumerate(keys):
        if keys.index(key) != index:
            raise fail("the same sweep (config, testset and grid) is given twice", WHERE, index,
                       "grid")  # fmt: skip
    return tuple(found)


def _sweep(
    entry: dict[str, Any], index: int, fail: Fail, configs: tuple[ConfigSpec, ...]
) -> SweepSpec:
    from evalplat.metrics.names import parse
    from evalplat.running.sweep import MAX_RUNS_LIMIT
    from evalplat.running.sweep_plan import STRATEGIES

    for key in entry:
        if key not in SWEEP_KEYS:
            raise fail(f"unknown key; expected one of: {', '.join(sorted(SWEEP_KEYS))}", WHERE,
                       index, key)  # fmt: skip
    config = _config(entry.get("config"), index, fail, configs)
    testset = entry.get("testset")
    if not isinstance(testset, str) or testset not in config.testsets:
        known = ", ".join(config.testsets) or "none"
        raise fail(f"needs testset = NAME, a test set config '{config.name}' runs on "
                   f"(known: {known})", WHERE, index, "testset")  # fmt: skip
    metric = entry.get("metric")
    if metric is not None:
        if not isinstance(metric, str):
            raise fail('must be a metric name, e.g. "nDCG@10"', WHERE, index, "metric")
        try:
            parsed = parse(metric)
        except InputError as error:
            raise fail(error.problem, WHERE, index, "metric") from None
        if not parsed.gateable:
            raise fail(f"{parsed}: a sweep ranks on a measure compare can gate", WHERE, index,
                       "metric")  # fmt: skip
        metric = str(parsed)
    strategy = entry.get("strategy", "grid")
    if strategy not in STRATEGIES:
        raise fail(f"must be one of: {', '.join(STRATEGIES)}", WHERE, index, "strategy")
    max_runs = whole(entry.get("max_runs", 50), fail, WHERE, index, "max_runs", minimum=1,
                     maximum=MAX_RUNS_LIMIT, unit="of settings")  # fmt: skip
    grid = _grid(entry.get("grid"), index, fail, config, strategy, max_runs)
    every = entry.get("every", "week")
    if not isinstance(every, str) or every.lower() not in ("week", *WEEKDAYS):
        raise fail('must be "week" or a weekday name ("monday" … "sunday")', WHERE, index,
                   "every")  # fmt: skip
    return SweepSpec(
        config=config.name,
        testset=testset,
        grid=grid,
        metric=metric,
        folds=whole(entry.get("folds", 5), fail, WHERE, index, "folds", minimum=2, unit="of folds"),
        seed=whole(entry.get("seed", 0), fail, WHERE, index, "seed", minimum=0, maximum=SEED_MAX),
        max_runs=max_runs,
        strategy=strategy,
        every=every.lower(),
    )


def _config(value: Any, index: int, fail: Fail, configs: tuple[ConfigSpec, ...]) -> ConfigSpec:
    found = next((c for c in configs if c.name == value), None)
    if found is None:
        known = ", ".join(c.name for c in configs) or "none"
        raise fail(f"needs config = NAME, a config of this project (known: {known})", WHERE,
                   index, "config")  # fmt: skip
    return found


def _grid(
    value: Any, index: int, fail: Fail, config: ConfigSpec, strategy: str, max_runs: int
) -> tuple[str, ...]:
    """``{param = [values]}`` → ``--grid`` texts, checked as ``--grid`` is, every setting
    against the searcher's params."""
    from evalplat.running.sweep_plan import expand, grid_size, parse_grid
    from evalplat.searchers import validate_config

    shape = "must be a table of params and their values, e.g. { k1 = [0.9, 1.2] }"
    if not isinstance(value, dict) or not value:
        raise fail(shape, WHERE, index, "grid")
    texts = []
    for param, values in _flat(value):
        if not isinstance(values, list) or not values:
            raise fail(f"{param}: must be a non-empty list of values, e.g. [0.9, 1.2]", WHERE,
                       index, "grid")  # fmt: skip
        for item in values:
            scalar = isinstance(item, str | int | float | bool)
            if not scalar or (isinstance(item, float) and not math.isfinite(item)):
                raise fail(f"{param}: each value must be a string, a finite number or a "
                           "boolean", WHERE, index, "grid")  # fmt: skip
        texts.append(f"{param}={json.dumps(values, ensure_ascii=False)}")
    try:
        axes = parse_grid(texts, "grid")
    except InputError as error:
        raise fail(error.problem.removeprefix("grid").lstrip(": "), WHERE, index, "grid") from None
    size = grid_size(axes)
    if size > 100_000 or (strategy == "grid" and size > max_runs):
        raise fail(f"the grid has {size} settings, more than max_runs {max_runs} (at most "
                   "100000); raise max_runs or use strategy random or halving", WHERE, index,
                   "grid")  # fmt: skip
    for setting in expand(config.params, axes):
        try:
            validate_config(config.searcher, setting.params)
        except InputError as error:
            raise fail(f"{setting.label()}: {error.problem}", WHERE, index, "grid") from None
    return tuple(texts)


def _flat(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{weights = {title = [1, 2]}}`` → ``[("weights.title", [1, 2])]``."""
    found: list[tuple[str, Any]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            found += _flat(value, f"{prefix}{key}.")
        else:
            found.append((f"{prefix}{key}", value))
    return found
