"""Numbers given on the command line are finite, in range and written in ASCII digits; a
refusal is one line, exit 2, and the database is left as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Cli = Callable[..., Any]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("queries", "c", "-t", "t", "--good", "nan"), "--good must be a finite number"),
        (("queries", "c", "-t", "t", "--floor", "-inf"), "--floor must be a finite number"),
        (("queries", "c", "-t", "t", "--k", "0"), "--k must be at least 1, got 0"),
        (("queries", "c", "-t", "t", "--k", "100001"), "--k must be at most 100000"),
        (("queries", "c", "-t", "t", "--target", "nDCG@10>=1_0"), "'1_0' is not a finite number"),
        (("compare", "a@1", "b@1", "--seed", "-1"), "--seed must be from 0 to 4294967295, got -1"),
        (("compare", "a@1", "b@1", "--seed", str(2**32)), "--seed must be from 0 to 4294967295"),
        (
            ("runs", "show", "1", "--target", "nDCG@10>=\u0660.\u0665"),
            "is not a finite number (ASCII",
        ),
        (("run", "c@", "-t", "t"), "invalid config reference 'c@': the version after '@'"),
    ],
)
def test_a_number_out_of_range_is_one_line_and_exit_2(
    cli: Cli, db_url: str, args: tuple[str, ...], message: str
) -> None:
    result = cli(*args, "--db", db_url)
    assert result.exit_code == 2, result.stdout
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and message in line, line


def _files(folder: Path) -> tuple[Path, Path]:
    qrels = folder / "qrels.csv"
    qrels.write_text("query_id,doc_id,grade,source\nq1,d1,1,human\nq1,d1,3,llm:x\nq2,d2,1,human\n")
    queries = folder / "queries.tsv"
    queries.write_text("q1\twing\nq2\tlayer\n", encoding="utf-8")
    return qrels, queries


def _versions(cli: Cli, db_url: str) -> list[Any]:
    listed: list[Any] = json.loads(cli("testset", "list", "--db", db_url, "--json").stdout)
    return listed


def test_a_grade_rule_naming_a_source_no_judgment_has_is_refused(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    qrels, queries = _files(tmp_path)
    base = ("testset", "import", "t", "--qrels", str(qrels), "--queries", str(queries))
    result = cli(*base, "--grades", "source:humna", "--db", db_url)
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert "--grades source:humna: no judgment has the source 'humna' (sources: human, llm:x)" in (
        line
    )
    assert _versions(cli, db_url) == []
    assert cli(*base, "--grades", "source:human", "--db", db_url).exit_code == 0


def test_a_grade_rule_given_with_add_may_name_a_source_of_the_stored_judgments(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    qrels, queries = _files(tmp_path)
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--queries", str(queries),
               "--db", db_url).exit_code == 0  # fmt: skip
    reviewed = tmp_path / "reviewed.csv"
    reviewed.write_text("query_id,doc_id,grade,source\nq2,d2,2,review\n", encoding="utf-8")
    add = ("testset", "import", "t", "--qrels", str(reviewed), "--add", "--db", db_url)
    refused = cli(*add, "--grades", "source:reveiw")
    assert refused.exit_code == 2
    assert "no judgment has the source 'reveiw' (sources: human, llm:x, review)" in refused.stderr
    assert [v["version"] for v in _versions(cli, db_url)] == [1]
    assert cli(*add, "--grades", "source:human").exit_code == 0
    assert [v["version"] for v in _versions(cli, db_url)] == [2]


def test_add_names_the_file_and_line_of_a_query_the_test_set_does_not_have(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    qrels, queries = _files(tmp_path)
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--queries", str(queries),
               "--db", db_url).exit_code == 0  # fmt: skip
    extra = tmp_path / "extra.tsv"
    extra.write_text("q1\t0\td9\t1\nq7\t0\td9\t1\nq8\t0\td9\t1\n", encoding="utf-8")
    result = cli("testset", "import", "t", "--qrels", str(extra), "--format", "trec", "--add",
                 "--db", db_url)  # fmt: skip
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert f"{extra} line 2: query 'q7' is not in the test set (nor are 1 other" in line
    assert [v["version"] for v in _versions(cli, db_url)] == [1]
