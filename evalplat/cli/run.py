"""``evalplat run | import-run | rescore``: search a config over a test set, or store a run made
elsewhere, or score stored runs again; ``evalplat runs`` (``cli/runs.py``) reads them back.

Exit codes: 0 when the run is complete; 3 when it is partial, failed or interrupted (one line on
stderr says how many queries failed and how to finish it); 2 for bad input.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import (
    RUN_REF,
    DbOption,
    JsonOption,
    echo_err,
    open_store,
    print_json,
)
from evalplat.cli.runs import scored_on_note
from evalplat.metrics.numbers import value_text
from evalplat.metrics.run_health import zero_results

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.store.runs import RunInfo

MetricOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        "-m",
        help="Metric to score, repeatable (default: nDCG@10 P@10 R@100 AP RR@10 Judged@10).",
        show_default=False,
    ),
]


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("import-run")(import_run_command)
    app.command("rescore")(rescore_command)


def run_command(
    config: Annotated[
        str | None, typer.Argument(help="Config to run: NAME or NAME@VERSION.", show_default=False)
    ] = None,
    testset: Annotated[
        str | None,
        typer.Option("--testset", "-t", help="Test set: NAME or NAME@VERSION.", show_default=False),
    ] = None,
    metric: MetricOption = None,
    depth: Annotated[int, typer.Option("--depth", help="Results asked per query.")] = 100,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", help="Queries searched at once.")
    ] = 4,
    rate_limit: Annotated[
        float | None,
        typer.Option(
            "--rate-limit", help="At most this many requests per second.", show_default=False
        ),
    ] = None,
    trigger: Annotated[
        str, typer.Option("--trigger", help="Why this run happens: manual, nightly or ci.")
    ] = "manual",
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume", help="Finish this interrupted or partial run (an id).", show_default=False
        ),
    ] = None,
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            "-p",
            help="Project file whose [metrics] (and gated metrics) the run scores without "
            "--metric, and whose database it uses (default: ./evalplat.toml when there is one).",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Send every query of a test set to a config's searcher; store results and scores.

    Without --metric it scores the project's metrics, as nightly does (the project file given,
    else ./evalplat.toml), else the default ones.
    Exits 3 when some queries failed (the run is partial) or the backend is unreachable.
    """
    from evalplat.errors import InputError
    from evalplat.running import runner

    if trigger not in ("manual", "nightly", "ci"):
        raise InputError(f"--trigger must be manual, nightly or ci, got {trigger!r}")
    if project is not None or Path("evalplat.toml").is_file():
        from evalplat.nightly.project import load_project
        from evalplat.store.refs import parse_version_ref

        loaded = load_project(project)
        if metric is None and testset is not None and resume is None:
            name = parse_version_ref(testset, "test set reference").name
            metric = loaded.metrics_for(name) or None
        store = open_store(db, project_file=loaded.path)
    else:
        store = open_store(db)
    settings = runner.RunSettings(depth=depth, concurrency=concurrency, rate_limit=rate_limit)
    with _progress() as progress:
        if resume is not None:
            if config is not None or testset is not None:
                raise InputError("--resume RUN takes no CONFIG or --testset: the run has both")
            info = runner.resume(store, resume, settings=settings, progress=progress)
        else:
            if config is None or testset is None:
                raise InputError("give CONFIG and --testset NAME (or --resume RUN)")
            info = runner.run(
                store,
                config,
                testset,
                metrics=metric,
                settings=settings,
                trigger=trigger,
                progress=progress,
            )
    _report(info, json_output, store)


def import_run_command(
    file: Annotated[Path, typer.Argument(help="TREC run file: qid Q0 docid rank score tag.")],
    config: Annotated[
        str, typer.Option("--config", help="Config the results belong to (created if new).")
    ],
    testset: Annotated[
        str, typer.Option("--testset", "-t", help="Test set: NAME or NAME@VERSION.")
    ],
    label: Annotated[
        str | None,
        typer.Option("--label", help="Version label, e.g. a git sha.", show_default=False),
    ] = None,
    metric: MetricOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Store a run file produced elsewhere as a run of a config, ranked as trec_eval does."""
    from evalplat.metrics.numbers import counted
    from evalplat.running import runner

    store = open_store(db)
    info = runner.import_run(store, file, config, testset, label=label, metrics=metric)
    skipped = int(info.options.get("run_only_queries", 0))
    if skipped:
        echo_err(
            f"warning: {counted(skipped, 'query')} of {file.name} not in the test set; ignored"
        )
    _report(info, json_output, store)


def rescore_command(
    run: Annotated[
        str | None,
        typer.Argument(
            help=f"Run: {RUN_REF} (not with --all).",
            show_default=False,
        ),
    ] = None,
    testset: Annotated[
        str | None,
        typer.Option(
            "--testset",
            "-t",
            help="Judgments version: NAME@VERSION (default: latest).",
            show_default=False,
        ),
    ] = None,
    all_runs: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every finished run of the --testset test set; runs already scored on that "
            "version are kept.",
        ),
    ] = False,
    metric: MetricOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Score a stored run again against another version of its judgments, without searching.

    Each (run, test set version) score set is kept; the newest is the one the run shows."""
    from evalplat.errors import InputError
    from evalplat.running import runner

    if all_runs:
        if run is not None or testset is None:
            raise InputError("--all takes no run and needs --testset NAME@VERSION")
        _rescore_all(testset, metric, db, json_output)
        return
    if run is None:
        raise InputError("name a run to rescore, or pass --all --testset NAME@VERSION")
    info = runner.rescore(open_store(db), run, testset, metrics=metric)
    _report(info, json_output)


def _rescore_all(testset: str, metric: list[str] | None, db: str | None, as_json: bool) -> None:
    from evalplat.running.rescoring import rescore_all

    outcomes = rescore_all(open_store(db), testset, metrics=metric)
    if as_json:
        print_json([o.to_dict() for o in outcomes])
        return
    for o in outcomes:
        typer.echo(
            f"run {o.run_id} ({o.config}): {o.outcome}" + (f", {o.reason}" if o.reason else "")
        )
    counts = {
        kind: sum(o.outcome == kind for o in outcomes) for kind in ("rescored", "kept", "skipped")
    }
    echo_err(", ".join(f"{n} {kind}" for kind, n in counts.items()) + f" on {testset}")


def _report(info: RunInfo, json_output: bool, store: Store | None = None) -> None:
    """Print the run's summary (with a warning when most queries returned nothing); exit 3
    unless it is complete."""
    from evalplat.metrics.numbers import counted

    if store is not None:
        warning = zero_results(store.run_outcomes(info.id)).warning()
        if warning:
            echo_err(f"warning: run {info.id}: {warning}")
    if json_output:
        print_json(info.to_dict())
    else:
        typer.echo(
            f"run {info.id} {info.status}: {info.config}@{info.config_version} on "
            f"{info.test_set}@{info.test_set_version}, {counted(info.queries_done, 'query')}"
        )
        if info.means and info.scored_on:
            typer.echo(f"  scored on {info.scored_on}{scored_on_note(info, ' (rescored)')}")
        for name, value in info.means.items():
            typer.echo(f"  {name:<14} {value_text(value, name)}")
    if info.status == "complete":
        return
    missing = info.queries_total - info.queries_done
    counts = f"{info.queries_failed} of {counted(info.queries_total, 'query')} failed"
    if missing > 0:
        counts += f", {missing} not searched"
    detail = f" ({info.error})" if info.error and info.status == "failed" else ""
    echo_err(f"error: run {info.id} is {info.status}: {counts}{detail}; "
             f"finish it with `evalplat run --resume {info.id}`")  # fmt: skip
    raise typer.Exit(3)


@contextmanager
def _progress() -> Iterator[Callable[[int, int], None] | None]:
    """A Rich progress bar on a terminal (stderr); nothing when output is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("searching", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
