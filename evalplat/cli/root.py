"""The root of the ``evalplat`` command: the Typer group, its error handling, and the one
command module a command line loads.

Every library error reaches the user through one handler (``EvalplatGroup.invoke``) that prints
one line on stderr and exits with the error's code; a database error that reaches it unnamed
(SQLAlchemy's or a driver's) is translated by :mod:`evalplat.db.errors` first. Command
modules import heavy libraries inside their functions so that ``evalplat --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any, NoReturn

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup

from evalplat.cli.common import close_stores
from evalplat.errors import EvalplatError


class EvalplatGroup(TyperGroup):
    """Root command group that maps ``EvalplatError`` to its exit code and a one-line message,
    and the parser's usage errors to one line ``error: COMMAND: message`` and exit 2."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        _plain_help(self)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except ClickException as error:
            _usage_error(error)

    def invoke(self, ctx: Any) -> Any:  # the vendored click Context
        try:
            return super().invoke(ctx)
        except ClickException as error:
            _usage_error(error)
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


HELP_OPTION_NAMES = ["-h", "--help"]


def _usage_error(error: ClickException) -> NoReturn:
    """One line on stderr for what the parser refused (an unknown option or command, a missing
    argument, a value of the wrong type), instead of Usage / Try / a boxed Error; ``-h`` has the
    usage. A command group called without a command still prints its help."""
    if isinstance(error, NoArgsIsHelpError):
        raise error
    message = " ".join(error.format_message().split())
    message = message[:1].lower() + message[1:]
    context = getattr(error, "ctx", None)
    path = context.command_path.split(" ", 1)[1:] if context is not None else []
    typer.echo(f"error: {path[0]}: {message}" if path else f"error: {message}", err=True)
    raise typer.Exit(error.exit_code)


def _plain_help(command: Any) -> None:
    """Help texts are plain prose, shown as written. A bracket in them (``nDCG@10[tail]``,
    ``[[targets]]``) is not read as Rich markup, which would swallow it; a paragraph's line
    breaks (a docstring's, at the source's width) are spaces, so the help is wrapped at the
    terminal's width and never mid-sentence; a flag shows no ``<bool>`` value, since it takes
    none. Done once per command tree, when a command line is parsed, so that the texts
    themselves (and docs/cli.md) stay as written."""
    from rich.markup import escape

    if getattr(command, "_help_plain", False):
        return
    command._help_plain = True
    for attribute in ("help", "short_help", "epilog"):
        text = getattr(command, attribute, None)
        if text:
            setattr(command, attribute, escape(_reflowed(text)))
    # the help option is made on first use, with the names the root's context gives
    made = command.get_help_option(SimpleNamespace(help_option_names=HELP_OPTION_NAMES))
    for param in [*command.params, *([made] if made is not None else [])]:
        if getattr(param, "help", None):
            param.help = escape(_reflowed(param.help))
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub)


def _reflowed(text: str) -> str:
    """``text`` with each paragraph on one line (paragraphs apart by a blank line; what follows
    a form feed, Click's end of the help, is kept as it is)."""
    import inspect

    shown, sep, rest = inspect.cleandoc(text).partition("\f")
    paragraphs = [" ".join(p.split()) for p in shown.split("\n\n") if p.strip()]
    return "\n\n".join(paragraphs) + sep + rest


# (module, sub-app name or None when the module adds top-level commands to the root)
_COMMAND_MODULES: list[tuple[str, str | None]] = [
    ("evalplat.cli.db", None),
    ("evalplat.cli.testset", "testset"),
    ("evalplat.cli.config", "config"),
    ("evalplat.cli.evaluate", None),
    ("evalplat.cli.metrics", "metrics"),
    ("evalplat.cli.run", None),
    ("evalplat.cli.runs", "runs"),
    ("evalplat.cli.compare", None),
    ("evalplat.cli.history", None),
    ("evalplat.cli.alerts", "alerts"),
    ("evalplat.cli.nightly", None),
    ("evalplat.cli.report", "report"),
    ("evalplat.cli.demo", None),
    ("evalplat.cli.judge", "judge"),
    ("evalplat.cli.events", "events"),
    ("evalplat.cli.online", "online"),
    ("evalplat.cli.queries", None),
    ("evalplat.cli.leaderboard", None),
    ("evalplat.cli.sweep", None),
    ("evalplat.cli.rate", "rate"),
    ("evalplat.cli.gates", "gates"),
]

# The module behind each name the root accepts, so that a command line loads and converts the
# one module it names (tests/cli/test_entry_point.py keeps this in step with the modules)
MODULE_OF: dict[str, str] = {
    **{name: "evalplat.cli.db" for name in ("init", "db")},
    **{name: "evalplat.cli.run" for name in ("run", "import-run", "rescore")},
    **{name: "evalplat.cli.compare" for name in ("compare", "unjudged", "baseline")},
    **{
        name: f"evalplat.cli.{name}"
        for name in ("evaluate", "nightly", "demo", "queries", "leaderboard", "sweep", "history")
    },
    **{sub: module for module, sub in _COMMAND_MODULES if sub is not None},
}


def _print_version(value: bool) -> None:
    if value:
        from evalplat import __version__

        typer.echo(__version__)
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Regression tracking for search relevance."""


def build_app(modules: Iterable[str] | None = None) -> typer.Typer:
    """The root command with the commands of every module, or of ``modules`` only."""
    root = typer.Typer(
        name="evalplat",
        cls=EvalplatGroup,
        help="Regression tracking for search relevance.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        context_settings={"help_option_names": HELP_OPTION_NAMES},
    )
    root.callback()(_root)
    wanted = None if modules is None else set(modules)
    for module_name, sub_name in _COMMAND_MODULES:
        if wanted is not None and module_name not in wanted:
            continue
        module = importlib.import_module(module_name)
        if sub_name is None:
            module.register(root)
        else:
            root.add_typer(module.app, name=sub_name)
    return root


app: typer.Typer  # every command; built on first use (``from evalplat.cli import app``)


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        built = globals()["app"] = build_app()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point. A command line that names a command builds the root with that
    command's module only: importing the others and converting their options for Click would
    slow every ``evalplat evaluate`` (docs/performance.md). Anything else (``--help``, a typo)
    gets every command."""
    first = sys.argv[1] if len(sys.argv) > 1 else ""
    command = build_app([MODULE_OF[first]]) if first in MODULE_OF else build_app()
    sys.exit(command())
