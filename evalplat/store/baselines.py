"""Baselines in the store: the run each config's candidates are compared with, per test set.

One baseline per (config, test set). ``set_baseline`` pins one. Without a pinned one, the
config's first complete run on the test set is adopted (and stored, unpinned) the first time a
baseline of that config is asked for: by ``baseline``/``baselines``/``history`` or a
``CONFIG@baseline`` reference given to ``compare_runs``. Adopting on read rather than when a run
finishes gives the same run (the first complete one) and keeps the run life cycle free of
baseline policy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.db.models import Baseline, Config, ConfigVersion, Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.run_rows import resolve_run


@dataclass(frozen=True)
class BaselineInfo:
    """The baseline run of a config on a test set; ``pinned`` False when it was automatic."""

    config: str
    test_set: str
    run_id: int
    pinned: bool
    set_at: datetime

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["set_at"] = self.set_at.isoformat()
        return data


class BaselinesMixin(StoreBase):
    """Baselines: pin one, list them, find one (adopting first runs on the way)."""

    def set_baseline(self, config: str, run_ref: str | int) -> BaselineInfo:
        """Pin ``run_ref`` as the baseline of ``config`` on the run's test set."""
        with self.session() as session:
            run = session.get(Run, resolve_run(session, run_ref))
            if run is None:  # resolve_run raised already; keeps the type checker informed
                raise NotFoundError(f"no run {run_ref}")
            config_id, test_set_id = _run_keys(session, run)
            config_row = session.scalar(select(Config).where(Config.name == config))
            if config_row is None:
                raise NotFoundError(f"no config named '{config}'")
            if config_row.id != config_id:
                text = str(run_ref).strip()
                hint = (
                    f"; {text} is a run id: version {text} of '{config}' is written "
                    f"{config}@{text} (its latest complete run)"
                    if text.isdigit()
                    else ""
                )
                raise InputError(f"run {run.id} is not a run of config '{config}'{hint}")
            if run.status != "complete":
                raise InputError(
                    f"run {run.id} is {run.status}; only a complete run can be a baseline"
                )
            row = session.scalar(
                select(Baseline).where(
                    Baseline.config_id == config_id, Baseline.test_set_id == test_set_id
                )
            )
            if row is None:
                row = Baseline(config_id=config_id, test_set_id=test_set_id, run_id=run.id)
                session.add(row)
            row.run_id, row.pinned, row.set_at = run.id, True, utcnow()
            session.flush()
            return _baseline_info(session, row)

    def baselines(self, config: str | None = None) -> list[BaselineInfo]:
        """Baselines of one config (every test set) or of all configs, by config then test set."""
        with self.session() as session:
            query = select(Baseline).join(Config, Baseline.config_id == Config.id)
            if config is not None:
                if session.scalar(select(Config.id).where(Config.name == config)) is None:
                    raise NotFoundError(f"no config named '{config}'")
                query = query.where(Config.name == config)
            for name in [config] if config else session.scalars(select(Config.name)).all():
                adopt_first_baselines(session, name)
            rows = session.scalars(query.order_by(Config.name, Baseline.test_set_id)).all()
            return [_baseline_info(session, row) for row in rows]

    def baseline(self, config: str, test_set: str) -> BaselineInfo | None:
        """The baseline of ``config`` on ``test_set``, or None."""
        for info in self.baselines(config):
            if info.test_set == test_set:
                return info
        return None


def _run_keys(session: Session, run: Run) -> tuple[int, int]:
    """(config id, test set id) of a run."""
    row = session.execute(
        select(ConfigVersion.config_id, TestSetVersion.test_set_id)
        .join(Run, Run.config_version_id == ConfigVersion.id)
        .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
        .where(Run.id == run.id)
    ).one()
    return int(row[0]), int(row[1])


def adopt_first_baselines(session: Session, config: str) -> None:
    """Store, unpinned, the first complete run of ``config`` on every test set that has no
    baseline for it yet. Unknown config names are left to the caller to report."""
    config_id = session.scalar(select(Config.id).where(Config.name == config))
    if config_id is None:
        return
    has_baseline = select(Baseline.test_set_id).where(Baseline.config_id == config_id)
    firsts = session.execute(
        select(TestSetVersion.test_set_id, func.min(Run.id))
        .join(Run, Run.test_set_version_id == TestSetVersion.id)
        .join(ConfigVersion, Run.config_version_id == ConfigVersion.id)
        .where(
            ConfigVersion.config_id == config_id,
            Run.status == "complete",
            TestSetVersion.test_set_id.not_in(has_baseline),
        )
        .group_by(TestSetVersion.test_set_id)
    ).all()
    for test_set_id, run_id in firsts:
        session.add(
            Baseline(
                config_id=config_id,
                test_set_id=test_set_id,
                run_id=run_id,
                pinned=False,
                set_at=utcnow(),
            )
        )
    if firsts:
        session.flush()


def _baseline_info(session: Session, row: Baseline) -> BaselineInfo:
    config = session.scalar(select(Config.name).where(Config.id == row.config_id))
    test_set = session.scalar(select(TestSet.name).where(TestSet.id == row.test_set_id))
    return BaselineInfo(
        config=str(config),
        test_set=str(test_set),
        run_id=row.run_id,
        pinned=row.pinned,
        set_at=row.set_at,
    )
