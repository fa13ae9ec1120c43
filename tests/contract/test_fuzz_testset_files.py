"""``testset import``: a valid judgments, queries or documents file with one field made bad is
refused naming the file and the line, and nothing is written (on both databases)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .fuzzkit import (
    BAD_GRADE,
    BAD_ID,
    BAD_SOURCE,
    BAD_TEXT,
    BAD_WEIGHT,
    FUZZ,
    J_BAD_GRADE,
    J_BAD_ID,
    Field,
    corrupt_json_line,
    corrupt_line,
    placed,
    refused,
)

# Ids that stay one field in a whitespace-separated TREC line (others change the field count,
# which is refused too, but names a different problem).
TREC_BAD_ID = [v for v in BAD_ID if v and not any(c.isspace() for c in v)]
ROWS = [["q1", "d1", "1", "human"], ["q1", "d2", "0", "human"], ["q2", "d1", "2", "llm"]]
SOURCES = [["q1", "d1", "1", "alice"], ["q1", "d1", "2", "bob"], ["q2", "d3", "0", "alice"]]


JUDGMENT_KINDS = ["txt", "csv", "tsv", "jsonl", "csv-raters"]


@st.composite
def judgments(draw: st.DrawFn, kind: str) -> tuple[str, bytes, int]:
    if kind == "txt":
        rows = [[q, "0", d, g] for q, d, g, _ in ROWS]
        fields = [Field(0, TREC_BAD_ID), Field(2, TREC_BAD_ID), Field(3, BAD_GRADE)]
        return ("j.txt", *corrupt_line(draw, rows, fields, " "))
    if kind == "jsonl":
        objects = [{"query_id": q, "doc_id": d, "grade": int(g), "source": s}
                   for q, d, g, s in ROWS]  # fmt: skip
        bad = {"query_id": J_BAD_ID, "doc_id": J_BAD_ID, "grade": J_BAD_GRADE,
               "source": [*BAD_SOURCE, 1, [], {}]}  # fmt: skip
        twice = ['{"query_id": "q1", "doc_id": "d9", "grade": 1, "grade": 0}',
                 '{"query_id": "q1", "doc_id": "d9", "doc_id": "d1", "grade": 1}']  # fmt: skip
        return ("j.jsonl", *corrupt_json_line(draw, objects, bad, twice))
    sep = "\t" if kind == "tsv" else ","
    ids = [v for v in BAD_ID if sep not in v and "\n" not in v and "\u2028" not in v]
    fields = [Field(0, ids), Field(1, ids), Field(2, BAD_GRADE), Field(3, BAD_SOURCE)]
    rows = SOURCES if kind == "csv-raters" else ROWS
    header = sep.join(["query_id", "doc_id", "grade", "source"])
    return (f"j.{kind[:3]}", *corrupt_line(draw, rows, fields, sep, header))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "q.tsv").write_text("q1\tone\nq2\ttwo\n", encoding="utf-8")
    (tmp_path / "good.txt").write_text("q1 0 d1 1\nq2 0 d2 2\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("kind", JUDGMENT_KINDS)
@FUZZ
@given(data=st.data())
def test_a_bad_judgment_field_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, folder: Path, kind: str, data: st.DataObject
) -> None:
    path, where = placed(folder, data.draw(judgments(kind)))
    refused(f"testset import --qrels ({kind})", cli, db_url, "testset", "import", "t",
            "--qrels", path, where=where)  # fmt: skip


@pytest.mark.parametrize("kind", JUDGMENT_KINDS)
@FUZZ
@given(data=st.data())
def test_a_bad_judgment_added_with_add_is_refused(
    cli: Callable[..., Any], db_url: str, folder: Path, kind: str, data: st.DataObject
) -> None:
    drawn = data.draw(judgments(kind))
    if cli("testset", "import", "t", "--qrels", str(folder / "good.txt"), "--queries",
           str(folder / "q.tsv"), "--db", db_url).exit_code != 0:  # fmt: skip
        raise AssertionError("the base test set does not import")
    path, where = placed(folder, drawn)
    refused(f"testset import --add --qrels ({kind})", cli, db_url, "testset", "import", "t",
            "--add", "--qrels", path, where=where)  # fmt: skip


@st.composite
def queries(draw: st.DrawFn, kind: str) -> tuple[str, bytes, int]:
    rows = [["q1", "one", "1.0", "head"], ["q2", "two words", "2", "tail,head"]]
    if kind == "jsonl":
        objects = [{"id": q, "text": t, "weight": float(w), "tags": g.split(",")}
                   for q, t, w, g in rows]  # fmt: skip
        bad = {"id": J_BAD_ID, "text": [*BAD_TEXT, None, 1, []],
               "weight": [0, -1, "x", True, [], float("inf"), float("nan")],
               "tags": ["a\x01", ["a\x01"], [1], ["t" * 201], {}, "", False, ["\x00"]]}  # fmt: skip
        twice = ['{"id": "q9", "text": "one", "text": "two"}']  # a key named twice
        return ("q.jsonl", *corrupt_json_line(draw, objects, bad, twice))
    sep = "\t" if kind == "tsv" else ","
    ids = [v for v in BAD_ID if sep not in v and "\n" not in v and "\u2028" not in v]
    tags = ["a\x01", "t" * 201, "\x00"]
    fields = [Field(0, ids), Field(1, BAD_TEXT), Field(2, BAD_WEIGHT), Field(3, tags)]
    header = sep.join(["query_id", "text", "weight", "tags"])
    return (f"q.{kind}", *corrupt_line(draw, rows, fields, sep, header))


@pytest.mark.parametrize("kind", ["tsv", "csv", "jsonl"])
@FUZZ
@given(data=st.data())
def test_a_bad_query_field_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, folder: Path, kind: str, data: st.DataObject
) -> None:
    path, where = placed(folder, data.draw(queries(kind)))
    refused(f"testset import --queries ({kind})", cli, db_url, "testset", "import", "t",
            "--qrels", str(folder / "good.txt"), "--queries", path, where=where)  # fmt: skip


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, bytes, int]:
    objects = [{"id": "d1", "title": "A", "text": "one", "year": 1999},
               {"id": "d2", "title": "B", "text": "two", "tags": ["x"]}]  # fmt: skip
    bad = {"id": J_BAD_ID, "title": BAD_TEXT, "text": [*BAD_TEXT, float("nan")],
           "extra": [{"k\x00": 1}, ["\ud800"], float("inf")]}  # fmt: skip
    twice = ['{"id": "d9", "text": "one", "title": "A", "text": "two"}']  # a key named twice
    return ("docs.jsonl", *corrupt_json_line(draw, objects, bad, twice))


@FUZZ
@given(case=documents())
def test_a_bad_document_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, folder: Path, case: tuple[str, bytes, int]
) -> None:
    path, where = placed(folder, case)
    refused("testset import --docs", cli, db_url, "testset", "import", "t",
            "--qrels", str(folder / "good.txt"), "--docs", path, where=where)  # fmt: skip


@FUZZ
@given(rule=st.sampled_from(["", "min", "source:", "source:" + "s" * 41, "source:a\x01",
                             "MEAN ", "mean\x00", "majority,max", "\ud800", "source:" + "s" * 60,
                             "source: alice", "source:\x00"]))  # fmt: skip
def test_a_bad_grade_rule_is_refused_naming_the_option(
    cli: Callable[..., Any], db_url: str, folder: Path, rule: str
) -> None:
    raters = folder / "raters.csv"
    raters.write_text("query_id,doc_id,grade,source\nq1,d1,1,alice\nq1,d1,2,bob\n")
    refused("testset import --grades", cli, db_url, "testset", "import", "t", "--qrels",
            str(raters), "--grades", rule, where=["grade rule"])  # fmt: skip
