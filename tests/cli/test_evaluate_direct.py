"""``evalplat evaluate`` without Typer: every command line the direct parser accepts means what
it means to Typer, everything else goes to Typer, and the console script runs a plain
evaluation without importing Typer, pydantic or Rich."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.main import get_command
from typer.testing import CliRunner

from evalplat.cli import app
from evalplat.cli.evaluate_direct import EvaluateOptions, main, parse

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
QRELS, RUN = str(DATA / "edge.qrels"), str(DATA / "edge.run")

TOKENS = [
    "--qrels", "q.txt", "--run", "r.txt", "--qrels=a.txt", "--run=b.txt", "-m", "AP", "-mP@5",
    "--metric", "--metric=nDCG@10", "--format", "trec", "json", "--format=csv", "--format=xml",
    "-q", "--per-query", "--skip-missing", "--exclude-no-relevant", "--help", "-h", "--", "-",
    "", "--qrels=", "-x", "--runs", "extra",
]  # fmt: skip


def typer_options(args: list[str]) -> EvaluateOptions | None:
    """What Typer's own parser makes of ``evalplat evaluate ARGS``, or None if it refuses."""
    command = get_command(app).commands["evaluate"]  # type: ignore[attr-defined]
    try:
        with command.make_context("evaluate", list(args)) as context:
            params: dict[str, Any] = context.params
    except Exception:  # a usage error, or --help's exit
        return None
    return EvaluateOptions(
        qrels=params["qrels"],
        run=params["run"],
        metrics=tuple(params["metric"] or ()),
        per_query=params["per_query"],
        output=params["output"],
        skip_missing=params["skip_missing"],
        exclude_no_relevant=params["exclude_no_relevant"],
    )


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=9))
def test_whatever_the_direct_parser_accepts_typer_reads_the_same(args: list[str]) -> None:
    direct = parse(args)
    if direct is not None:
        assert typer_options(args) == direct


@pytest.mark.parametrize(
    "args",
    [
        ["--qrels", "q", "--run", "r"],
        ["--run=r", "-q", "--qrels=q", "-mAP", "--metric", "P@5", "--format", "trec"],
        ["--qrels", "q", "--run", "r", "--skip-missing", "--exclude-no-relevant", "--per-query"],
    ],
)
def test_plain_command_lines_are_read_directly(args: list[str]) -> None:
    assert parse(args) is not None
    assert parse(args) == typer_options(args)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["--qrels", "q", "--run", "r", "-h"],
        ["--qrels", "q"],
        ["--qrels", "q", "--qrels", "p", "--run", "r"],
        ["--qrels", "q", "--run", "r", "--format", "xml"],
        ["--qrels", "--run", "r"],
        ["--qrels", "q", "--run", "r", "extra"],
        ["--qrels", "q", "--run", "r", "-m"],
        ["--qrels", "q", "--run", "r", "-q", "-q"],
        ["--qrels=", "--run", "r"],
        ["--qrels", "q", "--run", "r", "--"],
    ],
)
def test_anything_else_is_left_to_typer(args: list[str]) -> None:
    assert parse(args) is None


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--format", "trec", "--per-query", "-mmap", "-m", "P_5", "-m", "num_rel_ret"],
        ["--format=json", "-q", "-m", "AP", "-m", "P@5"],
        ["--format", "csv", "--skip-missing", "--exclude-no-relevant"],
        ["-m", "nDCG@10", "-m", "no-such-metric"],
    ],
)
def test_both_paths_print_the_same(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    full = ["--qrels", QRELS, "--run", RUN, *args]
    code = main(full)
    direct = capsys.readouterr()
    through_typer = CliRunner().invoke(app, ["evaluate", *full])
    assert code == through_typer.exit_code
    assert direct.out == through_typer.stdout
    assert direct.err == through_typer.stderr


def test_a_missing_file_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--qrels", QRELS, "--run", str(DATA / "no-such.run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "no-such.run" in err


def test_the_console_script_evaluates_without_typer_pydantic_or_rich() -> None:
    # the command leaves without the interpreter's teardown, so what it imported is read from
    # Python's own import log, written as each module loads
    args = ["evaluate", "--qrels", QRELS, "--run", RUN, "--format", "trec", "-m", "map"]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evalplat", *args],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "numpy" in imported  # the log is read: the engine's own imports are in it
    assert imported & {"typer", "pydantic", "rich"} == set()
    assert done.stdout.startswith("map ")


def test_the_console_script_leaves_its_output_whole_and_its_exit_code() -> None:
    """Leaving without the teardown flushes first: every line of a per-query table arrives
    through a pipe, and an error's exit code is the command's."""
    args = ["evaluate", "--qrels", QRELS, "--run", RUN, "--format", "trec", "-m", "map", "-q"]
    done = subprocess.run([sys.executable, "-m", "evalplat", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("map") and "\tall\t" in lines[-1]
    topics = {line.split()[0] for line in Path(QRELS).read_text().splitlines() if line.strip()}
    assert len(lines) == len(topics) + 1  # one line a topic, then the mean
    missing = subprocess.run(
        [sys.executable, "-m", "evalplat", "evaluate", "--qrels", QRELS, "--run", "no-such.run"],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: ") and "no-such.run" in missing.stderr


def test_help_still_comes_from_typer() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evalplat", "evaluate", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0
    assert "--exclude-no-relevant" in done.stdout and "Usage" in done.stdout
