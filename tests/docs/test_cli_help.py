"""Every command and option explains itself in `--help`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from typer.main import get_command

from evalplat.cli import app


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, (*path, name))


def test_every_command_has_help_text() -> None:
    missing = [" ".join(p) for p, c in walk(get_command(app)) if p and not (c.help or "").strip()]
    assert missing == []


def test_every_option_has_help_text() -> None:
    missing = []
    for path, command in walk(get_command(app)):
        for param in getattr(command, "params", []):
            is_option = param.param_type_name == "option"
            if is_option and not (getattr(param, "help", None) or "").strip():
                missing.append(f"{' '.join(path)} {param.opts[0]}")
    assert missing == []
