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
from evalplat.cli.online import AgreementProjectOption, project_pairs

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
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Compare two runs (stored as a comparison) and write the comparison page; gates the
    relevance metrics, as `evalplat compare` does by default."""
    from evalplat.reports import render_comparison

    _check_out(out)  # before the comparison is stored
    store = open_store(db)
    result = store.compare_runs(baseline, candidate)
    target = _target(out, f"compare-{result.baseline_run_id}-{result.candidate_run_id}.html")
    with writing(target, "--out"):
        written = render_comparison(result, target, store)
    _done(written, as_json)


@app.command("site")
def report_site(
    out: Annotated[Path, typer.Option("--out", help="Folder of the report site (created).")] = Path(
        "reports"
    ),
    project: AgreementProjectOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write the report site: index, history per config, run and comparison pages, and the
    "Offline vs online" pages of the project's `[online] agreement` pairs."""
    from evalplat.reports import render_site

    check_output_folder(out, "--out")
    pairs, control = project_pairs(project)
    store = open_store(db, project_file=project)
    with writing(out, "--out"):
        written = render_site(store, out, pairs, control=control)
    _done(written, as_json)
