"""``evalplat compare | unjudged`` and ``evalplat baseline set | show`` (``history`` is
its own module, ``evalplat.cli.history``).

``compare`` gates the relevance metrics unless ``--gate`` names the gated ones (latency on both
configs timed together: ``evalplat.running.paired_timing``), and always says what it gated,
how, and why each drop was or was not called a regression (``evalplat.comparison.explain``).
``compare`` exits 0 unless ``--fail-on-regression`` is given and a gated metric, or a gated
(metric, segment) pair, regressed (exit 1); with ``--strict`` as well, one that needs
judgments also exits 1; with ``--fail-on-target``, a candidate that misses a ``--target``
exits 1.
Refusals (different test set versions: exit 2; incomplete runs: exit 3) come from the store as
errors and print one line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import (
    RUN_REF,
    DbOption,
    JsonOption,
    check_output_path,
    echo_err,
    open_store,
    print_json,
    run_ref_note,
    writing,
)
from evalplat.cli.compare_gates import (
    CompareProjectOption,
    GateOptions,
    chosen_gates,
    project_file,
)
from evalplat.cli.compare_output import print_comparison, write_junit
from evalplat.cli.target_views import FailOnTargetOption, TargetOption

if TYPE_CHECKING:
    from evalplat.comparison.verdicts import ComparisonResult
    from evalplat.store import Store

baseline_app = typer.Typer(
    help="Baselines: the pinned run each config is compared with.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
    app.command("unjudged")(unjudged_command)
    app.add_typer(baseline_app, name="baseline")


def compare_command(
    baseline: Annotated[str, typer.Argument(help=f"Baseline run: {RUN_REF}.")],
    candidate: Annotated[str, typer.Argument(help=f"Candidate run: {RUN_REF}.")],
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to compare, repeatable "
            "(default: every metric both runs were scored with).",
            show_default=False,
        ),
    ] = None,
    gate: Annotated[
        list[str] | None,
        typer.Option(
            "--gate",
            "-g",
            help="Metric to gate (it can regress and fail --fail-on-regression), repeatable "
            "(default: the relevance metrics compared; latency, zero results, coverage and "
            "diversity are shown, not gated, unless named here: latency then on both configs "
            "searched again together, query by query).",
            show_default=False,
        ),
    ] = None,
    test: Annotated[
        str, typer.Option("--test", help="Paired test: randomization, t-test or wilcoxon.")
    ] = "randomization",
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha", help="Significance level (after Holm's correction over the gated metrics)."
        ),
    ] = 0.05,
    max_drop: Annotated[
        float | None,
        typer.Option(
            "--max-drop", help="Absolute drop a regression must exceed.", show_default=False
        ),
    ] = None,
    max_relative_drop: Annotated[
        float | None,
        typer.Option(
            "--max-relative-drop",
            help="Relative drop (0.02 = 2%) a regression must exceed.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the permutations and bootstrap.")
    ] = 0,
    allow_partial: Annotated[
        bool, typer.Option("--allow-partial", help="Compare partial, failed or interrupted runs.")
    ] = False,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write an HTML report here.", show_default=False)
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit", help="Write JUnit XML here: a testcase per gated metric.", show_default=False
        ),
    ] = None,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when a gated metric regressed.")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="With --fail-on-regression: also exit 1 when a gated metric needs judgments.",
        ),
    ] = False,
    unjudged: Annotated[
        str,
        typer.Option(
            "--unjudged",
            help="How unjudged documents weigh on the gates: bound (decide with every unjudged "
            "top-k document relevant too), needs_judgments (a drop while Judged@k fell needs "
            "judgments), ignore, or let a judge's grades in: judge (they settle what the "
            "people's grades leave open) or grade (they count as ordinary grades); see --judge.",
        ),
    ] = "bound",
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="The judge whose grades (source llm:NAME) --unjudged judge or grade lets in; "
            "it must have passed `evalplat judge calibrate`.",
            show_default=False,
        ),
    ] = None,
    segment: Annotated[
        list[str] | None,
        typer.Option(
            "--segment",
            help="Also gate each metric on the queries tagged with this tag, repeatable "
            "(same thresholds and test).",
            show_default=False,
        ),
    ] = None,
    min_segment_queries: Annotated[
        int,
        typer.Option(
            "--min-segment-queries", help="Segments with fewer queries are shown, never gated."
        ),
    ] = 20,
    target: TargetOption = None,
    fail_on_target: FailOnTargetOption = False,
    project: CompareProjectOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Compare a candidate run with a baseline run: deltas, CIs, p-values and verdicts.

    Gates the relevance metrics (or those named with --gate) and prints which were gated, with
    which threshold, test and correction, and why a drop was not called a regression."""
    from evalplat.cli import target_views
    from evalplat.comparison.results import MODEL_MODES
    from evalplat.comparison.verdicts import UNJUDGED_MODES, CompareOptions
    from evalplat.errors import InputError
    from evalplat.inputs.validation import SEED_MAX
    from evalplat.running.paired_timing import time_gated_pairs

    if unjudged not in UNJUDGED_MODES:
        raise InputError(f"--unjudged must be one of {', '.join(UNJUDGED_MODES)}, got {unjudged!r}")
    if unjudged in MODEL_MODES and not judge:
        raise InputError(f"--unjudged {unjudged} needs --judge NAME: whose grades to let in")
    if judge and unjudged not in MODEL_MODES:
        raise InputError("--judge needs --unjudged judge or --unjudged grade")
    if not 0 <= seed <= SEED_MAX:
        raise InputError(f"--seed must be from 0 to {SEED_MAX}, got {seed}")
    options = CompareOptions(test=test, alpha=alpha, seed=seed, allow_partial=allow_partial,
                             min_segment_queries=min_segment_queries)  # fmt: skip
    targets = target_views.parse_targets(target)
    project = project_file(project)
    if report is not None:  # before the comparison is stored
        check_output_path(report, "--report", make_folder=True)
    if junit is not None:
        check_output_path(junit, "--junit")
    store = open_store(db, project_file=project)
    given = GateOptions(metric, gate, test, alpha, max_drop, max_relative_drop, unjudged, judge,
                        segment)  # fmt: skip
    gates = chosen_gates(store, baseline, candidate, given, project)
    store.check_target_segments(candidate, targets)
    time_gated_pairs(store, baseline, candidate, gates)  # latency gated on timings taken now
    result = store.compare_runs(
        baseline, candidate, metrics=metric or None, gates=gates, options=options
    )
    verdicts = store.check_targets(candidate, targets, seed=seed) if targets else []
    if junit is not None:
        with writing(junit, "--junit"):
            write_junit(result, junit, strict=strict, targets=verdicts)
    if report is not None:
        with writing(report, "--report"):
            write_report(result, report, store)
    if as_json:
        print_json({**result.to_dict(), "targets": [v.to_dict() for v in verdicts]})
    else:
        print_comparison(result)
        target_views.print_targets(verdicts)
    undecided = result.needing_judgments or any(
        s.gated and s.verdict == "needs_judgments" for s in result.segments
    )
    if fail_on_regression and (result.verdict == "regression" or (strict and undecided)):
        raise typer.Exit(1)
    if fail_on_target and any(v.verdict == "missed" for v in verdicts):
        raise typer.Exit(1)


def write_report(result: ComparisonResult, path: Path, store: Store) -> None:
    """The comparison page, with query texts and both runs' results from the store."""
    from evalplat.reports import render_comparison

    render_comparison(result, path, store)


def unjudged_command(
    run: Annotated[str, typer.Argument(help=f"Run: {RUN_REF}.")],
    k: Annotated[int, typer.Option("--k", help="Look at the top k results of each query.")] = 10,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Top-k documents of a run that no person graded, as CSV for annotators (a judge's
    grade alone leaves a document here): each with its title and the start of its text
    (from the test set's documents, else the hit's fields)."""
    from evalplat.metrics.numbers import counted

    store = open_store(db, read_only=True)
    run_id = store.resolve_run(run)
    frame = store.unjudged(run_id, k)
    if as_json:
        print_json(frame.to_dict(orient="records"))
        return
    frame.to_csv(sys.stdout, index=False)
    echo_err(
        f"{counted(len(frame), 'unjudged document')} in the top {k} of "
        f"{counted(frame['query_id'].nunique(), 'query')}"
        f" of run {run_id}{run_ref_note(run)}"
    )


@baseline_app.command("set")
def baseline_set_command(
    config: Annotated[str, typer.Argument(help="Config name.")],
    run: Annotated[str, typer.Argument(help=f"Run to pin: {RUN_REF}.")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Pin a complete run as the config's baseline on that run's test set."""
    info = open_store(db).set_baseline(config, run)
    if as_json:
        print_json(info.to_dict())
    else:
        typer.echo(f"baseline of {info.config} on {info.test_set}: run {info.run_id} (pinned)"
                   + run_ref_note(run))  # fmt: skip


@baseline_app.command("show")
def baseline_show_command(
    config: Annotated[
        str | None, typer.Argument(help="Config name (default: all).", show_default=False)
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Show the baselines of one config or of all configs."""
    infos = open_store(db, read_only=True).baselines(config)
    if as_json:
        print_json([i.to_dict() for i in infos])
        return
    if not infos:
        echo_err("no baselines yet: a config's first complete run becomes its baseline")
    for i in infos:
        how = "pinned" if i.pinned else "first complete run"
        typer.echo(f"{i.config}\t{i.test_set}\trun {i.run_id}\t{how}\t{i.set_at:%Y-%m-%d %H:%M}")
