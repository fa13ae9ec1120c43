"""What the parser refuses is one line ``error: COMMAND: message`` and exit 2; ``--help`` shows
every help text as written, brackets included (they are not Rich markup); a table printed into
a pipe keeps whole names."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from evalplat.cli import app
from evalplat.store import Store

EVALPLAT = str(Path(sys.executable).with_name("evalplat"))


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["compare", "--nosuch"], "error: compare: no such option: --nosuch"),
        (["compare", "a"], "error: compare: missing argument 'candidate'."),
        (["testset", "import"], "error: testset import: missing argument 'name'."),
        (["compare", "a", "b", "--alpha", "x"], "error: compare: invalid value for '--alpha': "),
        (["--nosuch"], "error: no such option: --nosuch"),
        (["evalute"], "error: no such command 'evalute'. Did you mean 'evaluate'?"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], line: str) -> None:
    done = subprocess.run([EVALPLAT, *args], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(line), done.stderr


def test_a_group_without_a_command_still_prints_its_help() -> None:
    result = CliRunner().invoke(app, ["testset"])
    assert result.exit_code == 2  # as Click does: no command given
    assert "Usage: evalplat testset" in result.stdout and "import" in result.stdout


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def _flat(text: str) -> str:
    """Rendered help without the panels' borders, one space between words."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _help_texts(command: Any) -> list[str]:
    texts = [p.strip() for p in (command.help or "").split("\f")[0].split("\n\n") if p.strip()]
    texts += [param.help for param in command.params if getattr(param, "help", None)]
    return [" ".join(text.split()) for text in texts]


def test_every_help_text_is_shown_as_written_brackets_included() -> None:
    runner = CliRunner()
    bracketed = 0
    for path, command in _commands(get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "2000"})
        assert result.exit_code == 0, (path, result.stderr)
        shown = _flat(result.stdout)
        for text in _help_texts(command):
            bracketed += "[" in text
            assert text in shown, (path, text)
    assert bracketed >= 5  # [[targets]], nDCG@10[tail], [1,2], ...


def test_help_paragraphs_are_wrapped_at_the_terminal_and_flags_show_no_value() -> None:
    """A docstring's line breaks are not the terminal's: at 2000 columns every paragraph of a
    command's help is one line; a flag takes no value, so it shows no ``<bool>``."""
    runner = CliRunner()
    for path, command in _commands(get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "2000"})
        lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
        for paragraph in (command.help or "").split("\f")[0].split("\n\n"):
            text = " ".join(paragraph.split())
            assert any(text in line for line in lines), (path, text)
        assert "<bool>" not in result.stdout, path
        assert "-h" in runner.invoke(app, [*path, "-h"]).stdout


def test_the_help_texts_themselves_stay_plain() -> None:
    CliRunner().invoke(app, ["nightly", "--help"])
    command = get_command(app)
    texts = [t for _, c in _commands(command) for t in _help_texts(c)]
    assert not [t for t in texts if "\\[" in t]


def test_a_table_in_a_pipe_keeps_whole_names(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'evalplat.db'}"
    names = [f"docs-bm25-{'and-' * 12}{n}" for n in range(2)]
    with Store.init(url) as store:
        for name in names:
            store.add_config(name, "builtin", label="a label that is long enough " * 3)
    env = {k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [EVALPLAT, "config", "list", "--db", url], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in names), done.stdout
    assert "…" not in done.stdout
