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


PROJECT_FOUND = [
    ("[testsets]", "name", '"a\\u0001b"'),
    ("[testsets]", "format", '"xml"'),
    ("[configs]", "name", '"a@b"'),
    ("[configs]", "label", f'"{"x" * 201}"'),
    ("[configs]", "depth", "100001"),
    ("[configs]", "concurrency", "1001"),
    ("[configs]", "depth", "9" * 4301),
    ("[gates]", "max_drop", "true"),
    ("[gates]", "max_drop", "inf"),
    ("[gates]", "max_relative_drop", "nan"),
    ("[gates]", "consecutive", "true"),
    ("[gates]", "consecutive", "2147483648"),
    ("[targets]", "max_slide", "inf"),
    ("[targets]", "consecutive", "2147483648"),
    ("online", "min_sessions", "2147483648"),
    ("online", "retire_after_days", "2147483648"),
    ("retention", "keep_results_days", "true"),
    ("database", "url", '"no-scheme"'),
]


@pytest.mark.parametrize(("table", "key", "value"), PROJECT_FOUND)
def test_project_values_found_accepted_are_refused_at_their_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, table: str, key: str, value: str
) -> None:
    from .test_fuzz_project import PLACES, check

    for name, text in (("qrels.txt", "q1 0 d1 1\n"), ("queries.tsv", "q1\tone\t1\thead\n"),
                       ("docs.jsonl", '{"id": "d1", "text": "one"}\n')):  # fmt: skip
        (tmp_path / name).write_text(text, encoding="utf-8")
    n = next(n for n, t, k in PLACES if t.strip("[]") == table.strip("[]") and k == key)
    check(cli, db_url, tmp_path, n, table, key, value)


@pytest.mark.parametrize("config", ["\udcff", "c\x00"])
def test_a_reference_that_is_not_text_is_refused(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, config: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    refused("found", cli, db_url, "import-run", str(run), "--config", config, "--testset", "t",
            where=["config reference"])  # fmt: skip


@pytest.mark.parametrize("tags", ["{}", '""', "false", "0"])
def test_json_query_tags_of_a_wrong_type_are_refused(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, tags: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "text": "one", "tags": ' + tags + "}\n", encoding="utf-8")
    refused("found", cli, db_url, "testset", "import", "t", "--qrels", str(qrels), "--queries",
            str(queries), where=["q.jsonl line 1", "tags"])  # fmt: skip
