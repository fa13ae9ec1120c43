"""``evalplat judge NAME ... | judge calibrate NAME ... | judge export NAME ...``: grades from
a language model, their calibration, and their review by people.

``evalplat judge NAME --testset T --unjudged-of RUN`` is short for ``evalplat judge grade NAME
...``: the group runs ``grade`` when its first word is not one of its commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from evalplat.cli.common import (
    RUN_REF,
    DbOption,
    JsonOption,
    check_output_path,
    open_store,
    print_json,
    writing,
)

if TYPE_CHECKING:
    from evalplat.judging.prompts import Prompt
    from evalplat.judging.spec import JudgeSpec
    from evalplat.store import Store


class _GradeByDefault(TyperGroup):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["grade", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_GradeByDefault,
    help="Grades from a language model, calibrated against your raters before use.",
    no_args_is_help=True,
)

ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project", "-p", help="Project file with [[judges]] (default: ./evalplat.toml)."
    ),
]
TestSetOption = Annotated[str, typer.Option("--testset", "-t", help="Test set: NAME or NAME@VER.")]


def _judge(name: str, project: Path | None, db: str | None) -> tuple[JudgeSpec, Prompt, Store]:
    from evalplat.db.engine import resolve_url
    from evalplat.judging.prompts import load_prompt
    from evalplat.judging.spec import find_judge
    from evalplat.nightly.project import load_project

    loaded = load_project(project)
    spec = find_judge(loaded.judges, name, loaded.path)
    prompt = load_prompt(spec)
    return spec, prompt, open_store(resolve_url(db, loaded.path))


@app.command("grade")
def grade(
    name: Annotated[str, typer.Argument(help="Judge name, from [[judges]] in the project file.")],
    testset: TestSetOption,
    unjudged_of: Annotated[
        list[str],
        typer.Option(
            "--unjudged-of", help=f"Judge the unjudged top-k documents of this run: {RUN_REF}."
        ),
    ],
    k: Annotated[int, typer.Option("--k", help="Look at the top k results of each query.")] = 10,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Judge at most N pairs.", show_default=False)
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count the pairs and estimate tokens; send nothing.")
    ] = False,
    project: ProjectOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Judge unjudged documents and store a new test set version with source llm:NAME.

    Answers are kept as they arrive: a stopped or killed command resumes where it stopped, and
    the same (query, document) text is never asked twice of the same judge and prompt.
    """
    from evalplat.judging.job import judge_unjudged
    from evalplat.metrics.numbers import counted

    spec, prompt, store = _judge(name, project, db)
    outcome = judge_unjudged(
        store, spec, prompt, testset, list(unjudged_of), k=k, limit=limit, dry_run=dry_run
    )
    data = outcome.to_dict()
    if json_output:
        print_json(data)
        return
    if outcome.dry_run:
        typer.echo(
            f"dry run: {data['pairs']} pairs, {data['cached']} already answered, "
            f"{data['left']} to ask, {data['no_text']} without text; "
            f"about {data['estimated_tokens']} tokens"
        )
        return
    where = (
        f"{data['testset']}@{data['version']}" if data["version"] is not None else "no new version"
    )
    typer.echo(
        f"judged {counted(data['pairs'], 'pair')} with {name}: "
        f"{counted(data['added'], 'grade')} added ({where}); "
        f"{data['cached']} from the cache, {data['asked']} asked, {data['failed']} without a "
        f"grade, {data['no_text']} without text; {counted(data['requests'], 'request')}, "
        f"{data['prompt_tokens']}+{data['completion_tokens']} tokens"
    )
    if data["stopped"]:
        typer.echo(f"stopped: {data['stopped']}; {data['left']} pairs left (run again to continue)")


@app.command("calibrate")
def calibrate(
    name: Annotated[str, typer.Argument(help="Judge name, from [[judges]] in the project file.")],
    testset: TestSetOption,
    sample: Annotated[
        int, typer.Option("--sample", help="Judge at most N human-graded pairs.")
    ] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample.")] = 0,
    comparisons: Annotated[
        int,
        typer.Option(
            "--comparisons", help="Replay the N most recent comparisons with the model's grades."
        ),
    ] = 3,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Also write the calibration page to this HTML file."),
    ] = None,
    project: ProjectOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Measure the judge against your raters: confusion matrix, weighted kappa, alpha, bias,
    and what its grades would change in recent comparisons.

    Below the floor (min_kappa, 0.4 by default) the judge is refused for gating.
    """
    from evalplat.judging.job import calibrate as run_calibration

    if report is not None:
        check_output_path(report, "--report", make_folder=True)
    spec, prompt, store = _judge(name, project, db)
    result, tally = run_calibration(
        store, spec, prompt, testset, sample=sample, seed=seed, comparisons=comparisons
    )
    data = result.to_dict()
    data["requests"] = tally.requests
    data["answer_format"] = tally.answer_format
    data["stopped"] = tally.stopped
    if report is not None:
        from evalplat.reports.calibration import render_calibration

        with writing(report, "--report"):
            render_calibration(data, report)
    if json_output:
        print_json(data)
        return
    typer.echo(
        f"judge {result.judge} ({result.model}) on {result.sampled} human-graded pairs of "
        f"{testset}; {result.failed} answers without a grade"
    )
    for item in result.sources:
        typer.echo("")
        typer.echo(
            f"against '{item.source}': {item.pairs} pairs, exact {_num(item.exact)}, "
            f"weighted kappa {_num(item.weighted_kappa)}, Krippendorff's alpha {_num(item.alpha)}"
        )
        typer.echo("  human \\ judge " + "".join(f"{g:>6}" for g in item.grades))
        for grade, row in zip(item.grades, item.confusion, strict=True):
            typer.echo(f"  {grade:>13} " + "".join(f"{n:>6}" for n in row))
        for bias in item.bias:
            typer.echo(
                f"  human {bias.grade}: judge mean {bias.judge_mean:.2f} "
                f"(bias {bias.bias:+.2f}, {bias.pairs} pairs)"
            )
    _print_what_if(data["what_if"])
    typer.echo("")
    if result.gating:
        typer.echo(f"accepted for gating: weighted kappa at or above {result.floor:.2f}")
    else:
        typer.echo(f"refused for gating: {result.refusal}")
    if tally.stopped:
        typer.echo(f"stopped early: {tally.stopped}")
    if report is not None:
        typer.echo(f"wrote {report}")


def _print_what_if(replays: list[dict[str, Any]]) -> None:
    from evalplat.metrics.numbers import counted

    if not replays:
        return
    typer.echo("")
    typer.echo("with the model's grades in place of people's on the sampled pairs:")
    for replay in replays:
        where = f"  #{replay['comparison_id']} {replay['baseline']} -> {replay['candidate']}"
        if replay["skipped"]:
            typer.echo(f"{where}: not replayed, {replay['skipped']}")
            continue
        typer.echo(f"{where} ({counted(replay['replaced'], 'grade')} replaced)")
        for m in replay["metrics"]:
            mark = "  CHANGED" if m["changed"] else ""
            typer.echo(
                f"    {m['metric']}: {m['human_delta']:+.4f} {m['human_verdict']} -> "
                f"{m['model_delta']:+.4f} {m['model_verdict']}{mark}"
            )


@app.command("export")
def export(
    name: Annotated[str, typer.Argument(help="Judge name: its grades have source llm:NAME.")],
    testset: TestSetOption,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write the CSV here (default: stdout).", show_default=False
        ),
    ] = None,
    source: Annotated[
        str, typer.Option("--source", help="The reviewers' source, written in each row.")
    ] = "review",
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """The judge's grades with its rationale, as CSV for people to confirm or correct.

    Edit the grade column and bring the file back with `evalplat testset import NAME --qrels
    FILE --add`: the grades are stored under the reviewers' source, beside the model's.
    No project file is needed: the grades and rationales are in the database.
    """
    import sys

    from evalplat.cli.common import echo_err
    from evalplat.judging.review import export_grades
    from evalplat.metrics.numbers import counted

    if out is not None:
        check_output_path(out, "--out")
    frame = export_grades(open_store(db), name, testset, source=source)
    if json_output:
        print_json(frame.to_dict(orient="records"))
        return
    if out is None:
        frame.to_csv(sys.stdout, index=False)
    else:
        with writing(out, "--out"):
            frame.to_csv(out, index=False)
    echo_err(
        f"{counted(len(frame), 'grade')} of judge {name} in {testset}"
        + (f" written to {out}" if out else "")
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
