"""``evalplat nightly``: one night of the project file's evaluation loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from evalplat.cli.common import DbOption, JsonOption


def register(app: typer.Typer) -> None:
    app.command("nightly")(nightly)


def nightly(
    project: Annotated[
        Path,
        typer.Option("--project", "-p", help="Project file (default: ./evalplat.toml)."),
    ] = Path("evalplat.toml"),
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Validate everything and say what would run; write nothing."
        ),
    ] = False,
    target: Annotated[
        list[str] | None,
        typer.Option(
            "--target",
            help='A target for every config, e.g. "nDCG@10>=0.85" (repeatable); added to the '
            "project's [[targets]].",
            show_default=False,
        ),
    ] = None,
    fail_on_target: Annotated[
        bool, typer.Option("--fail-on-target", help="Exit 1 when a run missed a target.")
    ] = False,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Import changed test sets, register configs, run, compare with baselines, alert, report.

    Exit 0: no regression that fails the job; 1: a regression is confirmed (alerted once, not
    every night) on a config [nightly] fail_on names (default: production's, not an
    experiment's), or with --fail-on-target a run missed a target;
    2: the project is invalid (found before anything is written; --dry-run says 2 for exactly
    the projects a night would refuse); 3: a run could not complete (unless fail_on leaves out
    "outage"), the night's judge failed,
    or the reports could not be written (3 beats 1; the other configs still ran and every alert
    was still delivered).
    One line per step on stdout (JSON lines with --json).
    """
    from evalplat.nightly.job import run_nightly
    from evalplat.nightly.project import load_project

    loaded = load_project(project)
    if target:
        import dataclasses

        from evalplat.comparison.targets import parse_target

        extra = tuple(parse_target(expression) for expression in target)
        loaded = dataclasses.replace(loaded, targets=extra + loaded.targets)
    outcome = run_nightly(
        loaded,
        db_url=db,
        dry_run=dry_run,
        log=_json_line if json_output else _text_line,
        fail_on_target=fail_on_target,
    )
    raise typer.Exit(outcome.exit_code)


def _json_line(entry: dict[str, Any]) -> None:
    typer.echo(json.dumps(entry, default=str, ensure_ascii=False))


def _text_line(entry: dict[str, Any]) -> None:
    fields = " ".join(f"{key}={_value(value)}" for key, value in entry.items() if key != "step")
    typer.echo(f"nightly {entry['step']:<14} {fields}".rstrip())


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}:{_value(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
