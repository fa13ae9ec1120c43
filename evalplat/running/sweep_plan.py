"""What a sweep searches: the grid, its settings, their names, and the search over the grid.

A grid is one or more ``--grid 'param=v1,v2,...'`` axes. A value is typed the way ``--param``
types it (``1.5`` a number, ``true`` a boolean, ``porter`` a string); a dotted name sets one key
of a table (``weights.title=1,2,4``), so that a mapping param is swept key by key; a value list
written as a TOML array (``'weights=[...]'``) may hold values with commas. A **setting** is one
combination: the config's own params with the grid's values merged in, in the grid's order.

Budgets (``max_runs``: settings searched on every query):

- ``grid``: every setting; refused when there are more than the budget;
- ``random``: a seeded sample of ``max_runs`` settings (all of them when the grid fits);
- ``halving``: successive halving on growing query subsets (Jamieson and Talwalkar, 2016,
  "Non-stochastic best arm identification and hyperparameter optimization"): every setting is
  scored on a small query subset, the better half moves on to twice the queries, until the
  survivors are searched on every query. :func:`halving_schedule` sizes the rungs so that the
  searches of all rungs cost at most ``max_runs`` full runs.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.validation import NAME_MAX_LENGTH
from evalplat.searchers.configs import merge_params, parse_value

STRATEGIES = ("grid", "random", "halving")
SEPARATOR = "~"  # CONFIG~k=v,...: a setting's config name; '@' would read as a version
MIN_RUNG_QUERIES = 5  # fewer queries than this rank settings by noise


@dataclass(frozen=True)
class Axis:
    """One swept param (``weights.title`` for a key of a table) and its values, in order."""

    param: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Setting:
    """One combination of the grid: the values by param, and the params it runs with."""

    values: tuple[tuple[str, Any], ...]
    params: dict[str, Any]

    def label(self) -> str:
        """``k1=1.2,b=0.75``: what tables and config names show."""
        return ",".join(f"{name}={_shown(value)}" for name, value in self.values)

    def config_name(self, config: str) -> str:
        """``CONFIG~label``, or ``CONFIG~<hash>`` when that would be longer than a name may be."""
        name = f"{config}{SEPARATOR}{self.label()}"
        if len(name) <= NAME_MAX_LENGTH:
            return name
        digest = hashlib.sha256(self.label().encode("utf-8")).hexdigest()[:12]
        return f"{config}{SEPARATOR}{digest}"


@dataclass(frozen=True)
class Rung:
    """One round of successive halving: how many settings search how many queries."""

    settings: int
    queries: int


def parse_axis(text: str, option: str = "--grid") -> Axis:
    """``'param=v1,v2'`` (or ``'param=[v1, v2]'``) → an axis; one-line errors name ``option``."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name or not raw.strip():
        raise InputError(f"{option} {text[:60]!r}: expected PARAM=VALUE,VALUE,...")
    if any(not part for part in name.split(".")):
        raise InputError(f"{option} {text[:60]!r}: the param name {name!r} has an empty part")
    raw = raw.strip()
    if raw.startswith("["):
        try:
            parsed = tomllib.loads(f"v = {raw}")["v"]
        except (tomllib.TOMLDecodeError, ValueError, RecursionError):
            raise InputError(
                f"{option} {text[:60]!r}: the value list is not a TOML array"
            ) from None
        values = tuple(parsed)
    else:
        values = tuple(parse_value(part.strip()) for part in raw.split(","))
    if any(value == "" for value in values):
        raise InputError(f"{option} {text[:60]!r}: an empty value (two commas in a row?)")
    if not values:
        raise InputError(f"{option} {text[:60]!r}: no values")
    unique = tuple(_unique(values))
    return Axis(name, unique)


def parse_grid(texts: Sequence[str], option: str = "--grid") -> list[Axis]:
    """Every axis of a grid; a param given twice is an error."""
    if not texts:
        raise InputError(f"give at least one {option} PARAM=VALUE,VALUE,...")
    axes = [parse_axis(text, option) for text in texts]
    return check_axes(axes, option)


def check_axes(axes: list[Axis], option: str) -> list[Axis]:
    """A param swept twice, or a table swept both whole and by key, is refused."""
    seen: set[str] = set()
    for axis in axes:
        if axis.param in seen:
            raise InputError(f"{option}: the param {axis.param!r} is swept twice")
        for other in seen:
            if axis.param.startswith(other + ".") or other.startswith(axis.param + "."):
                raise InputError(f"{option}: {other!r} and {axis.param!r} sweep the same table")
        seen.add(axis.param)
    return axes


def grid_size(axes: Sequence[Axis]) -> int:
    return math.prod(len(axis.values) for axis in axes)


def expand(base: Mapping[str, Any], axes: Sequence[Axis]) -> list[Setting]:
    """Every combination, the last axis varying fastest, merged over the ``base`` params."""
    settings = []
    for combo in itertools.product(*(axis.values for axis in axes)):
        values = tuple((axis.param, value) for axis, value in zip(axes, combo, strict=True))
        overrides: dict[str, Any] = {}
        for name, value in values:
            _set_dotted(overrides, name, value)
        settings.append(Setting(values, merge_params(base, overrides)))
    return settings


def sample(settings: Sequence[Setting], count: int, seed: int) -> list[Setting]:
    """``count`` settings drawn without replacement (seeded), kept in grid order."""
    if count >= len(settings):
        return list(settings)
    chosen = sorted(random.Random(seed).sample(range(len(settings)), count))
    return [settings[index] for index in chosen]


def halving_schedule(candidates: int, queries: int, max_runs: int) -> list[Rung]:
    """Rungs of successive halving (factor 2) whose searches cost at most ``max_runs`` full runs.

    The last rung searches ``max(1, max_runs // 2)`` survivors (at most ``candidates``) on every
    query; each earlier rung has twice the settings of the next and half its queries. The first
    rung's query count is the largest that keeps the total within budget; when even
    ``MIN_RUNG_QUERIES`` queries per setting would not fit, fewer candidates enter (the caller
    samples them): ``rungs[0].settings`` says how many.
    """
    if candidates < 1 or queries < 1 or max_runs < 1:
        raise InputError("a sweep needs at least one setting, one query and --max-runs 1")
    survivors = max(1, min(candidates, max_runs // 2))
    if candidates <= max_runs:
        return [Rung(candidates, queries)]
    floor_queries = min(queries, MIN_RUNG_QUERIES)
    entering = candidates
    while True:
        counts = [entering]
        while counts[-1] > survivors:
            counts.append(max(survivors, math.ceil(counts[-1] / 2)))
        spare = max_runs * queries - survivors * queries
        # queries of rung r: first * 2**r (capped at every query); first rung sized to fit
        weight = sum(count * 2**r for r, count in enumerate(counts[:-1]))
        first = spare // weight if weight else queries
        if first >= floor_queries or entering <= survivors + 1:
            first = max(first, floor_queries)
            break
        entering = max(survivors + 1, entering * 3 // 4)
    rungs = [Rung(count, min(queries, first * 2**r)) for r, count in enumerate(counts[:-1])]
    rungs.append(Rung(counts[-1], queries))
    return rungs


def rung_queries(query_ids: Sequence[str], count: int, seed: int) -> list[str]:
    """The first ``count`` queries of one seeded shuffle: each rung's subset holds the last's."""
    order = list(query_ids)
    random.Random(seed).shuffle(order)
    return order[:count]


def _set_dotted(params: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    table = params
    for part in parts[:-1]:
        table = table.setdefault(part, {})
    table[parts[-1]] = value


def _unique(values: Sequence[Any]) -> list[Any]:
    seen: set[str] = set()
    kept = []
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
