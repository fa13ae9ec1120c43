"""``evalplat events import | score``: interaction logs in, online measures out as runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalplat.cli.common import DbOption, JsonOption, open_store, print_json

app = typer.Typer(
    help="Online events: UBI or flat logs, attributed to config versions, scored per day.",
    no_args_is_help=True,
)


@app.command("import")
def import_(
    files: Annotated[
        list[Path], typer.Argument(help="Log files (UBI JSONL, flat JSONL, CSV or Parquet).")
    ],
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="ubi (default for .jsonl), jsonl (flat rows), csv (.csv, .tsv) or parquet.",
        ),
    ] = None,
    map_: Annotated[
        str | None,
        typer.Option(
            "--map",
            help="Flat column names: canonical=theirs,... (e.g. session_id=sid,action=type).",
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config", help="NAME or NAME@VER for searches whose record names no config."
        ),
    ] = None,
    max_invalid: Annotated[
        int,
        typer.Option(
            "--max-invalid",
            help="Bad lines to set aside (written to FILE.rejects.jsonl next to each input) "
            "before the whole import is refused.",
        ),
    ] = 0,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Validate the logs, then store their searches and events (records already stored are
    skipped).

    Nothing is written unless every line is valid (or at most --max-invalid lines are bad, and
    set aside); an error names the file and line.
    """
    from evalplat.events.records import parse_map
    from evalplat.inputs.validation import check_number
    from evalplat.metrics.numbers import counted

    check_number(max_invalid, "--max-invalid", minimum=0)
    mapping = parse_map(map_)
    outcome = open_store(db).import_events(
        files, format=format, mapping=mapping, config=config, max_invalid=max_invalid
    )
    if json_output:
        print_json(outcome.to_dict())
        return
    typer.echo(
        f"imported {counted(outcome.searches, 'search')}, {counted(outcome.events, 'event')} "
        f"({counted(outcome.duplicates, 'duplicate')} skipped)"
    )
    if outcome.interleaved:
        typer.echo(f"of which interleaved: {outcome.interleaved} searches (evalplat online "
                   "preference CANDIDATE BASELINE scores them)")  # fmt: skip
    if max_invalid:
        typer.echo(f"lines: {outcome.lines} read, {outcome.rejected} rejected")
    for where in outcome.rejects_files:
        typer.echo(f"rejected lines written to {where}")
    for ref, count in outcome.unknown_configs.items():
        typer.echo(f"not imported: {count} searches of unknown config {ref!r}")
    if outcome.unattributed:
        typer.echo(f"not imported: {outcome.unattributed} searches name no config (use --config)")
    if outcome.events_without_search:
        typer.echo(f"stored, not yet counted: {outcome.events_without_search} events whose "
                   "search is not imported")  # fmt: skip


@app.command("attach")
def attach(
    files: Annotated[list[Path], typer.Argument(help="Parquet logs, read where they are.")],
    map_: Annotated[
        str | None,
        typer.Option(
            "--map",
            help="Column names: canonical=theirs,... (a.b.c reaches into structs).",
        ),
    ] = None,
    max_invalid: Annotated[
        int,
        typer.Option(
            "--max-invalid",
            help="Bad rows per file to leave out of every reading (listed in "
            "FILE.rejects.jsonl next to it) before the file is refused.",
        ),
    ] = 0,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Attach Parquet logs that stay in place: scoring reads them through DuckDB with the
    stored events. Each file's schema (time zones included) and values are checked first; an
    error names the file and nothing is recorded."""
    from evalplat.events.records import parse_map
    from evalplat.inputs.validation import check_number
    from evalplat.metrics.numbers import counted

    check_number(max_invalid, "--max-invalid", minimum=0)
    mapping = parse_map(map_)
    attached = open_store(db).attach_events(files, mapping=mapping, max_invalid=max_invalid)
    if json_output:
        print_json([a.to_dict() for a in attached])
        return
    for item in attached:
        typer.echo(
            f"attached {item.path}: {counted(item.searches, 'search')}, "
            f"{counted(item.events, 'event')}"
        )
        for ref, count in item.unknown_configs.items():
            typer.echo(f"not read: {count} searches of unknown config {ref!r}")
        if item.duplicate_searches:
            typer.echo(f"duplicates: {item.duplicate_searches} repeated search ids, read once")
        if item.rejects_file:
            typer.echo(f"left out: {item.rejected} bad rows, listed in {item.rejects_file}")


@app.command("score")
def score(
    configs: Annotated[
        list[str] | None,
        typer.Argument(help="Configs (NAME or NAME@VER); default: every one with searches."),
    ] = None,
    window: Annotated[str, typer.Option("--window", help="day (UTC) or all.")] = "day",
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", "-m", help="Online measures (default: every online measure)."),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Score the online measures per config version and window, stored as online runs
    (compare them with `evalplat compare`, see them with `evalplat history CONFIG`). With an
    `[events] url` in evalplat.toml the logs are aggregated in that warehouse."""
    from evalplat.db.engine import PROJECT_FILE
    from evalplat.events.warehouse import project_warehouse

    warehouse = project_warehouse(Path(PROJECT_FILE))
    runs = open_store(db).score_online(configs or None, window=window, metrics=metric,
                                       warehouse=warehouse)  # fmt: skip
    if json_output:
        print_json([run.to_dict() for run in runs])
        return
    for run in runs:
        online = run.options.get("online", {})
        figures = " ".join(f"{name}={value:.4f}" for name, value in run.means.items())
        typer.echo(
            f"run {run.id} {run.config}@{run.config_version} {online.get('start', '')[:10]} "
            f"sessions={online.get('sessions')} {figures}"
        )
