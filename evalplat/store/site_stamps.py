"""What identifies the content of the report site's pages, read in a few small queries.

A page of the site shows runs, evaluations and comparisons; each is stored once and changes
only in known ways: a run gets a new evaluation (``rescore``), loses its ranked results
(retention), or is finished or resumed (its row); a comparison is never updated; a target check
replaces the run's earlier one (``checked_at``); a pinned baseline moves (``set_at``). The
stamps below name exactly those: ids and stored times, never the scores or results themselves.
``evalplat.reports.page_keys`` digests them into a page's key, so a page whose stamps did not
change is neither gathered nor rendered again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Select, func, select
from sqlalchemy.orm import aliased

from evalplat.db.evaluations import Baseline, Comparison, Evaluation
from evalplat.db.models import Config, ConfigVersion, Run, TestSet, TestSetVersion
from evalplat.db.operations import RunTarget
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.evaluation_rows import latest_evaluations
from evalplat.store.query_health import FINISHED


@dataclass(frozen=True)
class ComparisonStamp:
    """A stored comparison's two runs and when it was stored (it is never updated)."""

    baseline_run_id: int
    candidate_run_id: int
    created_at: datetime


@dataclass(frozen=True)
class SiteStamps:
    evaluations: dict[int, int]  # run id → its latest evaluation id
    comparisons: dict[int, ComparisonStamp]
    # (config id, test set id, run id, pinned, set_at) of every baseline, in id order
    baselines: tuple[tuple[int, int, int, bool, datetime], ...]


@dataclass(frozen=True)
class HealthWindowRun:
    """A finished run of a test set in the query-health window, as the health read sees it."""

    config: str
    run_id: int
    status: str  # a partial run resumed is complete, with more records
    finished_at: datetime | None
    results_pruned_at: datetime | None
    evaluation_id: int | None
    targets_checked_at: datetime | None  # the newest target check kept with the run


class SiteStampsMixin(StoreBase):
    """``Store.site_stamps`` and ``Store.health_window``: the report site's page keys."""

    def site_stamps(self) -> SiteStamps:
        """Every run's latest evaluation, every comparison's runs, every baseline."""
        compared = _compared()
        pinned = select(
            Baseline.config_id, Baseline.test_set_id, Baseline.run_id, Baseline.pinned
        ).add_columns(Baseline.set_at)
        with self.session() as session:
            latest = select(Evaluation.run_id, func.max(Evaluation.id)).group_by(Evaluation.run_id)
            evaluations = {run: evaluation for run, evaluation in session.execute(latest)}
            comparisons = {
                comparison_id: ComparisonStamp(baseline, candidate, created_at)
                for comparison_id, baseline, candidate, created_at in session.execute(compared)
            }
            baselines = tuple(
                (c, t, r, bool(p), s)
                for c, t, r, p, s in session.execute(pinned.order_by(Baseline.id))
            )
        return SiteStamps(evaluations, comparisons, baselines)

    def comparison_stamps(self, comparison_id: int) -> SiteStamps:
        """``site_stamps`` of one comparison and its two runs only (no baselines): what its page
        is keyed by, read without reading every run's and comparison's."""
        with self.session() as session:
            found = session.execute(_compared().where(Comparison.id == comparison_id)).all()
            comparisons = {c: ComparisonStamp(b, r, at) for c, b, r, at in found}
            runs = [run for stamp in comparisons.values()
                    for run in (stamp.baseline_run_id, stamp.candidate_run_id)]  # fmt: skip
            evaluations = latest_evaluations(session, runs)
        return SiteStamps(evaluations, comparisons, ())

    def health_window(self, test_set: str, since: timedelta) -> tuple[HealthWindowRun, ...]:
        """The finished runs of ``test_set`` started in the last ``since``, oldest first: the
        runs ``query_health_inputs`` reads for any config of the test set."""
        start = utcnow() - since
        newest_check = (
            select(RunTarget.run_id, func.max(RunTarget.checked_at).label("checked"))
            .group_by(RunTarget.run_id)
            .subquery()
        )
        latest = (
            select(Evaluation.run_id, func.max(Evaluation.id).label("evaluation"))
            .group_by(Evaluation.run_id)
            .subquery()
        )
        with self.session() as session:
            rows = session.execute(
                select(Config.name, Run.id, Run.status, Run.finished_at, Run.results_pruned_at,
                       latest.c.evaluation, newest_check.c.checked)
                .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
                .join(Config, ConfigVersion.config_id == Config.id)
                .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
                .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
                .outerjoin(latest, latest.c.run_id == Run.id)
                .outerjoin(newest_check, newest_check.c.run_id == Run.id)
                .where(TestSet.name == test_set, Run.status.in_(FINISHED),
                       Run.started_at >= start)
                .order_by(Run.started_at, Run.id)
            ).all()  # fmt: skip
        return tuple(HealthWindowRun(*row) for row in rows)


def _compared() -> Select[int, int, int, datetime]:
    """Each comparison's id, its two runs and when it was stored."""
    baseline_side, candidate_side = aliased(Evaluation), aliased(Evaluation)
    return (
        select(Comparison.id, baseline_side.run_id, candidate_side.run_id)
        .add_columns(Comparison.created_at)
        .join(baseline_side, baseline_side.id == Comparison.baseline_evaluation_id)
        .join(candidate_side, candidate_side.id == Comparison.candidate_evaluation_id)
    )
