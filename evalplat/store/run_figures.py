"""A run's figures: its means on one judgment version, read the one way every surface reads them.

A run is scored once per test set version it is scored against (the night's version, then each
``rescore``), on **people's grades** alone (``evalplat.testsets.raters.people_grades``): a
judge's grades added to the version (``llm:<judge>``) move no stored figure; they count only in
a comparison whose gate lets them in (``evalplat.comparison.model_views``), which says so.

The index, ``history``, ``runs show``, ``runs list``, the comparison page and ``compare --json``
all take their figures from here or from the comparison's own rows, which are the same stored
scores (``evalplat.store.grade_views``), and each names what it read: ``scored on topics@3,
people's grades`` (``RunFigures.scored_on``). Which version a surface reads is one of two:

- ``searched``: the version the run was searched with, as recorded that night (history and
  the index: a later ``rescore`` does not move a night's point); a run without a score on it
  (imported scores) reads its latest;
- ``latest``: the newest version it was scored against (``runs list``, ``runs show``).

An evaluation stored before figures were people's alone says so (``every source's grades``)
until ``rescore`` scores it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalplat.db.evaluations import Evaluation, MetricMean
from evalplat.db.models import Run, TestSet, TestSetVersion
from evalplat.testsets.raters import grades_text

# ``evaluation.options["grades"]`` of an evaluation scored on people's grades alone
PEOPLE = "people"

Which = Literal["searched", "latest"]


@dataclass(frozen=True)
class RunFigures:
    """One run's means on one test set version (``test_set@judgment_version``) and the grades
    they were scored on; ``grades`` None for figures that read no grades (online logs)."""

    run_id: int
    evaluation_id: int
    test_set: str
    judgment_version: int
    grades: str | None
    means: dict[str, float] = field(default_factory=dict)

    @property
    def version_name(self) -> str:
        return f"{self.test_set}@{self.judgment_version}"

    @property
    def grades_text(self) -> str | None:
        """``people's grades`` (``evalplat.testsets.raters.grades_text``); None for figures
        that read no grades."""
        return None if self.grades is None else grades_text(self.grades)

    @property
    def scored_on(self) -> str:
        """``topics@3, people's grades``; ``topics@3`` for figures that read no grades."""
        if self.grades_text is None:
            return self.version_name
        return f"{self.version_name}, {self.grades_text}"


def on_people_grades(evaluation: Evaluation | None) -> bool:
    """Whether ``evaluation``'s scores are on people's grades alone (every evaluation scored
    since figures are; an online one reads no grades)."""
    options = evaluation.options if evaluation is not None else None
    return isinstance(options, dict) and options.get("grades") == PEOPLE


def run_figures(session: Session, run_ids: Sequence[int], which: Which) -> dict[int, RunFigures]:
    """The figures of each of ``run_ids`` that was scored, on the version ``which`` names
    (module doc); runs never scored are left out."""
    if not run_ids:
        return {}
    chosen = _chosen(session, list(dict.fromkeys(run_ids)), which)
    if not chosen:
        return {}
    rows = session.execute(
        select(Evaluation.id, Evaluation.run_id, Evaluation.options)
        .add_columns(TestSet.name, TestSetVersion.version)
        .join(TestSetVersion, Evaluation.test_set_version_id == TestSetVersion.id)
        .join(TestSet, TestSetVersion.test_set_id == TestSet.id)
        .where(Evaluation.id.in_(list(chosen.values())))
    ).all()
    means: dict[int, dict[str, float]] = {}
    for evaluation_id, metric, value in session.execute(
        select(MetricMean.evaluation_id, MetricMean.metric, MetricMean.value).where(
            MetricMean.evaluation_id.in_(list(chosen.values()))
        )
    ):
        means.setdefault(evaluation_id, {})[str(metric)] = float(value)
    figures = {}
    for evaluation_id, run_id, options, test_set, version in rows:
        figures[run_id] = RunFigures(
            run_id, evaluation_id, test_set, version, _grades(options), means.get(evaluation_id, {})
        )
    return figures


def _chosen(session: Session, run_ids: list[int], which: Which) -> dict[int, int]:
    """Run id -> the id of the evaluation its figures come from."""
    chosen: dict[int, int] = {}
    for start in range(0, len(run_ids), 500):  # under any driver's cap on parameters
        part = run_ids[start : start + 500]
        latest = select(Evaluation.run_id, func.max(Evaluation.id)).where(
            Evaluation.run_id.in_(part)
        )
        chosen.update((r, e) for r, e in session.execute(latest.group_by(Evaluation.run_id)))
        if which == "searched":
            own = latest.join(Run, Run.id == Evaluation.run_id).where(
                Evaluation.test_set_version_id == Run.test_set_version_id
            )
            chosen.update((r, e) for r, e in session.execute(own.group_by(Evaluation.run_id)))
    return chosen


def _grades(options: object) -> str | None:
    if not isinstance(options, dict):
        return "all"
    if "online" in options or "preference" in options:
        return None  # scored from logs: no grades read
    return PEOPLE if options.get("grades") == PEOPLE else "all"
