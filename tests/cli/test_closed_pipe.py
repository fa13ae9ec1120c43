"""A reader that leaves the pipe early (``evalplat compare A B | head -3``) does not change a
command's exit code: the command ends as it would have, quietly, with its own code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .world import Files, populate, write_files


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path
) -> tuple[str, Files, list[str]]:
    """A database with prod's baseline and a worse candidate run (``tests/cli/world.py``)."""
    folder = tmp_path_factory.mktemp("closed-pipe")
    shutil.copyfile(sqlite_template, folder / "evalplat.db")
    url = f"sqlite:///{folder / 'evalplat.db'}"
    files = write_files(folder / "files")
    runs, _ = populate(url, files)
    return url, files, [str(run) for run in runs[:2]]


def _with_reader_gone(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``evalplat ARGS`` writing into a pipe whose reader has already left."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "evalplat", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("compare", "BASELINE", "CANDIDATE"), 0),
        (("compare", "BASELINE", "CANDIDATE", "--fail-on-regression"), 1),
        (("runs", "list"), 0),
        (("history", "prod"), 0),
        (("alerts", "list", "--json"), 0),
    ],
    ids=["compare", "compare-gating", "runs-list", "history", "json"],
)
def test_a_closed_pipe_leaves_the_commands_own_exit_code(
    world: tuple[str, Files, list[str]], args: tuple[str, ...], code: int
) -> None:
    url, _, (baseline, candidate) = world
    named = [{"BASELINE": baseline, "CANDIDATE": candidate}.get(a, a) for a in args]
    done = _with_reader_gone(*named, "--db", url)
    assert (done.returncode, done.stderr.decode()) == (code, "")


def test_a_direct_evaluate_into_a_closed_pipe_exits_0(
    world: tuple[str, Files, list[str]],
) -> None:
    _, files, _ = world
    done = _with_reader_gone("evaluate", "--qrels", str(files.qrels), "--run", str(files.good))
    assert (done.returncode, done.stderr.decode()) == (0, "")
