"""The change points of every config's history on a test set, read once for every surface.

``evalplat history`` (its table and ``--json``) and the report site's history pages all take
their change points from ``Store.change_points``: the series are each config's nightly figures
as history shows them (``evalplat.store.run_figures``, ``searched``), and the detection and the
labelling are ``evalplat.comparison.change_points``'s. The labelling needs every config of the
test set at once (did they all step that night?), so the unit of work is a test set.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import select

from evalplat.comparison.change_points import (
    ChangePoint,
    Night,
    VersionFacts,
    label_change_points,
)
from evalplat.db.models import Config, ConfigVersion, Run, TestSet, TestSetVersion
from evalplat.store.base import StoreBase
from evalplat.store.run_figures import run_figures

# config -> metric -> its change points, oldest first
ChangePoints = dict[str, dict[str, list[ChangePoint]]]


class ChangePointsMixin(StoreBase):
    """Change points of the history series of a test set's configs."""

    def change_points(self, test_set: str, metrics: Sequence[str] | None = None) -> ChangePoints:
        """For every config with a finished run on ``test_set``, the change points of each of
        ``metrics`` (None: every metric of any of its runs) over its nights, labelled as the
        test set's or the config's (``evalplat.comparison.change_points``). A config or metric
        without any is absent or empty."""
        with self.session() as session:
            rows = session.execute(
                select(Run.id, Run.started_at, Config.name, ConfigVersion.version)
                .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
                .join(Config, ConfigVersion.config_id == Config.id)
                .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
                .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
                .where(TestSet.name == test_set, Run.status != "running")
                .order_by(Run.started_at, Run.id)
            ).all()
            figures = run_figures(session, [row[0] for row in rows], "searched")
            versions = {
                int(version): VersionFacts(corpus, int(queries), int(judgments))
                for version, corpus, queries, judgments in session.execute(
                    select(TestSetVersion.version, TestSetVersion.corpus_id,
                           TestSetVersion.queries_count, TestSetVersion.judgments_count)
                    .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
                    .where(TestSet.name == test_set)
                )
            }  # fmt: skip
        found: ChangePoints = {}
        if metrics is None:
            metrics = sorted({name for figure in figures.values() for name in figure.means})
        for metric in dict.fromkeys(metrics):
            series: dict[str, list[Night]] = {}
            for run_id, started_at, config, config_version in rows:
                figure = figures.get(run_id)
                value = None if figure is None else figure.means.get(metric)
                if figure is None or value is None or not math.isfinite(value):
                    continue
                night = _utc(started_at).date()
                series.setdefault(config, []).append(
                    Night(run_id, night, value, config_version, figure.judgment_version)
                )
            for config, points in label_change_points(metric, series, versions).items():
                found.setdefault(config, {})[metric] = points
        return found


def _utc(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything evalplat writes is UTC
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
