"""Targets in the store: check runs against targets, keep each run's verdicts, trace drift.

The verdicts themselves are computed from plain per-query values by
:mod:`evalplat.comparison.targets`; this module reads the values of a run's latest evaluation,
stores the verdicts (``run_target``, one row per run and metric, replaced on a new check) and
reads them back for ``runs show``, history pages and the site index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import delete, select

from evalplat.comparison.targets import Drift, Target, TargetVerdict, drift, verdict
from evalplat.db.models import RunTarget
from evalplat.errors import InputError
from evalplat.store.base import StoreBase, utcnow

if TYPE_CHECKING:
    import pandas as pd


class TargetsMixin(StoreBase):
    def check_targets(
        self,
        run_ref: str | int,
        targets: Sequence[Target],
        *,
        seed: int = 0,
        record: bool = False,
        scores: pd.DataFrame | None = None,
    ) -> list[TargetVerdict]:
        """The run's verdict against each target, from its latest evaluation's per-query values.

        A target on a metric the run was not scored with is an input error (rescore the run with
        that metric). ``record=True`` stores the verdicts with the run."""
        run_id = self.resolve_run(run_ref)  # type: ignore[attr-defined]
        frame = self.evaluation_scores(run_id) if scores is None else scores  # type: ignore[attr-defined]
        results = []
        for target in targets:
            values = frame.loc[frame["metric"] == target.metric, "value"].to_numpy(np.float64)
            if values.size == 0:
                raise InputError(
                    f"target {target.label}: run {run_id} has no scores of {target.metric} "
                    f"(score it: evalplat rescore {run_id} --metric {target.metric})"
                )
            results.append(verdict(target, values, seed=seed))
        if record:
            self.record_target_verdicts(run_id, results)
        return results

    def record_target_verdicts(self, run_id: int, verdicts: Sequence[TargetVerdict]) -> None:
        """Keep the verdicts with the run, replacing any earlier check of the same metrics."""
        now = utcnow()
        with self.session() as session:
            metrics = [v.target.metric for v in verdicts]
            if metrics:
                session.execute(
                    delete(RunTarget).where(
                        RunTarget.run_id == run_id, RunTarget.metric.in_(metrics)
                    )
                )
            session.add_all(
                RunTarget(
                    run_id=run_id,
                    metric=v.target.metric,
                    bound=v.target.bound,
                    target_value=v.target.value,
                    value=_finite(v.value),
                    ci_low=_finite(v.ci_low),
                    ci_high=_finite(v.ci_high),
                    verdict=v.verdict,
                    checked_at=now,
                )
                for v in verdicts
            )

    def target_verdicts(self, run_ids: Sequence[int]) -> dict[int, list[TargetVerdict]]:
        """The stored verdicts of each run (by metric), for the runs that have any."""
        found: dict[int, list[TargetVerdict]] = {}
        if not run_ids:
            return found
        with self.session() as session:
            rows = session.scalars(
                select(RunTarget)
                .where(RunTarget.run_id.in_(list(run_ids)))
                .order_by(RunTarget.run_id, RunTarget.metric)
            ).all()
            for row in rows:
                target = Target(metric=row.metric, bound=row.bound, value=row.target_value)
                found.setdefault(row.run_id, []).append(
                    TargetVerdict(
                        target,
                        _nan(row.value),
                        _nan(row.ci_low),
                        _nan(row.ci_high),
                        row.verdict,
                    )
                )
        return found

    def target_drift(self, config: str, test_set: str, target: Target) -> Drift:
        """The trend of ``target.metric`` over the complete runs of the config inside the
        target's window (ending at the latest run)."""
        points = [
            p
            for p in self.history(config, test_set)  # type: ignore[attr-defined]
            if p.status == "complete" and target.metric in p.means
        ]
        return drift(
            target, [p.started_at for p in points], [p.means[target.metric] for p in points]
        )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _nan(value: float | None) -> float:
    return math.nan if value is None else value
