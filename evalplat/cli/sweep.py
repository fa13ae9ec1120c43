"""``evalplat sweep CONFIG --testset T --grid 'param=v1,v2'``: tune a config's params.

Prints the settings ranked on the metric, the in-sample and the held-out gain over the baseline
(k-fold cross-validation over queries), the winner's verdicts against the baseline through
``compare``'s default gates, and the ``compare`` command line that reproduces them. Exit codes:
0 done (whatever the verdict), 2 bad input (nothing written), 3 a run could not complete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import DbOption, JsonOption, echo_err, open_store, print_json

if TYPE_CHECKING:
    from evalplat.running.sweep import SweepResult


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_command)


def sweep_command(
    config: Annotated[str, typer.Argument(help="Config whose params are swept: NAME[@VERSION].")],
    testset: Annotated[
        str, typer.Option("--testset", "-t", help="Test set: NAME or NAME@VERSION.")
    ],
    grid: Annotated[
        list[str],
        typer.Option(
            "--grid",
            "-g",
            help="A param and its values, repeatable: 'operator=or,and', 'weights.title=1,2,4' "
            "(one key of a table), or 'param=[...]' (a TOML array, for values with commas).",
        ),
    ],
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric the settings are ranked on (default: nDCG@10, the first metric "
            "compare gates).",
            show_default=False,
        ),
    ] = None,
    folds: Annotated[
        int, typer.Option("--folds", help="Folds of the cross-validation over queries.")
    ] = 5,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the folds, the sampling and the bootstrap.")
    ] = 0,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="Config version the gains are over: NAME[@VERSION] (default: CONFIG's current "
            "version, the one its project file or last `config add` holds).",
            show_default=False,
        ),
    ] = None,
    max_runs: Annotated[
        int, typer.Option("--max-runs", help="Budget: settings searched on every query.")
    ] = 50,
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            help="grid (every setting, within --max-runs), random (a seeded sample of "
            "--max-runs settings) or halving (successive halving on growing query subsets).",
        ),
    ] = "grid",
    depth: Annotated[int, typer.Option("--depth", help="Results asked per query.")] = 100,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", help="Queries searched at once.")
    ] = 4,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run every setting of a grid of a config's params, choose one on held-out queries, and
    gate the winner against the baseline as compare does.

    A setting runs as its own config, CONFIG~param=value,...; a setting already run on the test
    set version is not searched again."""
    from evalplat.running.runner import RunSettings
    from evalplat.running.sweep import SweepOptions, plan_sweep, sweep

    options = SweepOptions(
        metric=metric,
        folds=folds,
        seed=seed,
        max_runs=max_runs,
        strategy=strategy,
        baseline=baseline,
        settings=RunSettings(depth=depth, concurrency=concurrency),
    )
    store = open_store(db)
    plan = plan_sweep(store, config, testset, grid, options)
    result = sweep(store, plan, progress=None if as_json else echo_err)
    if as_json:
        print_json(result.to_dict())
    else:
        print_sweep(result)


def print_sweep(result: SweepResult) -> None:
    """The ranked settings, the held-out verdict, the winner's gates and the compare command."""
    from rich.table import Table

    from evalplat.cli.common import table_console
    from evalplat.metrics.numbers import value_text

    console = table_console(highlight=False)
    searched = f"{result.searched} searched, {result.cached} reused"
    rungs = " → ".join(f"{r.settings} on {r.queries} queries" for r in result.rungs)
    how = {
        "grid": f"every setting of the grid ({result.grid_size})",
        "random": f"a random sample of {result.rungs[-1].settings} of {result.grid_size} settings",
        "halving": f"successive halving over {result.grid_size} settings: {rungs}",
    }[result.strategy]
    console.print(f"Sweep of {result.config} on {result.test_set}, ranked on {result.metric}: "
                  f"{how}; full runs: {searched}.")  # fmt: skip
    table = Table("setting", "run", result.metric, "gain", "chosen in folds")
    for row in result.rows:
        if row.mean is None:
            table.add_row(row.label, "-", f"({value_text(row.rung_mean)} on rung "
                          f"{row.rung + 1})", "-", "-")  # fmt: skip
            continue
        table.add_row(
            row.label,
            str(row.run_id),
            value_text(row.mean),
            f"{row.mean - result.baseline_mean:+.4f}",
            f"{row.chosen_in_folds}/{result.held_out.folds}",
        )
    table.add_row(f"baseline {result.baseline}", str(result.baseline_run_id),
                  value_text(result.baseline_mean), "", "")  # fmt: skip
    console.print(table)
    held = result.held_out
    console.print(f"In-sample best gain: {held.in_sample_gain:+.4f} ({result.winner}).")
    low, high = held.interval
    console.print(f"Held-out gain ({held.folds}-fold, {held.confidence:.0%} interval): "
                  f"{held.held_out_gain:+.4f} [{low:+.4f}, {high:+.4f}].")  # fmt: skip
    console.print(result.verdict_line)
    gated = [m for m in result.comparison.metrics if m.gated]
    verdicts = ", ".join(f"{m.metric} {m.verdict}" for m in gated)
    console.print(f"Winner against the baseline: {result.comparison.verdict} ({verdicts}).")
    console.print(result.compare_command)
