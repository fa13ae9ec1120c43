"""``evalplat config add | list | show``: search configurations as immutable versions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalplat.cli.common import DbOption, JsonOption, echo_err, open_store, print_json

app = typer.Typer(
    help="Search configurations (searcher kind + parameters), versioned.", no_args_is_help=True
)


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="Config name, e.g. docs-bm25.")],
    searcher: Annotated[
        str, typer.Option("--searcher", "-s", help="Searcher kind (see `evalplat config kinds`).")
    ],
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            help="KEY=VALUE, typed like TOML (100, 0.5, true, [1,2]); dotted keys nest "
            "(headers.Authorization=...). ${ENV} placeholders are stored as written.",
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="TOML or JSON file of parameters (--param overrides)."),
    ] = None,
    label: Annotated[
        str | None, typer.Option("--label", help="A label such as a git sha or ticket.")
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Register a config version and make it current; identical content returns the existing
    version, which becomes current again (a rollback adds no version)."""
    from evalplat.searchers.configs import load_params_file, merge_params, parse_params

    params = load_params_file(file) if file is not None else {}
    params = merge_params(params, parse_params(param or []))
    outcome = open_store(db).add_config(name, searcher, params, label=label)
    info = outcome.version
    if json_output:
        print_json({**info.to_dict(), "created": outcome.created, "replaced": outcome.replaced})
        return
    if outcome.created:
        typer.echo(f"added {info.name}@{info.version} ({info.searcher}, {info.content_hash[:12]})")
    elif outcome.replaced is not None:
        typer.echo(f"current: {info.name}@{info.version} again (identical content; "
                   f"{info.name}@{outcome.replaced} was current), nothing added")  # fmt: skip
    else:
        echo_err(f"unchanged: identical to {info.name}@{info.version}, nothing added")


@app.command("list")
def list_configs(db: DbOption = None, json_output: JsonOption = False) -> None:
    """Every config with its current version (the one last added, a rollback included)."""
    configs = open_store(db, read_only=True).list_configs()
    if json_output:
        print_json([c.to_dict() for c in configs])
        return
    if not configs:
        echo_err("no configs yet: add one with `evalplat config add NAME --searcher KIND`")
        return
    from rich.table import Table

    from evalplat.cli.common import table_console

    table = Table("name", "version", "searcher", "label", "created")
    for c in configs:
        table.add_row(
            c.name,
            str(c.version),
            c.searcher,
            c.label or "",
            c.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    table_console().print(table)


@app.command("show")
def show(
    ref: Annotated[
        str, typer.Argument(help="NAME (its current version), NAME@latest or NAME@VERSION.")
    ],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """One config version: searcher, parameters (placeholders unexpanded), label, hash."""
    import json

    store = open_store(db, read_only=True)
    info = store.config_version(ref)
    if json_output:
        print_json(info.to_dict())
        return
    typer.echo(f"{info.name}@{info.version}  searcher={info.searcher}  label={info.label or '-'}")
    if info.current:
        typer.echo("current  yes")
    else:
        current = store.config_version(info.name).version
        typer.echo(f"current  no: {info.name}@{current} is current")
    typer.echo(f"hash     {info.content_hash}")
    typer.echo(f"created  {info.created_at.isoformat()}")
    typer.echo(
        "params   " + json.dumps(info.params, indent=2, sort_keys=True).replace("\n", "\n         ")
    )


@app.command("kinds")
def kinds(json_output: JsonOption = False) -> None:
    """The searcher kinds and their parameters."""
    from evalplat.searchers import SEARCHERS

    if json_output:
        print_json(
            [
                {
                    "name": k.name,
                    "description": k.description,
                    "params": [
                        {"name": p.name, "type": p.type, "default": p.default, "help": p.help}
                        for p in k.params
                    ],
                }
                for k in SEARCHERS.values()
            ]
        )
        return
    for kind in SEARCHERS.values():
        typer.echo(f"{kind.name}: {kind.description}")
        for p in kind.params:
            default = "" if p.default is None else f" (default {p.default!r})"
            typer.echo(f"  {p.name} [{p.type}]{default}: {p.help}")
