"""Options and helpers shared by the command modules."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from pathlib import Path

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
# how every command that takes a run names it (see evalplat.store.run_rows.resolve_run)
RUN_REF = (
    "a run id (12 or #12), CONFIG@latest, CONFIG@baseline or CONFIG@VERSION (the latest "
    "complete run of that config version)"
)


def run_ref_note(ref: str) -> str:
    """`` (docs-bm25@1: the latest complete run of config version 1)`` when ``ref`` named a
    config version rather than the run: says which run ``@N`` picked. Empty otherwise."""
    name, sep, version = ref.strip().rpartition("@")
    if not sep or not version.isdigit():
        return ""
    return f" ({name}@{version}: the latest complete run of config version {version})"


_open_stores: list[Store] = []


def open_store(
    db: str | None, *, check: bool = True, init: bool = False, project_file: Path | None = None
) -> Store:
    """Open the store at the resolved database URL, checking that its schema is current.

    ``check=False`` skips the schema check (for the migration commands); ``init=True`` creates
    or upgrades the schema; ``project_file`` is the project whose ``[database] url`` counts
    (default: ./evalplat.toml). The store is closed when the command ends (``close_stores``).
    """
    from evalplat.store import Store

    store = (
        Store.init(db, project_file=project_file)
        if init
        else Store.open(db, project_file=project_file, check=check)
    )
    _open_stores.append(store)
    return store


def close_stores() -> None:
    """Release the connections of every store a command opened."""
    while _open_stores:
        _open_stores.pop().close()


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (dates and paths as strings)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


def echo_err(message: str) -> None:
    """A one-line note on stderr (warnings, 'already exists' notices)."""
    typer.echo(message, err=True)
