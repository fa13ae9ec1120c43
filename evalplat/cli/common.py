"""Options and helpers shared by the command modules."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalplat.errors import InputError, OperationalError

if TYPE_CHECKING:
    from rich.console import Console

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
    "a run id (12 or #12), CONFIG@baseline, CONFIG@latest or CONFIG@VERSION (the latest "
    "complete run of the config's current version, or of that version)"
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
    db: str | None,
    *,
    check: bool = True,
    init: bool = False,
    project_file: Path | None = None,
    read_only: bool = False,
) -> Store:
    """Open the store at the resolved database URL, checking that its schema is current.

    ``check=False`` skips the schema check (for the migration commands); ``init=True`` creates
    or upgrades the schema; ``project_file`` is the project whose ``[database] url`` counts
    (default: ./evalplat.toml); ``read_only=True`` for the commands docs/cli.md lists as
    reading only, which then cannot write by mistake. The store is closed when the command
    ends (``close_stores``).
    """
    from evalplat.store import Store

    store = (
        Store.init(db, project_file=project_file)
        if init
        else Store.open(db, project_file=project_file, check=check, read_only=read_only)
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


# A piped table (a CI log, a file) has no terminal to fit: wide enough that no name is cut.
PIPE_WIDTH = 10_000


def table_console(*, stderr: bool = False, highlight: bool = True) -> Console:
    """The Rich console every command prints its tables and lines through: the terminal's
    width on a terminal; in a pipe or a CI log ``PIPE_WIDTH``, so a long config or metric name
    is printed whole, never cut to ``bm25-an…``. ``$COLUMNS`` still wins when set.

    Markup is off: what is printed is names, notes and labels a user wrote or the store keeps
    (``nDCG@10 [segment tail]``, a note ``[online] arm ended``), shown as written, never read
    as ``[style]`` tags that would swallow the brackets."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() or os.environ.get("COLUMNS") else PIPE_WIDTH
    return Console(stderr=stderr, highlight=highlight, markup=False, width=width)


def check_output_path(path: Path, option: str, *, make_folder: bool = False) -> Path:
    """Refuse, before anything is stored, an output file that cannot be written: its folder
    must exist and be a writable directory, and the path must not be a directory itself.

    ``make_folder`` is for the HTML pages, whose writers create their folder: a missing one
    is accepted when it can be created (as :func:`check_output_folder` says)."""
    parent = path.parent
    problem = None
    if path.is_dir():
        problem = "a folder; name the file to write"
    elif make_folder and not parent.exists():
        problem = _creatable(parent)
    elif not parent.exists():
        problem = f"folder {parent} does not exist"
    elif not parent.is_dir():
        problem = f"{parent} is not a folder"
    elif path.exists() and not os.access(path, os.W_OK):
        problem = "the file is not writable"
    else:
        problem = _unwritable(parent)
    if problem:
        raise InputError(f"{option} {path}: {problem}")
    return path


def check_output_folder(path: Path, option: str) -> Path:
    """Refuse, before anything is stored, an output folder that cannot be written or created:
    an existing path must be a writable directory; a missing one is created later, inside the
    nearest existing folder, which must be a writable directory."""
    if path.exists():
        problem = _unwritable(path) if path.is_dir() else "not a folder"
    else:
        problem = _creatable(path)
    if problem:
        raise InputError(f"{option} {path}: {problem}")
    return path


def _creatable(folder: Path) -> str | None:
    """Why the missing ``folder`` cannot be created, or None."""
    ancestor = folder.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"cannot create it, {ancestor} is not a folder"
    problem = _unwritable(ancestor)
    return None if problem is None else f"cannot create it, {problem}"


def _unwritable(folder: Path) -> str | None:
    """Why files cannot be created in ``folder``, or None. An empty file is made and removed:
    permission bits do not tell about a read-only mount, ``/proc`` or an ACL, and for root
    they always say yes."""
    import tempfile

    try:
        handle, name = tempfile.mkstemp(prefix=".evalplat-", dir=folder)
    except OSError as error:
        return f"folder {folder} is not writable ({error.strerror or error})"
    os.close(handle)
    os.unlink(name)
    return None


@contextlib.contextmanager
def writing(path: Path, option: str) -> Iterator[None]:
    """Turn a failure while writing ``path`` (a full disk, permissions changed meanwhile) into
    one line and exit 3: what is stored stays stored, the file is not written."""
    try:
        yield
    except OSError as error:
        if error.errno == errno.EPIPE:  # standard output closed early (``| head``): not ours
            raise
        reason = error.strerror or str(error)
        raise OperationalError(f"{option} {path}: could not write it: {reason}") from None
