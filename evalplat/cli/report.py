"""``evalplat report run | compare | site``: write static HTML reports from the stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalplat.cli.common import (
    RUN_REF,
    DbOption,
    JsonOption,
    check_output_folder,
    check_output_path,
    open_store,
    print_json,
    writing,
)
from evalplat.cli.compare_gates import CompareProjectOption

app = typer.Typer(help="Static HTML reports: run, comparison and the report site.",
                  no_args_is_help=True)  # fmt: skip

OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="A file ending in .html, or a folder (created) to write the page into.",
        show_default=False,
    ),
]


def _is_file(out: Path) -> bool:
    return out.suffix.lower() in (".html", ".htm")


def _check_out(out: Path | None) -> None:
    """Refuse an ``--out`` that cannot be written before anything is read or stored."""
    if out is not None and _is_file(out):
        check_output_path(out, "--out", make_folder=True)
    elif out is not None:
        check_output_folder(out, "--out")


def _target(out: Path | None, default_name: str) -> Path:
    """``--out x.html`` is the file; any other ``--out`` is a folder; none is the current one."""
    if out is None:
        return Path(default_name)
    if _is_file(out):
        return out
    return out / default_name


def _done(path: Path, as_json: bool) -> None:
    if as_json:
        print_json({"path": str(path)})
    else:
        typer.echo(str(path))


@app.command("run")
def report_run(
    run: Annotated[str, typer.Argument(help=f"Run: {RUN_REF}.")],
    out: OutOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write the page of one run: metrics, distributions, latency, failures, every query."""
    from evalplat.reports import render_run

    _check_out(out)
    store = open_store(db)
    run_id = store.resolve_run(run)
    target = _target(out, f"run-{run_id}.html")
    with writing(target, "--out"):
        written = render_run(store, run_id, target)
    _done(written, as_json)


@app.command("compare")
def report_compare(
    baseline: Annotated[str, typer.Argument(help=f"Baseline run: {RUN_REF}.")],
    candidate: Annotated[str, typer.Argument(help=f"Candidate run: {RUN_REF}.")],
    out: OutOption = None,
    project: CompareProjectOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Compare two runs (stored as a comparison) and write the comparison page; gates what
    `evalplat compare` gates without gate options: the project's [[gates]], else the relevance
    metrics."""
    from evalplat.cli.compare_gates import GateOptions, chosen_gates, project_file
    from evalplat.reports import render_comparison

    _check_out(out)  # before the comparison is stored
    project = project_file(project)
    store = open_store(db, project_file=project)
    gates = chosen_gates(store, baseline, candidate, GateOptions(), project)
    result = store.compare_runs(baseline, candidate, gates=gates)
    target = _target(out, f"compare-{result.baseline_run_id}-{result.candidate_run_id}.html")
    with writing(target, "--out"):
        written = render_comparison(result, target, store)
    _done(written, as_json)


@app.command("site")
def report_site(
    out: Annotated[Path, typer.Option("--out", help="Folder of the report site (created).")] = Path(
        "reports"
    ),
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            help="Project file whose [online] agreement pairs are shown and whose [[targets]] "
            "the history pages draw (default: ./evalplat.toml when there is one).",
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write the report site: index, history per config, run and comparison pages, and the
    "Offline vs online" pages of the project's `[online] agreement` pairs. With a project
    file, history pages draw only the targets it holds now."""
    from evalplat.nightly.project import PROJECT_FILE, load_project
    from evalplat.nightly.project_online import agreement_pairs
    from evalplat.reports import render_site

    check_output_folder(out, "--out")
    loaded = None
    if project is not None or Path(PROJECT_FILE).is_file():
        loaded = load_project(project)
    pairs = None if loaded is None else agreement_pairs(loaded) or None
    control = None if loaded is None or loaded.online is None else loaded.online.baseline
    store = open_store(db, project_file=project)
    targets = None if loaded is None else loaded.targets
    gates_of = None if loaded is None else loaded.stated_gates
    with writing(out, "--out"):
        written = render_site(store, out, pairs, targets=targets, control=control,
                              gates_of=gates_of)  # fmt: skip
    _done(written, as_json)
