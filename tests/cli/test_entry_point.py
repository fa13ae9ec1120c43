"""The console script's entry point: ``--version`` answers before the CLI is imported, and a
command line loads the one command module it names."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from evalplat import __version__
from evalplat.cli import MODULE_OF


def test_version_is_printed_without_importing_the_cli() -> None:
    probe = (
        "import sys; sys.argv = ['evalplat', '--version']; "
        "from evalplat.__main__ import main; main(); "
        "print(sorted(m for m in ('typer', 'evalplat.cli', 'numpy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [__version__, "[]"]


def test_python_dash_m_evalplat_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evalplat", "metrics", "list", "--json"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert '"name": "nDCG"' in done.stdout


def _module_of_every_root_name() -> dict[str, set[str]]:
    from typer.main import get_command

    from evalplat.cli import app

    def modules(command: Any) -> set[str]:
        if hasattr(command, "commands"):
            return set().union(*(modules(sub) for sub in command.commands.values()))
        return {command.callback.__module__}

    return {name: modules(cmd) for name, cmd in get_command(app).commands.items()}


def test_the_module_map_names_the_module_of_every_command() -> None:
    found = _module_of_every_root_name()
    assert {name: {module} for name, module in MODULE_OF.items()} == found


def _after_metrics_list(report: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """stdout of ``evalplat metrics list --json`` run in a fresh process, and the last line of
    its stderr, where ``report`` (Python, in that process, after the command) prints."""
    probe = (
        "import sys; sys.argv = ['evalplat', 'metrics', 'list', '--json']\n"
        "from evalplat.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"{report}\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    return done.stdout, done.stderr.strip().splitlines()[-1]


def test_a_command_line_loads_only_the_module_it_names() -> None:
    stdout, loaded = _after_metrics_list(
        "print(sorted(m for m in sys.modules if m.startswith('evalplat.cli.')), file=sys.stderr)"
    )
    assert '"name": "nDCG"' in stdout
    assert loaded == "['evalplat.cli.common', 'evalplat.cli.metrics', 'evalplat.cli.root']"


@pytest.mark.parametrize("args", [["--help"], ["evalute"]])
def test_help_and_a_mistyped_command_still_see_every_command(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "evalplat", *args], capture_output=True, text=True)
    shown = done.stdout + done.stderr
    if args == ["--help"]:
        assert done.returncode == 0 and all(f" {name} " in shown for name in MODULE_OF)
    else:
        assert done.returncode == 2 and "Did you mean 'evaluate'?" in shown


@pytest.mark.parametrize(("given", "expected"), [(None, "False"), ("1", "True")])
def test_a_command_asks_numpy_for_no_huge_pages_unless_the_user_did(
    given: str | None, expected: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if given is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = given
    _, advised = _after_metrics_list(
        "import numpy._core.multiarray as multiarray\n"
        "print(multiarray._get_madvise_hugepage(), file=sys.stderr)",
        env,
    )
    assert advised == expected
