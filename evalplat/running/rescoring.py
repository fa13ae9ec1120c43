"""Scores that follow the judgments: rescoring runs in bulk, and on demand before a comparison.

A test set grows: annotators judge the documents ``evalplat unjudged`` exported, and the next import
is a new version. Runs are never searched again for it; their stored results are scored against the
new judgments (``evalplat.running.runner.rescore``). Every (run, test set version) score set is
kept: a rescore adds an evaluation, it does not overwrite the scores of the version the run was
searched on, so history can still say which judgments each point was scored against.

- :func:`score_on` scores a run on a version unless it already has scores there; the nightly
  job calls it for the baseline and the previous night before comparing, so a new version never
  stops a night.
- :func:`rescore_all` scores every finished run of a test set on one version
  (``evalplat rescore --all --testset NAME@VER``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError

if TYPE_CHECKING:
    from evalplat.metrics.registry import Metric
    from evalplat.store import Store
    from evalplat.store.refs import VersionRef


@dataclass(frozen=True)
class RescoreOutcome:
    """What happened to one run: ``rescored``, ``kept`` (it already had scores on the version)
    or ``skipped`` (``reason`` says why: still running, results pruned)."""

    run_id: int
    config: str
    outcome: str
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_on(
    store: Store,
    run_id: int,
    test_set_ref: str | VersionRef,
    *,
    metrics: Sequence[str | Metric] | None = None,
) -> bool:
    """Score ``run_id`` against ``test_set_ref`` unless it already has scores on that version;
    True when it was scored now."""
    from evalplat.running import runner

    target = store.test_set_version(test_set_ref)
    if target.version in store.scored_versions(run_id):
        return False
    runner.rescore(store, run_id, f"{target.name}@{target.version}", metrics=metrics)
    return True


def rescore_all(
    store: Store,
    test_set_ref: str | VersionRef,
    *,
    metrics: Sequence[str | Metric] | None = None,
) -> list[RescoreOutcome]:
    """Score every finished run of the test set on ``test_set_ref`` (``NAME@VER``), oldest
    first. Runs that already have scores on that version are kept as they are; runs still
    running or whose results were pruned are skipped with the reason."""
    target = store.test_set_version(test_set_ref)
    version = f"{target.name}@{target.version}"
    outcomes = []
    for info in sorted(store.list_runs(), key=lambda i: i.id):
        if info.test_set != target.name:
            continue
        if info.status == "running":
            outcomes.append(RescoreOutcome(info.id, info.config, "skipped", "still running"))
            continue
        if info.results_pruned_at is not None:
            reason = "results pruned by the retention policy"
            outcomes.append(RescoreOutcome(info.id, info.config, "skipped", reason))
            continue
        try:
            done = score_on(store, info.id, version, metrics=metrics)
        except InputError as error:
            outcomes.append(RescoreOutcome(info.id, info.config, "skipped", str(error)))
            continue
        outcomes.append(RescoreOutcome(info.id, info.config, "rescored" if done else "kept"))
    return outcomes
