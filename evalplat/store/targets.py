"""Targets in the store: check runs against targets, keep each run's verdicts, trace drift.

The verdicts themselves are computed from plain per-query values by
:mod:`evalplat.comparison.targets`; this module reads the values of a run's latest evaluation
with the weights and tags of the test set version it was scored on, stores the verdicts
(``run_target``, one row per run, metric and segment, replaced on a new check) and reads them
back for ``runs show``, history pages and the site index.

A segment target naming a tag that no query of that test set version carries is an input error:
a misspelt segment would otherwise never be checked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import delete, select

from evalplat.comparison.targets import Drift, Target, TargetVerdict, drift, judged, verdict
from evalplat.db.models import Config, ConfigVersion, Run, TestSet, TestSetVersion
from evalplat.db.operations import RunTarget
from evalplat.errors import InputError
from evalplat.metrics.names import parse
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.evaluation_rows import latest_evaluations
from evalplat.store.run_figures import run_figures
from evalplat.store.segments import query_facts

if TYPE_CHECKING:
    from datetime import datetime

    import pandas as pd
    from sqlalchemy import Select


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
        """The run's verdict against each target, from its latest evaluation's per-query values
        (weighted by the query weights of the test set version it was scored on, if any).

        A target on a metric the run was not scored with, or on a segment no query carries, is
        an input error (rescore the run with that metric). Every target is checked before any
        verdict is stored. ``record=True`` stores the verdicts with the run."""
        run_id = self.resolve_run(run_ref)  # type: ignore[attr-defined]
        frame = self.evaluation_scores(run_id) if scores is None else scores  # type: ignore[attr-defined]
        weights, tags = self._query_facts(run_id) if targets else (None, {})
        results = []
        for target in targets:
            if frame[frame["metric"] == target.metric].empty:
                raise InputError(
                    f"target {target.label}: run {run_id} has no scores of {target.metric} "
                    f"(score it: evalplat rescore {run_id} --metric {target.metric})"
                )
            if target.segment is not None:
                _known_segment(target, run_id, tags)
            values, w = _values(frame, target, weights, tags)
            results.append(verdict(target, values, seed=seed, weights=w))
        # unjudged documents can move only a measure that reads judgments: a miss of any
        # other (Coverage, Latency, ZeroResult) stands on its figure
        missed = [
            t.target.metric
            for t in results
            if t.verdict == "missed" and parse(t.target.metric).reads_judgments
        ]
        bound = self._optimistic_scores(run_id, missed) if missed else None
        if bound is not None:
            for at, result in enumerate(results):
                if result.verdict != "missed" or result.target.metric not in missed:
                    continue
                values, w = _values(bound, result.target, weights, tags)
                results[at] = judged(result, verdict(result.target, values, seed=seed, weights=w))
        if record:
            self.record_target_verdicts(run_id, results)
        return results

    def check_target_segments(self, run_ref: str | int, targets: Sequence[Target]) -> None:
        """Refuse a target whose segment no query of the run's test set carries (``compare``
        checks this before it stores anything)."""
        if not any(t.segment is not None for t in targets):
            return
        run_id = self.resolve_run(run_ref)  # type: ignore[attr-defined]
        _, tags = self._query_facts(run_id)
        for target in targets:
            if target.segment is not None:
                _known_segment(target, run_id, tags)

    def _optimistic_scores(self, run_id: int, metrics: Sequence[str]) -> pd.DataFrame | None:
        """Per-query optimistic bound (``query_id, metric, value``) of ``metrics``: the most
        each query could score under any grades of the unjudged documents in the run's top
        ``k`` (``evalplat.comparison.target_bound``), on the judgments of the version its
        latest evaluation used; None when its ranked results are gone (pruned, or an online
        run) or nothing was scored."""
        from evalplat.comparison.target_bound import target_bound

        with self.session() as session:
            run = session.get(Run, run_id)
            evaluation_id = latest_evaluations(session, [run_id]).get(run_id)
            if run is None or evaluation_id is None:
                return None
            if run.results_pruned_at is not None or run.trigger == "online":
                return None
        judgments, topics, _ = self._judged_topics(evaluation_id)  # type: ignore[attr-defined]
        results = self.load_results(run_id)  # type: ignore[attr-defined]
        return target_bound(judgments, results, list(dict.fromkeys(metrics)), topics)

    def _query_facts(self, run_id: int) -> tuple[dict[str, float] | None, dict[str, list[str]]]:
        """Weights (None when no query has one) and tags of the queries of the test set version
        the run's latest evaluation was scored on."""
        with self.session() as session:
            evaluation_id = latest_evaluations(session, [run_id]).get(run_id)
            if evaluation_id is None:
                return None, {}
            weights, tags = query_facts(session, evaluation_id)
        return weights, tags or {}

    def record_target_verdicts(self, run_id: int, verdicts: Sequence[TargetVerdict]) -> None:
        """Keep the verdicts with the run, replacing any earlier check of the same metrics and
        segments."""
        now = utcnow()
        with self.session() as session:
            for v in verdicts:
                session.execute(
                    delete(RunTarget).where(
                        RunTarget.run_id == run_id,
                        RunTarget.metric == v.target.metric,
                        RunTarget.segment == (v.target.segment or ""),
                    )
                )
            session.add_all(
                RunTarget(
                    run_id=run_id,
                    metric=v.target.metric,
                    segment=v.target.segment or "",
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
        """The stored verdicts of each run (by metric, then segment), for the runs that have
        any."""
        found: dict[int, list[TargetVerdict]] = {}
        if not run_ids:
            return found
        with self.session() as session:
            rows = session.scalars(
                select(RunTarget)
                .where(RunTarget.run_id.in_(list(run_ids)))
                .order_by(RunTarget.run_id, RunTarget.metric, RunTarget.segment)
            ).all()
            for row in rows:
                target = Target(
                    metric=row.metric,
                    bound=row.bound,
                    value=row.target_value,
                    segment=row.segment or None,
                )
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
        target's window (ending at the latest run). For a segment target, the trend of the
        segment's figure kept with each run checked against it."""
        if target.segment is not None:
            return self._segment_drift(config, test_set, target)
        # every run's figure as history pages draw it (``evalplat.store.run_figures``)
        with self.session() as session:
            runs = session.execute(_config_runs(config, test_set).order_by(Run.id)).all()
            figures = run_figures(session, [run_id for run_id, _ in runs], "searched")
        points = [
            (started, figure.means[target.metric])
            for run_id, started in runs
            if (figure := figures.get(run_id)) is not None and target.metric in figure.means
        ]
        return drift(target, [t for t, _ in points], [v for _, v in points])

    def _segment_drift(self, config: str, test_set: str, target: Target) -> Drift:
        with self.session() as session:
            rows = session.execute(
                _config_runs(config, test_set)
                .add_columns(RunTarget.value)
                .join(RunTarget, RunTarget.run_id == Run.id)
                .where(
                    RunTarget.metric == target.metric,
                    RunTarget.segment == target.segment,
                    RunTarget.value.is_not(None),
                )
            ).all()
        return drift(target, [t for _, t, _ in rows], [float(v) for _, _, v in rows])


def _config_runs(config: str, test_set: str) -> Select[int, datetime]:
    """``(run id, started at)`` of the complete runs of ``config`` on ``test_set``."""
    return (
        select(Run.id, Run.started_at)
        .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
        .join(Config, ConfigVersion.config_id == Config.id)
        .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
        .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
        .where(Config.name == config, TestSet.name == test_set, Run.status == "complete")
    )


def _values(
    frame: pd.DataFrame,
    target: Target,
    weights: dict[str, float] | None,
    tags: dict[str, list[str]],
) -> tuple[np.ndarray, np.ndarray | None]:
    """The per-query values of the target's metric (of its segment's queries, for a segment
    target) and their weights (None when no query has one)."""
    rows = frame[frame["metric"] == target.metric]
    query_ids = rows["query_id"].astype(str)
    if target.segment is not None:
        members = {q for q, listed in tags.items() if target.segment in listed}
        inside = query_ids.isin(members)
        rows, query_ids = rows[inside.to_numpy()], query_ids[inside]
    w = None if weights is None else query_ids.map(weights).fillna(1.0).to_numpy(float)
    return rows["value"].to_numpy(np.float64), w


def _known_segment(target: Target, run_id: int, tags: dict[str, list[str]]) -> None:
    if not any(target.segment in listed for listed in tags.values()):
        raise InputError(
            f"target {target.label}: segment {target.segment!r} is a tag of no query of run "
            f"{run_id}'s test set"
        )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _nan(value: float | None) -> float:
    return math.nan if value is None else value
