"""Baselines as rows of ids: the stored ones and the ones computed from the runs (the first
complete run of a config on a test set, where none is stored), read the same way by every
reader, and ``adopt_first_baselines``, the one writer of the computed ones (see
:mod:`evalplat.store.baselines` for the policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.db.evaluations import Baseline
from evalplat.db.models import Config, ConfigVersion, Run, TestSetVersion


@dataclass(frozen=True)
class BaselineRow:
    """A baseline as ids: stored (pinned or adopted by a night) or computed (the first
    complete run of a test set that has none stored)."""

    config_id: int
    test_set_id: int
    run_id: int
    pinned: bool
    set_at: datetime


def baseline_rows(session: Session, config_id: int | None = None) -> list[BaselineRow]:
    """Every baseline of ``config_id`` (of every config when None), stored or computed,
    ordered by config and test set; reads only."""
    stored = select(Baseline.config_id, Baseline.test_set_id, Baseline.run_id, Baseline.pinned,
                    Baseline.set_at)  # fmt: skip
    if config_id is not None:
        stored = stored.where(Baseline.config_id == config_id)
    rows = [BaselineRow(c, t, r, bool(p), s) for c, t, r, p, s in session.execute(stored)]
    rows += [BaselineRow(c, t, r, False, s) for c, t, r, s in session.execute(_firsts(config_id))]
    return sorted(rows, key=lambda row: (row.config_id, row.test_set_id))


def _firsts(config_id: int | None) -> Any:
    """(config id, test set id, run id, finished) of the first complete run of each config on
    each test set where no baseline is stored: the baselines nobody pinned."""
    first = (
        select(
            ConfigVersion.config_id.label("config_id"),
            TestSetVersion.test_set_id.label("test_set_id"),
            func.min(Run.id).label("run_id"),
        )
        .select_from(TestSetVersion)
        .join(Run, Run.test_set_version_id == TestSetVersion.id)
        .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
        .where(Run.status == "complete")
        .group_by(ConfigVersion.config_id, TestSetVersion.test_set_id)
    )
    if config_id is not None:
        first = first.where(ConfigVersion.config_id == config_id)
    firsts = first.subquery()
    stored = select(Baseline.id).where(
        Baseline.config_id == firsts.c.config_id, Baseline.test_set_id == firsts.c.test_set_id
    )
    return (
        select(firsts.c.config_id, firsts.c.test_set_id, firsts.c.run_id)
        .add_columns(func.coalesce(Run.finished_at, Run.started_at))
        .join(Run, Run.id == firsts.c.run_id)
        .where(~stored.exists())
    )


def adopt_first_baselines(session: Session, config: str) -> None:
    """Store, unpinned, the first complete run of ``config`` on every test set that has no
    baseline for it yet, as ``baseline_rows`` computes it. Unknown config names are left to
    the caller to report."""
    config_id = session.scalar(select(Config.id).where(Config.name == config))
    if config_id is None:
        return
    firsts = session.execute(_firsts(config_id)).all()
    for _, test_set_id, run_id, finished in firsts:
        session.add(
            Baseline(
                config_id=config_id,
                test_set_id=test_set_id,
                run_id=run_id,
                pinned=False,
                set_at=finished,
            )
        )
    if firsts:
        session.flush()
