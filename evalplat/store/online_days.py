"""The judged days of an online A/B gate: per UTC day, whether the config's arms regressed.

A night compares each arm of the day with the control arm and stores that comparison, marked
``gating`` (``evalplat.nightly.online``). Read back per (config, metric): for each day on which
one of the config's versions was an arm, the latest gating comparison of each of its runs; the
day is **judged** when one of them judged the metric (its test is not ``insufficient``), and
**regressed** when one of them gated it as a regression, as the night decides one verdict per
(config, metric) for all the config's arms of the day. ``evalplat.nightly.day_rule`` reads the
days, oldest first.
"""

from __future__ import annotations

from sqlalchemy import select

from evalplat.db.evaluations import Comparison, ComparisonMetric, Evaluation
from evalplat.db.models import Config, ConfigVersion, Run
from evalplat.store.base import StoreBase
from evalplat.store.events import ONLINE_TRIGGER


class OnlineDaysMixin(StoreBase):
    def online_gate_days(self, config: str, metric: str) -> list[tuple[str, bool]]:
        """``(day, regressed)`` per judged day of ``config``'s A/B arms on ``metric``, oldest
        first (module doc)."""
        with self.session() as session:
            runs = {
                run.id: run.started_at.date().isoformat()
                for run in session.scalars(
                    select(Run)
                    .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
                    .join(Config, ConfigVersion.config_id == Config.id)
                    .where(Config.name == config, Run.trigger == ONLINE_TRIGGER)
                )
                if ((run.options or {}).get("online") or {}).get("window") == "day"
            }
            if not runs:
                return []
            rows = session.execute(
                select(Comparison.id, Comparison.options, Evaluation.run_id, ComparisonMetric.test,
                       ComparisonMetric.gated, ComparisonMetric.verdict)
                .join(Evaluation, Comparison.candidate_evaluation_id == Evaluation.id)
                .join(ComparisonMetric, ComparisonMetric.comparison_id == Comparison.id)
                .where(Evaluation.run_id.in_(sorted(runs)), ComparisonMetric.metric == metric)
                .order_by(Comparison.id)
            ).all()  # fmt: skip
        latest: dict[int, tuple[str, bool, str]] = {}  # run: its latest gating comparison
        for _, options, run_id, test, gated, verdict in rows:
            if (options or {}).get("gating"):
                latest[run_id] = (test, bool(gated), verdict)
        days: dict[str, bool] = {}
        for run_id, (test, gated, verdict) in latest.items():
            if test == "insufficient":
                continue
            day = runs[run_id]
            days[day] = days.get(day, False) or (gated and verdict == "regression")
        return sorted(days.items())
