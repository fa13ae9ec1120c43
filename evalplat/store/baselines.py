"""Baselines in the store: the run each config's candidates are compared with, per test set.

One baseline per (config, test set). ``set_baseline`` pins one. Without a pinned one, the
config's first complete run on the test set is its baseline (unpinned, set when that run
finished): reading commands (``baseline show``, ``history``, a ``CONFIG@baseline`` reference)
compute it without writing, so they work on a read-only database and leave it as it was; a
night stores it (``adopt_baseline``) before comparing with it, so that later nights keep the
same one and retention keeps its results. Computed and stored, it is the same row.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalplat.db.evaluations import Baseline
from evalplat.db.models import Config, ConfigVersion, Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError
from evalplat.store.base import StoreBase, utcnow
from evalplat.store.baseline_rows import adopt_first_baselines, baseline_rows
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
        """Baselines of one config (every test set) or of all configs, by config then test set;
        nothing is written (module doc)."""
        with self.session() as session:
            config_id = None
            if config is not None:
                config_id = session.scalar(select(Config.id).where(Config.name == config))
                if config_id is None:
                    raise NotFoundError(f"no config named '{config}'")
            names = {c: n for c, n in session.execute(select(Config.id, Config.name))}
            sets = {t: n for t, n in session.execute(select(TestSet.id, TestSet.name))}
            rows = sorted(
                baseline_rows(session, config_id),
                key=lambda row: (names[row.config_id], row.test_set_id),
            )
            return [
                BaselineInfo(names[row.config_id], sets[row.test_set_id], row.run_id,
                             row.pinned, row.set_at)
                for row in rows
            ]  # fmt: skip

    def baseline(self, config: str, test_set: str) -> BaselineInfo | None:
        """The baseline of ``config`` on ``test_set``, or None."""
        for info in self.baselines(config):
            if info.test_set == test_set:
                return info
        return None

    def adopt_baseline(self, config: str, test_set: str) -> BaselineInfo | None:
        """``baseline``, storing the first complete run of ``config`` as its baseline on every
        test set that has none pinned or stored: what a night compares with (module doc)."""
        with self.session(write=True) as session:
            adopt_first_baselines(session, config)
        return self.baseline(config, test_set)


def _run_keys(session: Session, run: Run) -> tuple[int, int]:
    """(config id, test set id) of a run."""
    row = session.execute(
        select(ConfigVersion.config_id, TestSetVersion.test_set_id)
        .join(Run, Run.config_version_id == ConfigVersion.id)
        .join(TestSetVersion, Run.test_set_version_id == TestSetVersion.id)
        .where(Run.id == run.id)
    ).one()
    return int(row[0]), int(row[1])


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
