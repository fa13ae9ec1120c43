"""``evalplat run | import-run | rescore`` and ``evalplat runs list | show``.

Exit codes: 0 when the run is complete; 3 when it is partial, failed or interrupted (one line on
stderr says how many queries failed and how to finish it); 2 for bad input.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
from evalplat.cli.target_views import TargetOption
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

runs_app = typer.Typer(
    help="Stored runs: list them, show one, export one as a TREC run file.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("import-run")(import_run_command)
    app.command("rescore")(rescore_command)
    app.add_typer(runs_app, name="runs")


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


@runs_app.command("list")
def list_command(
    config: Annotated[
        str | None, typer.Argument(help="Only runs of this config.", show_default=False)
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Runs, newest first; a run whose process died shows as interrupted."""
    runs = open_store(db, read_only=True).list_runs(config)
    if json_output:
        print_json([r.to_dict() for r in runs])
        return
    if not runs:
        echo_err("no runs yet: start one with `evalplat run CONFIG --testset NAME`")
        return
    from rich.table import Table

    from evalplat.cli.common import table_console

    # what the figures were scored on (``evalplat.store.run_figures``): a rescored run's
    # version beside its figure, the grades under the table
    grades = sorted({r.grades for r in runs if r.grades and "nDCG@10" in r.means})
    table = Table("id", "status", "config", "test set", "size", "failed", "started", "nDCG@10",
                  caption=f"nDCG@10 on {' or '.join(grades)}" if grades else None)  # fmt: skip
    for r in runs:
        ndcg = r.means.get("nDCG@10")
        table.add_row(
            str(r.id),
            r.status,
            f"{r.config}@{r.config_version}",
            f"{r.test_set}@{r.test_set_version}" if r.online is None else f"{r.test_set} {r.day}",
            r.size_text(),
            "" if r.online is not None else str(r.queries_failed),
            f"{r.started_at:%Y-%m-%d %H:%M}",
            "" if ndcg is None else f"{ndcg:.4f}{_scored_on(r, ' on v{}')}",
        )
    table_console().print(table)


@runs_app.command("show")
def show_command(
    run: Annotated[str, typer.Argument(help=f"Run: {RUN_REF}.")],
    target: TargetOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """One run: status, counts, means, latency, target verdicts and its failed queries."""
    from evalplat.cli.target_views import parse_targets, print_targets

    targets = parse_targets(target)
    store = open_store(db, read_only=True)
    info = store.run_info(run)
    details = _details(store, info)
    # the verdicts kept by the nightly job, and those of the targets given here (which win)
    checked = {
        (v.target.metric, v.target.segment): v
        for v in store.target_verdicts([info.id]).get(info.id, [])
    }
    checked.update(
        ((v.target.metric, v.target.segment), v) for v in store.check_targets(info.id, targets)
    )
    details["targets"] = [v.to_dict() for v in checked.values()]
    if json_output:
        print_json(details)
        return
    for key in ("id", "status", "config", "config_version", "test_set", "test_set_version",
                "trigger", "depth", "started_at", "finished_at", "error"):  # fmt: skip
        if details[key] is not None:
            typer.echo(f"{key:<18} {details[key]}")
    span = info.online
    if span is None:
        typer.echo(f"{'queries':<18} {info.queries_done}/{info.queries_total} done, "
                   f"{info.queries_failed} failed")  # fmt: skip
    else:
        typer.echo(f"{'window':<18} {info.day}")
        for key in ("sessions", "searches", "events"):
            typer.echo(f"{key:<18} {info.queries_total if key == 'sessions' else span.get(key)}")
    zero = zero_results(store.run_outcomes(info.id))
    if zero.rate is not None:
        typer.echo(f"{'zero results':<18} {zero.rate:.1%} ({zero.empty} of {zero.answered} "
                   "queries)")  # fmt: skip
    latency = details.get("latency_ms")
    if latency:
        typer.echo(f"{'latency ms':<18} p50 {latency['p50']:.1f}  p95 {latency['p95']:.1f}  "
                   f"p99 {latency['p99']:.1f}")  # fmt: skip
    if info.means and info.scored_on:
        typer.echo(f"{'scored on':<18} {info.scored_on}{_scored_on(info, ' (rescored)')}")
    for name, value in info.means.items():
        typer.echo(f"{name:<18} {value_text(value, name)}")
    print_targets(list(checked.values()))
    for failure in details.get("failed_queries", [])[:20]:
        typer.echo(f"failed {failure['query_id']}: {failure['error']}")
    warning = zero.warning()
    if warning:
        echo_err(f"warning: run {info.id}: {warning}")


@runs_app.command("export")
def export_command(
    run: Annotated[str, typer.Argument(help=f"Run: {RUN_REF}.")],
    format: Annotated[
        str, typer.Option("--format", help="File format: trec (qid Q0 docid rank score tag).")
    ] = "trec",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write here (default: standard output).", show_default=False
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Write a stored run's ranked results as a TREC run file, in the stored order.

    import-run and evaluate read it back to the same scores. A query whose stored scores would
    not reproduce the stored order under trec_eval's ordering (score descending, ties by doc
    id descending) is written with scores from its ranks; stderr says how many.
    """
    from evalplat.errors import InputError
    from evalplat.formats.run_export import write_trec_run
    from evalplat.metrics.numbers import counted

    if format != "trec":
        raise InputError(f"--format must be trec, got {format!r}")
    if out is not None:
        check_output_path(out, "--out")
    store = open_store(db)
    info = store.run_info(run)
    results = store.load_results(info.id)
    tag = f"{info.config}@{info.config_version}"
    if out is None:
        written = write_trec_run(results, sys.stdout, tag)
    else:
        # written beside the target and renamed: a refused run leaves no half file behind
        partial = out.with_name(out.name + ".partial")
        try:
            with writing(out, "--out"):
                with open(partial, "w", encoding="utf-8", newline="\n") as handle:
                    written = write_trec_run(results, handle, tag)
                partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
    note = (
        f"; {written.rescored} with scores from ranks, to keep the stored order"
        if written.rescored
        else ""
    )
    named = run_ref_note(run)
    echo_err(
        f"run {info.id}{named}: {counted(written.lines, 'result')} of "
        f"{counted(written.queries, 'query')}{note}"
    )


def _details(store: Store, info: RunInfo) -> dict[str, Any]:
    if info.online is not None:  # sessions from a log: no searches sent, nothing failed
        return info.to_dict()
    outcomes = store.run_outcomes(info.id)
    ok = outcomes[outcomes["status"] == "ok"]
    latency = ok["latency_ms"].dropna().astype(float)
    data = info.to_dict()
    data["latency_ms"] = (
        {f"p{p}": float(latency.quantile(p / 100)) for p in (50, 95, 99)} if len(latency) else None
    )
    zero = zero_results(outcomes)
    data["zero_result_rate"] = zero.rate
    data["zero_results"] = zero.empty
    data["mostly_empty"] = zero.mostly_empty
    data["failed_queries"] = store.run_failures(info.id)
    return data


def _scored_on(info: RunInfo, form: str) -> str:
    """``form`` filled with the judgment version the run's figures were scored on, when that is
    not the version it was searched on (a ``rescore`` since); else empty. A figure printed
    beside ``small@1`` names its ``v2`` rather than pass for the first version's."""
    scored = info.scored_against_version
    if info.online is not None or scored is None or scored == info.test_set_version:
        return ""
    return form.format(scored)


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
            typer.echo(f"  scored on {info.scored_on}{_scored_on(info, ' (rescored)')}")
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
