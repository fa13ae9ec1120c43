"""Readers of queries, judgments and documents: formats, values, and one-line errors."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.errors import InputError
from evalplat.formats import testset_files as tf
from evalplat.formats.testset_files import (
    detect_format,
    read_documents,
    read_judgments,
    read_queries,
)


def _file(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8"))
    else:
        path.write_bytes(content)
    return path


# -- format detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "override", "expected"),
    [
        ("qrels.txt", "judgments", None, "trec"),
        ("qrels", "judgments", None, "trec"),
        ("robust.qrels", "judgments", None, "trec"),
        ("judgments.CSV", "judgments", None, "csv"),
        ("judgments.tsv", "judgments", None, "tsv"),
        ("judgments.ndjson", "judgments", None, "jsonl"),
        ("queries.txt", "queries", None, "tsv"),
        ("queries.jsonl", "queries", None, "jsonl"),
        ("docs.jsonl", "documents", None, "jsonl"),
        ("judgments.dat", "judgments", "tsv", "tsv"),
        ("qrels.txt", "judgments", " JSONL ", "jsonl"),
    ],
)
def test_format_comes_from_the_extension_unless_overridden(
    name: str, kind: tf.Kind, override: str | None, expected: str
) -> None:
    assert detect_format(name, kind, override) == expected


def test_unknown_format_name_is_an_input_error() -> None:
    with pytest.raises(
        InputError,
        match=r"unknown format 'xml' \(known: trec, csv, tsv, jsonl, quepid, rre, srw, ltr\)",
    ):
        detect_format("qrels.txt", "judgments", "xml")


def test_unknown_extension_asks_for_a_format() -> None:
    with pytest.raises(InputError, match=r"judgments\.xlsx: cannot tell .* pass a format"):
        detect_format("judgments.xlsx", "judgments")


@pytest.mark.parametrize(
    ("name", "kind", "override"),
    [("queries.txt", "queries", "trec"), ("docs.tsv", "documents", None)],
)
def test_a_format_the_kind_cannot_hold_is_refused(
    name: str, kind: tf.Kind, override: str | None
) -> None:
    with pytest.raises(InputError, match=f"{kind} cannot be read as"):
        detect_format(name, kind, override)


# -- judgments ----------------------------------------------------------------------------------


def test_judgments_read_the_same_from_every_format(tmp_path: Path) -> None:
    csv_file = _file(tmp_path, "j.csv", "grade,query_id,doc_id\n2,q1,d1\n0, q1 ,d2\n\n1,q2,d1\n")
    tsv_file = _file(
        tmp_path, "j.tsv", "query_id\tdoc_id\tgrade\r\nq1\td1\t2\r\nq1\td2\t0\r\nq2\td1\t1\r\n"
    )
    lines = [
        {"query_id": "q1", "doc_id": "d1", "grade": 2},
        {"query_id": "q1", "doc_id": "d2", "grade": 0},
        {"query_id": "q2", "doc_id": "d1", "grade": 1},
    ]
    jsonl_file = _file(tmp_path, "j.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    trec_file = _file(tmp_path, "j.txt", "# comment\nq1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n")
    expected = [("q1", "d1", 2, None), ("q1", "d2", 0, None), ("q2", "d1", 1, None)]
    for path in (csv_file, tsv_file, jsonl_file, trec_file):
        frame = read_judgments(path)
        assert list(frame.columns) == ["query_id", "doc_id", "grade", "source"]
        assert str(frame["grade"].dtype) == "int64"
        assert list(frame.itertuples(index=False, name=None)) == expected, path.name


def test_judgment_sources_are_kept_and_empty_means_none(tmp_path: Path) -> None:
    path = _file(tmp_path, "j.csv", "query_id,doc_id,grade,source\nq1,d1,2,llm\nq1,d2,-1,\n")
    frame = read_judgments(path)
    assert frame["source"].tolist() == ["llm", None]
    assert frame["grade"].tolist() == [2, -1]


def test_a_json_id_may_be_an_integer(tmp_path: Path) -> None:
    path = _file(tmp_path, "j.jsonl", '{"query_id": 7, "doc_id": 12, "grade": "3"}\n')
    frame = read_judgments(path)
    assert frame.iloc[0].tolist() == ["7", "12", 3, None]


BAD_JUDGMENTS = [
    ("j.csv", "query_id,doc_id,grade\nq1,d1,2\nq1,d2\n", 3, "expected 3 fields"),
    ("j.csv", "query_id,doc_id,grade\nq1,d1,two\n", 2, "grade 'two' is not an integer"),
    ("j.csv", "query_id,doc_id,grade\nq1,d1,2.5\n", 2, "grade '2.5' is not an integer"),
    ("j.csv", 'query_id,doc_id,grade\nq1,"d 1",2\n', 2, "doc id 'd 1' contains whitespace"),
    ("j.csv", "query_id,doc_id,grade\n,d1,2\n", 2, "empty query id"),
    ("j.csv", "query_id,doc_id,grade,who\nq1,d1,2,x\n", 1, "unknown column 'who'"),
    ("j.csv", "q1,d1,2\n", 1, "expected a header line naming query_id, doc_id, grade"),
    ("j.csv", "query_id,grade\nq1,2\n", 1, "the header has no 'doc_id' column"),
    (
        "j.tsv",
        "query_id\tdoc_id\tgrade\nq1\td1\t1\nq2\td1\t1\n\nq1\td1\t0\n",
        5,
        "duplicate judgment for query 'q1', doc 'd1' (first on line 2)",
    ),
    ("j.jsonl", '{"query_id":"q1","doc_id":"d1","grade":1}\n{"query_id":', 2, "invalid JSON"),
    ("j.jsonl", '{"query_id":"q1","doc_id":"d1"}\n', 1, "missing key 'grade'"),
    ("j.jsonl", '{"query_id":"q1","doc_id":"d1","grade":1.5}\n', 1, "is not an integer"),
    ("j.jsonl", '{"query_id":"q1","doc_id":"d1","grade":true}\n', 1, "is not an integer"),
    ("j.jsonl", "[1, 2]\n", 1, "expected a JSON object, found a list"),
    (
        "j.jsonl",
        '{"query_id":"q","doc_id":"d","grade":1}\n\n{"query_id":"q","doc_id":"e","grade":1} {}\n',
        3,
        "invalid JSON: Extra data",
    ),
    ("j.jsonl", '{"query_id":"q","doc_id":"d","grade":1,"by":"x"}\n', 1, "unknown key 'by'"),
    ("j.jsonl", '{"query_id":["q"],"doc_id":"d","grade":1}\n', 1, "query id must be a string"),
    ("j.jsonl", '{"query_id":"q","doc_id":"d","grade":1,"source":5}\n', 1, "source must be"),
    ("j.txt", "q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 fields, found 3"),
    ("j.txt", "q1 0 d1 1\nq1 0 d1 2\n", 2, "duplicate judgment"),
]


@pytest.mark.parametrize(("name", "content", "line", "problem"), BAD_JUDGMENTS)
def test_malformed_judgments_name_file_and_line(
    tmp_path: Path, name: str, content: str, line: int, problem: str
) -> None:
    path = _file(tmp_path, name, content)
    with pytest.raises(InputError) as caught:
        read_judgments(path)
    assert caught.value.path == str(path)
    assert caught.value.line == line
    assert problem in caught.value.problem
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", ["j.csv", "j.tsv", "j.jsonl", "j.txt", "q.tsv", "d.jsonl"])
def test_bytes_that_are_not_utf8_name_the_line(tmp_path: Path, name: str) -> None:
    good = {
        "j.csv": b"query_id,doc_id,grade\nq1,d1,1\n",
        "j.tsv": b"query_id\tdoc_id\tgrade\nq1\td1\t1\n",
        "j.jsonl": b'{"query_id":"q1","doc_id":"d1","grade":1}\n',
        "j.txt": b"q1 0 d1 1\nq1 0 d2 1\n",
        "q.tsv": b"q1\tone\nq2\ttwo\n",
        "d.jsonl": b'{"id":"d1"}\n{"id":"d2"}\n',
    }[name]
    path = _file(tmp_path, name, good + b"caf\xe9 1\n")
    reader = {"q": read_queries, "d": read_documents}.get(name[0], read_judgments)
    with pytest.raises(InputError, match="not valid UTF-8") as caught:
        reader(path)
    assert caught.value.line == good.count(b"\n") + 1


@pytest.mark.parametrize("content", [b"", b"  \n\n \r\n"])
@pytest.mark.parametrize("name", ["j.csv", "j.jsonl", "q.tsv", "d.jsonl"])
def test_an_empty_file_is_refused(tmp_path: Path, name: str, content: bytes) -> None:
    path = _file(tmp_path, name, content)
    reader = {"q": read_queries, "d": read_documents}.get(name[0], read_judgments)
    with pytest.raises(InputError, match=re.escape(f"{name}: file is empty")):
        reader(path)


def test_a_header_without_rows_has_no_judgments(tmp_path: Path) -> None:
    path = _file(tmp_path, "j.csv", "query_id,doc_id,grade\n")
    with pytest.raises(InputError, match=r"j\.csv: no judgments"):
        read_judgments(path)


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_judgments(tmp_path / "absent.csv")


def test_plain_delimited_and_jsonl_files_take_the_fast_path(tmp_path: Path) -> None:
    text = "query_id,doc_id,grade,source\nq1,d1,1,human\nq1,d2,0,\n"
    fast = tf._judgments_fast(text, "csv", tmp_path / "j.csv")
    assert fast is not None  # None would mean "fall back to the line-by-line reader"
    assert fast.to_dict("list") == tf._judgments_slow(text, "csv", tmp_path / "j.csv")[0].to_dict(
        "list"
    )
    assert list(fast["doc_id"]) == ["d1", "d2"] and list(fast["grade"]) == [1, 0]
    assert list(fast["source"]) == ["human", None]
    jsonl = '{"query_id":"q1","doc_id":"d1","grade":1}\n'
    fast = tf._judgments_fast(jsonl, "jsonl", tmp_path / "j.jsonl")
    assert fast is not None
    assert fast[["query_id", "doc_id", "grade"]].to_dict("list") == {
        "query_id": ["q1"],
        "doc_id": ["d1"],
        "grade": [1],
    }
    assert str(fast["grade"].dtype) == "int64"


_ID = st.sampled_from(["q1", "q2", "d1", "d2", "", " d3", "x y", "7", "#c", "é"])
_GRADE = st.sampled_from(["0", "1", "-1", "+2", "2.0", "x", "", " 3 ", "99999999999999999999"])
_SOURCE = st.sampled_from(["", "human", "llm", " click "])


@given(
    rows=st.lists(st.tuples(_ID, _ID, _GRADE, _SOURCE), min_size=1, max_size=6),
    fmt=st.sampled_from(["csv", "tsv", "jsonl"]),
)
def test_fast_path_agrees_with_the_line_by_line_reader(
    rows: list[tuple[str, str, str, str]], fmt: str
) -> None:
    if fmt == "jsonl":
        records = []
        for q, d, g, s in rows:
            grade: object = int(g) if g.strip().lstrip("+-").isdigit() and g == g.strip() else g
            records.append(json.dumps({"query_id": q, "doc_id": d, "grade": grade, "source": s}))
        text = "\n".join(records) + "\n"
    else:
        sep = "," if fmt == "csv" else "\t"
        lines = [sep.join(("query_id", "doc_id", "grade", "source"))]
        lines += [sep.join(row) for row in rows]
        text = "\n".join(lines) + "\n"
    path = Path(f"j.{fmt}")
    fast = tf._judgments_fast(text, fmt, path)
    try:
        slow, _ = tf._judgments_slow(text, fmt, path)
    except InputError:
        assert fast is None  # the fast path never accepts what the reference refuses
        return
    if fast is not None:
        assert fast.to_dict("list") == slow.to_dict("list")
        assert list(fast.dtypes.astype(str)) == list(slow.dtypes.astype(str))


# -- queries ------------------------------------------------------------------------------------


def test_queries_tsv_without_header_is_id_text_weight_tags(tmp_path: Path) -> None:
    path = _file(tmp_path, "q.tsv", "\ufeff1\tfirst query \r\n2\tsecond\t2.5\n3\tthird\t\tb, a,b\n")
    frame = read_queries(path)
    assert frame["query_id"].tolist() == ["1", "2", "3"]
    assert frame["text"].tolist() == ["first query", "second", "third"]
    assert math.isnan(frame["weight"][0]) and frame["weight"][1] == 2.5
    assert frame["tags"].tolist() == [None, None, '["a","b"]']


def test_queries_header_names_columns_in_any_order(tmp_path: Path) -> None:
    path = _file(tmp_path, "q.csv", 'qid,tags,query,weight\nq1,"x,y","a, b",1\nq2,,c,\n')
    frame = read_queries(path)
    assert frame.to_dict("list")["query_id"] == ["q1", "q2"]
    assert frame["text"].tolist() == ["a, b", "c"]
    assert frame["tags"].tolist() == ['["x","y"]', None]


def test_queries_jsonl_accept_id_or_query_id(tmp_path: Path) -> None:
    lines = [
        '{"id": "q1", "text": "one", "weight": 3, "tags": ["z", "a", "z"]}',
        '{"query_id": 2, "text": "two", "tags": null}',
    ]
    frame = read_queries(_file(tmp_path, "q.jsonl", "\n".join(lines)))
    assert frame["query_id"].tolist() == ["q1", "2"]
    assert frame["weight"].tolist()[0] == 3.0
    assert frame["tags"].tolist() == ['["a","z"]', None]


BAD_QUERIES = [
    ("q.tsv", "q1\tone\nq2\ttwo\nq1\tagain\n", 3, "duplicate query id 'q1' (first on line 1)"),
    ("q.tsv", "q1\tone\nq2\n", 2, "expected 2 to 4 fields, found 1"),
    ("q.tsv", "q1\tone\t0\n", 1, "weight must be a number > 0"),
    ("q.tsv", "q1\tone\tinf\n", 1, "weight must be a number > 0"),
    ("q.tsv", "q1\tone\theavy\n", 1, "weight 'heavy' is not a number"),
    ("q.tsv", "query_id\ttext\n\nq1\tone\textra\n", 3, "expected 2 fields, found 3"),
    ("q.tsv", "id\tdescription\nq1\tx\n", 1, "unknown column 'description'"),
    ("q.tsv", "id\tweight\nq1\t2\n", 1, "the header has no 'text' column"),
    ("q.tsv", "q 1\tone\n", 1, "contains whitespace"),
    ("q.csv", 'q0,a\nq1,"unclosed\n', 2, "malformed CSV"),
    ("q.jsonl", '{"id": "q1"}\n', 1, "missing key 'text'"),
    ("q.jsonl", '{"text": "x"}\n', 1, "missing key 'id' (or 'query_id')"),
    ("q.jsonl", '{"id": "q1", "query_id": "q1", "text": "x"}\n', 1, "both 'id' and 'query_id'"),
    ("q.jsonl", '{"id": "q1", "text": "x", "tags": "a"}\n', 1, "tags must be a list"),
    ("q.jsonl", '{"id": "q1", "text": "x", "weight": -1}\n', 1, "weight must be a number > 0"),
    ("q.jsonl", '{"id": "q1", "text": "x", "weight": "2"}\n', 1, "weight must be a number, found"),
    ("q.jsonl", '{"id": "q1", "text": 3}\n', 1, "text must be a string"),
    ("q.jsonl", '{"id": "q1", "text": "x", "lang": "en"}\n', 1, "unknown key 'lang'"),
    ("q.jsonl", '{"id": true, "text": "x"}\n', 1, "query id must be a string, found a boolean"),
]


@pytest.mark.parametrize(("name", "content", "line", "problem"), BAD_QUERIES)
def test_malformed_queries_name_file_and_line(
    tmp_path: Path, name: str, content: str, line: int, problem: str
) -> None:
    path = _file(tmp_path, name, content)
    with pytest.raises(InputError) as caught:
        read_queries(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert problem in caught.value.problem


# -- documents ----------------------------------------------------------------------------------


def test_documents_keep_other_fields_as_canonical_json(tmp_path: Path) -> None:
    lines = [
        '{"id": "d1", "title": "T", "text": "body", "year": 1962, "author": "é"}',
        '{"doc_id": 2, "title": null}',
    ]
    frame = read_documents(_file(tmp_path, "d.jsonl", "\n".join(lines) + "\n"))
    assert frame["doc_id"].tolist() == ["d1", "2"]
    assert frame["title"].tolist() == ["T", ""]
    assert frame["text"].tolist() == ["body", ""]
    assert frame["fields"].tolist() == ['{"author":"é","year":1962}', "{}"]


BAD_DOCUMENTS = [
    ('{"id": "d1"}\n{"id": "d2"}\n{"id": "d1"}\n', 3, "duplicate doc id 'd1' (first on line 1)"),
    ('{"title": "x"}\n', 1, "missing key 'id' (or 'doc_id')"),
    ('{"id": "d1", "title": ["x"]}\n', 1, "title must be a string, found a list"),
    ('{"id": "d1", "text": 2}\n', 1, "text must be a string, found an integer"),
    ('{"id": ""}\n', 1, "empty doc id"),
    ('{"id": "d1"}\n"d2"\n', 2, "expected a JSON object, found a string"),
]


@pytest.mark.parametrize(("content", "line", "problem"), BAD_DOCUMENTS)
def test_malformed_documents_name_file_and_line(
    tmp_path: Path, content: str, line: int, problem: str
) -> None:
    path = _file(tmp_path, "docs.jsonl", content)
    with pytest.raises(InputError) as caught:
        read_documents(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert problem in caught.value.problem


@pytest.mark.parametrize(
    ("reader", "text", "key"),
    [
        (read_judgments, '{"query_id": "q1", "doc_id": "a", "grade": 2}\n'
         '{"query_id": "q1", "doc_id": "b", "grade": 1, "grade": 0}\n', "grade"),
        (read_queries, '{"id": "q1", "text": "one"}\n{"id": "q2", "text": "a", "text": "b"}\n',
         "text"),
        (read_documents, '{"id": "d1"}\n{"id": "d2", "tags": {"x": 1, "x": 2}}\n', "x"),
    ],
)  # fmt: skip
def test_a_jsonl_object_naming_a_key_twice_is_refused_naming_key_and_line(
    tmp_path: Path, reader: Any, text: str, key: str
) -> None:
    path = _file(tmp_path, "f.jsonl", text)
    with pytest.raises(InputError, match=f"duplicate key '{key}'") as caught:
        reader(path)
    assert caught.value.line == 2
