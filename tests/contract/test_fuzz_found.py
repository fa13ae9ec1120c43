"""Inputs the bad-input suite found accepted, pinned so that every run tries them again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .fuzzkit import refused


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("q1 0 d1 0x1\nq2 0 d2 1\n", 1),  # space-delimited tier
        ("q1\t0\td1\t0X1F\nq2\t0\td2\t1\n", 1),  # tab-delimited tier
        ("q1 0 d1 1\nq2  0 d2 0x1\n", 2),  # whitespace-split tier (a doubled space)
    ],
)
def test_a_hexadecimal_trec_grade_is_refused(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, content: str, line: int
) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(content, encoding="utf-8")
    refused("found", cli, db_url, "testset", "import", "t", "--qrels", str(path),
            where=[f"qrels.txt line {line}", "not an integer"])  # fmt: skip


@pytest.mark.parametrize("rule", ["source:" + "s" * 60, "source:a\x01", "source: alice"])
def test_a_grade_rule_naming_an_impossible_source_is_refused(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, rule: str
) -> None:
    path = tmp_path / "raters.csv"
    path.write_text("query_id,doc_id,grade,source\nq1,d1,1,alice\nq1,d1,2,bob\n")
    refused("found", cli, db_url, "testset", "import", "t", "--qrels", str(path),
            "--grades", rule, where=["grade rule"])  # fmt: skip
