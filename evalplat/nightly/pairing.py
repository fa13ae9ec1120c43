"""What a night compares a fresh run with, and on which judgments.

A run is compared with the config's baseline and with its previous night on the test set
version the run was scored on: ``previous_night`` finds the latter, ``score_on_run_version``
scores both on that version from their stored results when new judgments arrived in between.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.store.runs import RunInfo

LogFunction = Callable[[dict[str, Any]], None]


def score_on_run_version(
    store: Store, run: RunInfo, others: list[int | None], emit: LogFunction, on: int
) -> set[int]:
    """New judgments never stop a night: runs compared with ``run`` are scored on its test set
    version first, from their stored results (no searching), unless they already are. Returns
    the runs that have scores on that version; one whose results were pruned is left out."""
    from evalplat.errors import InputError
    from evalplat.running.rescoring import score_on

    version = f"{run.test_set}@{on}"
    ready = set()
    for other in dict.fromkeys(o for o in others if o is not None and o != run.id):
        try:
            if score_on(store, other, version):
                emit({"step": "rescore", "run": other, "testset": version})
        except InputError as error:
            emit({"step": "rescore", "run": other, "testset": version, "skipped": str(error)})
            continue
        ready.add(other)
    return ready


def previous_night(store: Store, config: str, test_set: str, run_id: int) -> int | None:
    """The config's latest complete run on ``test_set`` before ``run_id``, or None."""
    for info in store.list_runs(config):
        if info.id < run_id and info.test_set == test_set and info.status == "complete":
            return info.id
    return None


def add_missing_metrics(
    store: Store, run: RunInfo, other: int, on: int, emit: LogFunction
) -> dict[str, str]:
    """A gate, target or gain map added since ``other`` ran asks for metrics it was never
    scored with: ``other`` is scored again on version ``on`` from its stored results (no
    searching) with every metric ``run`` has there. Returns the metrics ``other`` still lacks,
    each with the reason: none, unless its results were pruned (logged once)."""
    from evalplat.errors import InputError
    from evalplat.running import runner

    version = f"{run.test_set}@{on}"
    have = store.scored_metrics(other, version)
    missing = sorted(store.scored_metrics(run.id, version) - have)
    if not missing or not have:  # no scores on that version: see score_on_run_version
        return {}
    try:
        runner.rescore(store, other, version, metrics=sorted(have | set(missing)))
    except InputError as error:
        emit({"step": "rescore", "run": other, "testset": version, "metrics": missing,
              "skipped": str(error)})  # fmt: skip
        return {name: f"run {other} has no scores for {name} ({error})" for name in missing}
    emit({"step": "rescore", "run": other, "testset": version, "metrics": missing})
    return {}
