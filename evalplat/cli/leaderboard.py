"""``evalplat leaderboard RUN RUN ... | --config-glob PATTERN | --label LABEL``: many runs on one
test set version, ranked per metric, with which of them differ.

Which runs join and which is the baseline: ``evalplat.store.leaderboard``; the statistics and
the one family-wise level they share: ``evalplat.comparison.leaderboard``. Prints a table per
metric (rank, run, mean [interval], letters, delta against the baseline with its verdict),
``--json``, ``--csv PATH`` (a row per metric and run) and ``--report PATH`` (an HTML page).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import (
    RUN_REF,
    DbOption,
    JsonOption,
    check_output_path,
    open_store,
    print_json,
    writing,
)
from evalplat.cli.compare_gates import CompareProjectOption

if TYPE_CHECKING:
    from evalplat.comparison.leaderboard import Leaderboard

_VERDICT_MARKS = {"improvement": "▲ better", "regression": "▼ worse", "unchanged": "=",
                  "needs_judgments": "? needs judgments"}  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("leaderboard")(leaderboard_command)


def leaderboard_command(
    runs: Annotated[
        list[str] | None,
        typer.Argument(help=f"Runs to rank: {RUN_REF}.", show_default=False),
    ] = None,
    config_glob: Annotated[
        str | None,
        typer.Option(
            "--config-glob",
            help="Rank the latest complete run of every config whose name matches this shell "
            "pattern (bm25-*).",
            show_default=False,
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option(
            "--label",
            help="Rank the latest complete run of every config version with this label "
            "(config add --label).",
            show_default=False,
        ),
    ] = None,
    testset: Annotated[
        str | None,
        typer.Option(
            "--testset",
            "-t",
            help="With --config-glob or --label: only runs on this test set (NAME or NAME@VER).",
            show_default=False,
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help=f"Run every other is compared with: {RUN_REF} (default: production, the "
            "config the others are gated against, else the first pinned baseline, else the "
            "first run).",
            show_default=False,
        ),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to rank by, repeatable (default: the relevance metrics every run was "
            "scored with, as compare gates them).",
            show_default=False,
        ),
    ] = None,
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha",
            help="Family-wise level of each metric's pairs (Tukey HSD); the verdicts against the "
            "baseline are compare's, at their gates' level.",
        ),
    ] = 0.05,
    draws: Annotated[
        int, typer.Option("--draws", help="Permutations of the randomized Tukey HSD.")
    ] = 1_000,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the permutations and bootstrap.")
    ] = 0,
    csv_path: Annotated[
        Path | None,
        typer.Option("--csv", help="Write a CSV row per metric and run here.", show_default=False),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report", help="Write the leaderboard as an HTML page here.", show_default=False
        ),
    ] = None,
    project: CompareProjectOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Rank many runs on one test set version: each run's mean with its interval, which runs
    differ (letters: runs sharing one are not shown to differ) and each against the baseline.

    The verdict of each run against the baseline is the one compare gives the pair, with the
    same gates (the project's [[gates]] in a project directory or with --project, else the
    relevance metrics); the letters come from the randomized Tukey HSD over all pairs of a
    metric."""
    from evalplat.cli.compare_gates import project_file
    from evalplat.comparison.leaderboard import MAX_DRAWS, LeaderboardOptions
    from evalplat.inputs.validation import SEED_MAX, check_number
    from evalplat.metrics.names import parse_all
    from evalplat.nightly.project import load_project

    check_number(alpha, "--alpha", above=0, maximum=0.999999)
    check_number(draws, "--draws", minimum=1, maximum=MAX_DRAWS)
    check_number(seed, "--seed", minimum=0, maximum=SEED_MAX)
    options = LeaderboardOptions(alpha=alpha, draws=draws, seed=seed)
    chosen = [str(m) for m in parse_all(metric)] if metric else None
    if csv_path is not None:
        check_output_path(csv_path, "--csv")
    if report is not None:
        check_output_path(report, "--report", make_folder=True)
    project = project_file(project)
    store = open_store(db, project_file=project)
    stated = None if project is None else load_project(project).stated_gates
    board = store.leaderboard(
        runs or (), config_glob=config_glob, label=label, testset=testset, baseline=baseline,
        metrics=chosen, options=options, gates_of=stated,
    )  # fmt: skip
    if csv_path is not None:
        with writing(csv_path, "--csv"):
            write_csv(board, csv_path)
    if report is not None:
        from evalplat.reports.leaderboard_page import render_leaderboard

        with writing(report, "--report"):
            render_leaderboard(board, report)
    if as_json:
        print_json(board.to_dict())
    else:
        print_leaderboard(board)


def write_csv(board: Leaderboard, path: Path) -> None:
    rows = board.csv_rows()
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def print_leaderboard(board: Leaderboard) -> None:
    from rich.table import Table

    from evalplat.cli.common import table_console
    from evalplat.metrics.numbers import counted, delta_text, p_text, value_text

    console = table_console()
    options = board.options
    for metric in board.metrics:
        table = Table(
            "rank", "run", "id", f"{metric.metric} [95% interval]", "letters",
            "Δ vs baseline", "p (corrected)", "verdict",
            title=f"{metric.metric} ({'higher' if metric.higher_is_better else 'lower'} "
                  "is better)",
        )  # fmt: skip
        for s in metric.standings:
            mean = value_text(s.mean, metric.metric)
            low, high = value_text(s.ci_low, metric.metric), value_text(s.ci_high, metric.metric)
            table.add_row(
                str(s.rank), s.run, "" if s.run_id is None else str(s.run_id),
                f"{mean} [{low}, {high}]", s.letters,
                "baseline" if s.delta is None else delta_text(s.delta, metric.metric),
                "" if s.p_corrected is None else p_text(s.p_corrected),
                "" if s.verdict is None else _VERDICT_MARKS.get(s.verdict, s.verdict),
            )  # fmt: skip
        console.print(table)
    for note in board.notes:
        console.print(note, highlight=False, markup=False)
    console.print(
        f"{counted(len(board.runs), 'run')} on {board.test_set or 'one test set'}, "
        f"{counted(board.queries, 'query')}"
        f"{', weighted' if board.weighted else ''}; baseline {board.baseline}. "
        f"Runs sharing a letter are not shown to differ (randomized Tukey HSD, {options.draws} "
        f"permutations, family-wise level {options.alpha:g} per metric); verdicts: those "
        f"`evalplat compare` gives each run against the baseline, with the same gates "
        f"({counted(board.tests, 'gated verdict')}); seed {options.seed}.",
        highlight=False,
        markup=False,
    )
