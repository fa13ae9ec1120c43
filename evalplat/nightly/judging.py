"""The night's judge (``[nightly] judge = "NAME"``): model grades for tonight's new unjudged
documents, before the comparison reads them.

After a config's run completes, the judge grades the unjudged top-k documents of that run and of
the run it is compared with (the baseline). Pairs it answered on an earlier night come from its
ledger at no cost, so only new documents are paid for; one budget of requests
(``judge_budget``, 200 by default) is shared by every config of the night, and once it is spent
the remaining pairs wait for the next night. The grades go into a new test set version (source
``llm:<judge>``, ``evalplat.judging.job``); the run is scored on it, and the comparison then
scores the baseline on it too.

A judge that cannot be reached never stops a night: the step is logged with the error and the
comparison runs on the people's grades, as without a judge. Whether the grades may decide a
verdict is each gate's choice (``unjudged``), checked against the judge's calibration before
the night starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalplat.errors import EvalplatError

if TYPE_CHECKING:
    from evalplat.judging.client import RequestBudget
    from evalplat.nightly.job import LogFunction
    from evalplat.nightly.project import Project
    from evalplat.store import RunInfo, Store

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
    run: RunInfo,
    baseline_run: int | None,
    budget: RequestBudget,
    emit: LogFunction,
) -> int:
    """Grade the unjudged top-k documents of ``run`` and ``baseline_run``; the test set version
    to compare on (the run's own when nothing was added or the judge failed)."""
    from evalplat.judging.job import judge_unjudged
    from evalplat.judging.prompts import load_prompt
    from evalplat.judging.spec import find_judge
    from evalplat.running.rescoring import score_on

    if project.nightly_judge is None:
        return run.test_set_version
    version = f"{run.test_set}@{run.test_set_version}"
    runs = [str(r) for r in dict.fromkeys([run.id, baseline_run]) if r is not None]
    entry = {"step": "judge", "judge": project.nightly_judge, "testset": version, "runs": runs}
    try:
        spec = find_judge(project.judges, project.nightly_judge, project.path)
        outcome = judge_unjudged(
            store, spec, load_prompt(spec), version, runs, k=DEPTH, budget=budget
        )
    except EvalplatError as error:
        emit({**entry, "error": f"{type(error).__name__}: {error}"})
        return run.test_set_version
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
    if outcome.version is None:
        return run.test_set_version
    score_on(store, run.id, f"{run.test_set}@{outcome.version}")
    return outcome.version
