"""The night's sweeps: each ``[[sweeps]]`` entry that is due runs after the configs.

An entry with ``every = "week"`` is due when none of its sweeps ran in the last 7 days, by the
night's clock (the store's ``utcnow``); one with a weekday is due on that weekday (UTC) unless
it already ran that day. The time a sweep ran is kept with the run of its winner
(``Store.note_sweep``), so a sweep that failed is due again the next night.

A sweep runs as ``evalplat sweep`` does (its settings are configs ``CONFIG~param=...`` on the
night's version of the test set; a setting already run is not searched again) and logs one
``sweep`` line: the settings, the in-sample and held-out gains over the config's latest
version, the winner and its verdict against it. A sweep never opens an alert: its verdict is
evidence for a change someone chooses to make. A sweep that fails logs its error on its line
and the night exits 3, the night's runs, comparisons and alerts kept.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from evalplat.errors import EvalplatError
from evalplat.nightly.project import ConfigSpec, Project, SweepSpec
from evalplat.nightly.project_sweeps import WEEKDAYS

if TYPE_CHECKING:
    from evalplat.running.sweep import SweepResult
    from evalplat.store import Store

LogFunction = Callable[[dict[str, Any]], None]
WEEK = timedelta(days=7)


def is_due(spec: SweepSpec, last: datetime | None, now: datetime) -> bool:
    """Whether the entry runs tonight, given when it last ran (None: never)."""
    if spec.every == "week":
        return last is None or now - last >= WEEK
    if WEEKDAYS[now.weekday()] != spec.every:
        return False
    return last is None or last.date() != now.date()


def due_sweeps(store: Store | None, project: Project, now: datetime) -> list[dict[str, Any]]:
    """Each entry, whether it is due and when it last ran (``nightly --dry-run``)."""
    found = []
    for spec in project.sweeps:
        last = None if store is None else store.last_sweep(spec.config, spec.key)
        found.append({**_entry(spec), "due": is_due(spec, last, now),
                      "last_run": None if last is None else last.isoformat()})  # fmt: skip
    return found


def sweep_night(
    store: Store, project: Project, versions: dict[str, int], emit: LogFunction
) -> bool:
    """Run the entries due tonight on the night's test set ``versions``; False when one
    failed (logged; the night exits 3)."""
    from evalplat.store.base import utcnow

    worked = True
    for spec in project.sweeps:
        now = utcnow()
        if not is_due(spec, store.last_sweep(spec.config, spec.key), now):
            continue
        config = next(c for c in project.configs if c.name == spec.config)
        entry = {**_entry(spec), "testset": f"{spec.testset}@{versions[spec.testset]}"}
        try:
            result = _run(store, spec, config, entry["testset"])
        except EvalplatError as error:
            emit({**entry, "error": f"{type(error).__name__}: {error}"})
            worked = False
            continue
        store.note_sweep(spec.key, result.winner_run_id, now)
        emit({**entry, **summary(result)})
    return worked


def summary(result: SweepResult) -> dict[str, Any]:
    """What the ``sweep`` line says of a sweep."""
    held = result.held_out
    return {
        "metric": result.metric,
        "settings": len(result.rows),
        "searched": result.searched,
        "cached": result.cached,
        "baseline": result.baseline,
        "winner": result.winner,
        "winner_run": result.winner_run_id,
        "in_sample_gain": held.in_sample_gain,
        "held_out_gain": held.held_out_gain,
        "held_out_interval": list(held.interval),
        "beats_baseline": held.beats_baseline,
        "verdict": result.comparison.verdict,
        "verdict_line": result.verdict_line,
        "compare": result.compare_command,
    }


def _run(store: Store, spec: SweepSpec, config: ConfigSpec, test_set: str) -> SweepResult:
    from evalplat.running.runner import RunSettings
    from evalplat.running.sweep import SweepOptions, plan_sweep, sweep

    options = SweepOptions(
        metric=spec.metric,
        folds=spec.folds,
        seed=spec.seed,
        max_runs=spec.max_runs,
        strategy=spec.strategy,
        settings=RunSettings(depth=config.depth, concurrency=config.concurrency),
        trigger="nightly",
    )
    plan = plan_sweep(store, spec.config, test_set, list(spec.grid), options)
    return sweep(store, plan)


def _entry(spec: SweepSpec) -> dict[str, Any]:
    return {"step": "sweep", "config": spec.config, "testset": spec.testset,
            "grid": list(spec.grid), "every": spec.every}  # fmt: skip
