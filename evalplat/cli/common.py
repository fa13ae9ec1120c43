"""Options and helpers shared by the command modules."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from evalplat.store import Store

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL (default: $EVALPLAT_DATABASE_URL, then the project file, "
        "then sqlite:///evalplat.db).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def open_store(db: str | None) -> Store:
    """Open the store at the resolved database URL, checking that its schema is current."""
    from evalplat.store import Store

    return Store.open(db)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (dates and paths as strings)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


def echo_err(message: str) -> None:
    """A one-line note on stderr (warnings, 'already exists' notices)."""
    typer.echo(message, err=True)
