"""The console script's entry point answers ``--version`` before the CLI is imported."""

from __future__ import annotations

import subprocess
import sys

from evalplat import __version__


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
