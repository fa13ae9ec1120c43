"""``import-run`` and ``evaluate --run``: a valid TREC run with one field made bad is refused
naming the file and the line, and nothing is written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .fuzzkit import (
    BAD_ID,
    BAD_SCORE,
    FUZZ,
    TRIED,
    Field,
    backend,
    corrupt_line,
    one_line_naming,
    refused,
)

TREC_BAD_ID = [v for v in BAD_ID if v and not any(c.isspace() for c in v)]
ROWS = [["q1", "Q0", "d1", "1", "2.5", "r"], ["q1", "Q0", "d2", "2", "1", "r"],
        ["q2", "Q0", "d1", "1", "-0.5", "r"]]  # fmt: skip
FIELDS = [Field(0, TREC_BAD_ID), Field(2, TREC_BAD_ID), Field(4, BAD_SCORE)]


@st.composite
def runs(draw: st.DrawFn) -> tuple[bytes, int]:
    sep = draw(st.sampled_from([" ", "\t"]))
    return corrupt_line(draw, ROWS, FIELDS, sep)


@pytest.fixture
def folder(cli: Callable[..., Any], db_url: str, tmp_path: Path) -> Path:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 2\n", encoding="utf-8")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    return tmp_path


@FUZZ
@given(case=runs())
def test_a_bad_run_field_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, folder: Path, case: tuple[bytes, int]
) -> None:
    content, line = case
    path = folder / "run.txt"
    path.write_bytes(content)
    refused("import-run run.txt", cli, db_url, "import-run", str(path), "--config", "c",
            "--testset", "t", where=["run.txt", f"line {line}"])  # fmt: skip
    TRIED[f"evaluate --run run.txt [{backend(db_url)}]"] += 1
    result = cli("evaluate", "--qrels", str(folder / "qrels.txt"), "--run", str(path))
    one_line_naming(result, "run.txt", f"line {line}")


@FUZZ
@given(
    option=st.sampled_from(["--label", "--config", "--metric"]),
    value=st.sampled_from(["x" * 201, "a\x01", "a\x00", "\ud800", "", "P@" + "1" * 80]),
)
def test_bad_import_run_options_are_refused(
    cli: Callable[..., Any], db_url: str, folder: Path, option: str, value: str
) -> None:
    path = folder / "run.txt"
    path.write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    args = ["import-run", str(path), "--config", "c", "--testset", "t", option, value]
    if option == "--label" and value in ("", "P@" + "1" * 80):
        value = "x" * 201
        args[-1] = value
    refused(f"import-run {option}", cli, db_url, *args)
