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

A judge is checked before the night writes anything, by ``nightly --dry-run`` too
(``check_night_judge``): its settings when the project file is read, its prompt compiled, its
``${VAR}`` headers expanded; and a judge the gates let decide verdicts must have passed its
calibration (``check_judges``). Any of these is an input error (exit 2, nothing written).

A judge that fails during the night never stops it: an endpoint that is down, refuses the key,
or answers nothing usable after its retries is logged on the ``judge`` line with the error, the
comparisons run on the version the night started with, as without a judge, and the night exits
3 (an operational failure, like a config whose backend is down). A spent budget (``stopped``)
and answers without a grade (``failed``) are logged on the same line without changing the exit
code: the pairs wait for the next night. Whether the grades may decide a verdict is each gate's
choice (``unjudged``).
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


def check_night_judge(project: Project) -> None:
    """Refuse, before the night writes anything, a ``[nightly] judge`` that could not be asked:
    its prompt does not compile, or a ``${VAR}`` of its key or headers is unset or expands to a
    value no header may carry. Names the project file and the judge's table."""
    from evalplat.errors import InputError
    from evalplat.judging.client import expanded_headers
    from evalplat.judging.prompts import load_prompt
    from evalplat.judging.spec import find_judge
    from evalplat.nightly.project import table_line

    if project.nightly_judge is None:
        return
    spec = find_judge(project.judges, project.nightly_judge, project.path)
    load_prompt(spec)  # a template error names the prompt file and its line
    try:
        expanded_headers(spec)
    except InputError as error:
        index = project.judges.index(spec)
        raise InputError(
            f"[[judges]] #{index + 1}: {error.problem}",
            path=project.path,
            line=table_line(project.path, "judges", index),
        ) from None


def check_judges(store: Store | None, project: Project) -> None:
    """Refuse, before anything runs, a night whose gates let in a judge not fit for gating
    (``store`` None: a database not made yet, where no judge was ever calibrated)."""
    from evalplat.comparison.model_views import gate_judge
    from evalplat.errors import InputError

    judge = gate_judge(project.gates)
    if judge is None:
        return
    refusal = (
        f"judge {judge} was never calibrated; run `evalplat judge calibrate {judge} --testset T` "
        "first"
        if store is None
        else store.judge_gating(judge)
    )
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
) -> tuple[int, bool]:
    """Grade the unjudged top-k documents of ``runs`` missing from ``test_set@on``; the version
    the night compares on (``on`` when nothing was added or the judge failed), and whether the
    judge worked (False: it failed, the night exits 3)."""
    from evalplat.judging.job import judge_unjudged
    from evalplat.judging.prompts import load_prompt
    from evalplat.judging.spec import find_judge

    if project.nightly_judge is None or not runs:
        return on, True
    version = f"{test_set}@{on}"
    listed = [str(r) for r in dict.fromkeys(runs)]
    entry = {"step": "judge", "judge": project.nightly_judge, "testset": version, "runs": listed}
    try:
        spec = find_judge(project.judges, project.nightly_judge, project.path)
        outcome = judge_unjudged(
            store, spec, load_prompt(spec), version, listed, k=DEPTH, budget=budget
        )
    except EvalplatError as error:
        emit(
            {**entry, "error": f"{type(error).__name__}: {error}", "requests_tonight": budget.sent}
        )
        return on, False
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
    return (on if outcome.version is None else outcome.version), True
