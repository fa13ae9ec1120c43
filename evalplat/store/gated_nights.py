"""The nights a config was gated on a test set: each comparison a night stored with ``gating``
(``evalplat.nightly.config_night``), oldest first, with the runs it paired and whether the
candidate was a run of the baseline's own config version.

A pair of runs of one unchanged config version is an A/A pair: the engine, its index and the
judgments of the night are what differ, not the config, so a gate that calls it a regression
raised a false alarm. ``gates backtest`` (``evalplat.nightly.backtest``) replays these nights;
it reads them here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import aliased

from evalplat.db.evaluations import Comparison, Evaluation
from evalplat.db.models import Config, ConfigVersion, Run, TestSet, TestSetVersion

if TYPE_CHECKING:
    from evalplat.store.base import StoreBase


@dataclass(frozen=True)
class GatedNight:
    comparison_id: int
    at: datetime
    baseline_run_id: int
    candidate_run_id: int
    candidate_version: int  # the candidate's config version (its number)
    unchanged: bool  # both runs of one config version: an A/A pair


def gated_nights(store: StoreBase, config: str, test_set: str) -> list[GatedNight]:
    """Every comparison a night gated ``config`` with on ``test_set``, oldest first."""
    base_eval, cand_eval = aliased(Evaluation), aliased(Evaluation)
    base_run, cand_run = aliased(Run), aliased(Run)
    statement = (
        select(
            Comparison.id,
            Comparison.created_at,
            Comparison.options,
            base_run.id,
            base_run.config_version_id,
            cand_run.id,
            cand_run.config_version_id,
            ConfigVersion.version,
        )
        .join(base_eval, base_eval.id == Comparison.baseline_evaluation_id)
        .join(cand_eval, cand_eval.id == Comparison.candidate_evaluation_id)
        .join(base_run, base_run.id == base_eval.run_id)
        .join(cand_run, cand_run.id == cand_eval.run_id)
        .join(ConfigVersion, ConfigVersion.id == cand_run.config_version_id)
        .join(Config, Config.id == ConfigVersion.config_id)
        .join(TestSetVersion, TestSetVersion.id == cand_eval.test_set_version_id)
        .join(TestSet, TestSet.id == TestSetVersion.test_set_id)
        .where(Config.name == config, TestSet.name == test_set)
        .order_by(Comparison.id)
    )
    with store.session() as session:
        rows = session.execute(statement).all()
    nights: list[GatedNight] = []
    for comparison_id, at, options, base_id, base_version, cand_id, cand_version, number in rows:
        if not (isinstance(options, dict) and options.get("gating")):
            continue
        nights.append(
            GatedNight(
                comparison_id=comparison_id,
                at=at,
                baseline_run_id=base_id,
                candidate_run_id=cand_id,
                candidate_version=number,
                unchanged=base_version == cand_version,
            )
        )
    return nights
