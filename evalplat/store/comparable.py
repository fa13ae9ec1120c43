"""Which evaluations two stored runs are compared on, and the refusals before a comparison: a
run still running or not complete, a run without scores, two runs scored on different test
set versions (``evalplat.store.comparisons``, module doc).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalplat.comparison.verdicts import CompareOptions, Gate
from evalplat.db.evaluations import Evaluation
from evalplat.db.models import Run, TestSet, TestSetVersion
from evalplat.errors import InputError, NotFoundError, OperationalError
from evalplat.store.evaluation_rows import evaluation_on

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.metrics.registry import Metric

__all__ = ["check_comparable", "check_same_version", "matching_evaluations", "version_name"]


def check_comparable(
    session: Session, run: Run, evaluation_id: int | None, options: CompareOptions
) -> None:
    if run.status == "running":
        raise OperationalError(f"run {run.id} is still running; compare it when it finishes")
    if run.status != "complete" and not options.allow_partial:
        raise OperationalError(
            f"run {run.id} is {run.status} ({run.queries_failed} failed queries): a "
            f"{run.status} run is not compared as if complete; finish it with "
            f"`evalplat run --resume {run.id}` or pass --allow-partial"
        )
    if evaluation_id is None:
        raise OperationalError(f"run {run.id} has no scores; score it with `evalplat rescore`")


def matching_evaluations(
    session: Session, ids: list[int], latest: dict[int, int]
) -> tuple[int, int]:
    """Evaluations of both runs against one test set version, when they have one (module doc);
    otherwise the two latest, which ``check_same_version`` refuses."""
    eval_a, eval_b = latest[ids[0]], latest[ids[1]]
    for run_id, other, pick_first in ((ids[0], eval_b, True), (ids[1], eval_a, False)):
        evaluation = session.get(Evaluation, other)
        if evaluation is None:
            continue
        match = evaluation_on(session, run_id, evaluation.test_set_version_id)
        if match is not None:
            return (match, eval_b) if pick_first else (eval_a, match)
    return eval_a, eval_b


def check_same_version(session: Session, ids: list[int], eval_a: int, eval_b: int) -> None:
    version_a = session.get(Evaluation, eval_a)
    version_b = session.get(Evaluation, eval_b)
    if version_a is None or version_b is None:
        raise NotFoundError("evaluation vanished while comparing")
    if version_a.test_set_version_id != version_b.test_set_version_id:
        name_a, name_b = version_name(session, eval_a), version_name(session, eval_b)
        raise InputError(
            f"run {ids[0]} was scored against {name_a} and run {ids[1]} against {name_b}: "
            f"comparing different judgments is meaningless; rescore one on the other's "
            f"version first, e.g. `evalplat rescore {ids[0]} --testset {name_b}`"
        )


def version_name(session: Session, evaluation_id: int) -> str:
    row = session.execute(
        select(TestSet.name, TestSetVersion.version)
        .join(TestSetVersion, TestSetVersion.test_set_id == TestSet.id)
        .join(Evaluation, Evaluation.test_set_version_id == TestSetVersion.id)
        .where(Evaluation.id == evaluation_id)
    ).one()
    return f"{row[0]}@{row[1]}"


def check_scored(
    scores: tuple[pd.DataFrame, pd.DataFrame],
    ids: list[int],
    version: str,
    metrics: Sequence[str | Metric] | None,
    gates: Sequence[Gate] | None,
) -> None:
    """Refuse a metric (asked for, or gated) that a run was not scored with, naming the command
    that scores it: the run's metrics and the missing ones, on the version compared (a
    rescore's metrics replace the shown ones, so the run's own are listed too)."""
    from evalplat.metrics.names import parse

    wanted = [str(parse(str(m))) for m in metrics or ()]
    wanted += [str(parse(g.metric)) for g in gates or ()]
    for side, frame, run_id in zip(("baseline", "candidate"), scores, ids, strict=True):
        # unique() keeps the order of first appearance, as walking the rows would
        scored = [str(name) for name in frame["metric"].unique()]
        missing = [name for name in dict.fromkeys(wanted) if name not in scored]
        if missing:
            listed = " ".join(f"-m '{name}'" for name in [*scored, *missing])
            raise InputError(
                f"the {side} run (run {run_id}) has no scores for {', '.join(missing)} on "
                f"{version}: score it with `evalplat rescore {run_id} --testset {version} "
                f"{listed}`"
            )
