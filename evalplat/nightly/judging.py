"""The night's judge (``[nightly] judge = "NAME"``): model grades for tonight's new unjudged
documents, before the comparisons read them.

Once every config has run, the judge grades, once per test set, the unjudged top-k documents of
all of tonight's completed runs on it and of the runs they are compared with (their baselines).
Pairs it answered on an earlier night come from its ledger at no cost, so only new documents are
paid for; one budget of requests (``judge_budget``, 200 by default) is shared by the whole night,
and once it is spent the remaining pairs wait for the next night. The grades go into one new
test set version made from the night's version (source ``llm:<judge>``,
``evalplat.judging.job``), so grades accumulate night after night along the project file's line
of versions (``evalplat.nightly.judgments``); every config of the night is then scored and
compared on that one version.

A judge that cannot be reached never stops a night: the step is logged with the error and the
comparisons run on the version the night started with, as without a judge. Whether the grades
may decide a verdict is each gate's choice (``unjudged``), checked against the judge's
calibration before the night starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalplat.errors import EvalplatError

if TYPE_CHECKING:
    from evalplat.judging.client import RequestBudget
    from evalplat.nightly.job import LogFunction
    from evalplat.nightly.project import Project
    from evalplat.store import Store

# The depth judged: the guard's default (a metric's own cutoff when it has one is at most this
# for the usual @10 gates).
DEPTH = 10


def check_judges(store: Store, project: Project) -> None:
    """Refuse, before anything runs, a night whose gates let in a judge not fit for gating."""
    from evalplat.comparison.model_views import gate_judge
    from evalplat.errors import InputError

    judge = gate_judge(project.gates)
    refusal = None if judge is None else store.judge_gating(judge)
    if refusal is not None:
        raise InputError(f"[[gates]] let judge {judge} decide verdicts: {refusal}",
                         path=project.path)  # fmt: skip


def judge_night(
    store: Store,
    project: Project,
    test_set: str,
    on: int,
    runs: list[int],
    budget: RequestBudget,
    emit: LogFunction,
) -> int:
    """Grade the unjudged top-k documents of ``runs`` missing from ``test_set@on``; the version
    the night compares on (``on`` when nothing was added or the judge failed)."""
    from evalplat.judging.job import judge_unjudged
    from evalplat.judging.prompts import load_prompt
    from evalplat.judging.spec import find_judge

    if project.nightly_judge is None or not runs:
        return on
    version = f"{test_set}@{on}"
    listed = [str(r) for r in dict.fromkeys(runs)]
    entry = {"step": "judge", "judge": project.nightly_judge, "testset": version, "runs": listed}
    try:
        spec = find_judge(project.judges, project.nightly_judge, project.path)
        outcome = judge_unjudged(
            store, spec, load_prompt(spec), version, listed, k=DEPTH, budget=budget
        )
    except EvalplatError as error:
        emit({**entry, "error": f"{type(error).__name__}: {error}"})
        return on
    data = outcome.to_dict()
    emit(
        {
            **entry,
            **{key: data[key] for key in ("pairs", "added", "cached", "asked", "failed")},
            "requests_tonight": budget.sent,
            "budget_left": budget.limit - budget.sent,
            "version": outcome.version,
            "stopped": data["stopped"],
        }
    )
    return on if outcome.version is None else outcome.version
