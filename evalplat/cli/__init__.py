"""The ``evalplat`` command: a thin Typer layer over the Python API, one module per noun.

Every library error reaches the user through one handler (``EvalplatGroup.invoke``) that prints
one line on stderr and exits with the error's code; a database error that reaches it unnamed
(SQLAlchemy's or a driver's) is translated by :mod:`evalplat.db.errors` first. Command
modules import heavy libraries inside their functions so that ``evalplat --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from evalplat.cli.common import close_stores
from evalplat.errors import EvalplatError


class EvalplatGroup(TyperGroup):
    """Root command group that maps ``EvalplatError`` to its exit code and a one-line message."""

    def invoke(self, ctx: Any) -> Any:  # the vendored click Context
        try:
            return super().invoke(ctx)
        except EvalplatError as error:
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(error.exit_code) from None
        except Exception as error:
            # A database failure the library did not name (a lock, a full disk, a dropped
            # connection in the middle of a write) is still one line and exit 3, never a
            # traceback; anything else is a bug and keeps its traceback.
            from evalplat.db.errors import is_database_error, translate

            if not is_database_error(error):
                raise
            mapped = translate(error)
            typer.echo(f"error: {mapped}", err=True)
            raise typer.Exit(mapped.exit_code) from None
        finally:
            close_stores()


app = typer.Typer(
    name="evalplat",
    cls=EvalplatGroup,
    help="Regression tracking for search relevance.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# (module, sub-app name or None when the module adds top-level commands to ``app``)
_COMMAND_MODULES: list[tuple[str, str | None]] = [
    ("evalplat.cli.db", None),
    ("evalplat.cli.testset", "testset"),
    ("evalplat.cli.config", "config"),
    ("evalplat.cli.evaluate", None),
    ("evalplat.cli.metrics", "metrics"),
    ("evalplat.cli.run", None),
    ("evalplat.cli.compare", None),
    ("evalplat.cli.alerts", "alerts"),
    ("evalplat.cli.nightly", None),
    ("evalplat.cli.report", "report"),
    ("evalplat.cli.demo", None),
    ("evalplat.cli.judge", "judge"),
    ("evalplat.cli.events", "events"),
    ("evalplat.cli.online", "online"),
    ("evalplat.cli.queries", None),
]


def _register() -> None:
    for module_name, sub_name in _COMMAND_MODULES:
        module = importlib.import_module(module_name)
        if sub_name is None:
            module.register(app)
        else:
            app.add_typer(module.app, name=sub_name)


def _print_version(value: bool) -> None:
    if value:
        from evalplat import __version__

        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Regression tracking for search relevance."""


_register()


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())
