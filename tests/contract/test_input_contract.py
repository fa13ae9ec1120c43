"""One input contract on both databases: refused in validation with exit 2 naming the file and
line, never by the database engine, and nothing written; free text round-trips."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store
from evalplat.store.refs import VersionRef

from .dump import dump

LONG = "x" * 201


def refused(result: Any, *where: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.stderr
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for part in where:
        assert part in lines[0], lines[0]
    return str(lines[0])


BAD_FILES = [
    # (file name, content, expected line, words in the message)
    ("qrels.txt", f"q1 0 {LONG} 1\n", 1, "at most 200"),
    ("qrels.txt", "q1 0 d1 1\nq1 0 d\x002 1\n", 2, "control character"),
    ("qrels.txt", "q1 0 d\x01 1\n", 1, "control character"),
    ("qrels.txt", "q1 0 d1 2147483648\n", 1, "out of range"),
    ("qrels.txt", "q1 0 d1 9223372036854775808\n", 1, "out of range"),
    ("qrels.txt", "q1 0 d1 \u0663\n", 1, "ASCII digits"),
    ("j.csv", f"query_id,doc_id,grade\nq1,{LONG},1\n", 2, "at most 200"),
    ("j.csv", "query_id,doc_id,grade\nq1,d1,-2147483649\n", 2, "out of range"),
    ("j.tsv", "query_id\tdoc_id\tgrade\tsource\nq1\td1\t1\t" + "s" * 41 + "\n", 2, "at most 40"),
    ("j.jsonl", '{"query_id": "q1", "doc_id": "d1", "grade": ' + "9" * 4301 + "}\n", 1, "JSON"),
    ("j.jsonl", '{"query_id": "q1", "doc_id": "d\\u0000", "grade": 1}\n', 1, "control"),
    (
        "j.jsonl",
        '{"query_id": "q1", "doc_id": "d1", "grade": 1, "source": "a\\nb"}\n',
        1,
        "control",
    ),
]


@pytest.mark.parametrize(("name", "content", "line", "words"), BAD_FILES)
def test_bad_judgments_are_refused_naming_file_and_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, name: str, content: str, line: int,
    words: str,
) -> None:  # fmt: skip
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8"))
    before = dump(db_url)
    result = cli("testset", "import", "t", "--qrels", str(path), "--db", db_url)
    refused(result, f"{name} line {line}", words)
    assert dump(db_url) == before


BAD_QUERIES = [
    ("q.jsonl", '{"id": "q1", "text": "a\\u0000b"}\n', "NUL"),
    ("q.jsonl", '{"id": "q1", "text": "a\\ud800b"}\n', "surrogate"),
    ("q.jsonl", '{"id": "q1", "text": "t", "weight": 1e400}\n', "weight"),
    ("q.jsonl", '{"id": "q1", "text": "t", "weight": ' + "1" * 400 + "}\n", "weight"),
    ("q.tsv", "q1\tt\t\u0661\n", "ASCII digits"),
    ("q.jsonl", '{"id": "q1", "text": "t", "tags": ["a\\u0001"]}\n', "control"),
]


@pytest.mark.parametrize(("name", "content", "words"), BAD_QUERIES)
def test_bad_queries_are_refused(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, name: str, content: str, words: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    queries = tmp_path / name
    queries.write_text(content, encoding="utf-8")
    before = dump(db_url)
    result = cli(
        "testset", "import", "t", "--qrels", str(qrels), "--queries", str(queries), "--db", db_url
    )
    refused(result, f"{name} line 1", words)
    assert dump(db_url) == before


def test_deeply_nested_document_json_is_one_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    result = cli(
        "testset", "import", "t", "--qrels", str(qrels), "--docs", str(docs), "--db", db_url
    )
    refused(result, "docs.jsonl line 1", "nested too deeply")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("testset", "import", "a\x01b"), "control character"),
        (("testset", "import", "n" * 201), "at most 200"),
        (("config", "add", "c\tx", "--searcher", "builtin"), "control character"),
        (("config", "add", "c", "--searcher", "builtin", "--label", LONG), "at most 200"),
        (("config", "add", "c", "--searcher", "builtin", "--label", "l\x00"), "control"),
    ],
)
def test_names_and_labels_are_checked(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, args: tuple[str, ...], words: str
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    extra = ("--qrels", str(qrels)) if args[0] == "testset" else ()
    before = dump(db_url)
    refused(cli(*args, *extra, "--db", db_url), words)
    assert dump(db_url) == before


def test_run_files_and_metric_names_are_checked(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    before = dump(db_url)
    for content, words in (
        ("q1 Q0 d1 1 inf run\n", "finite"),
        ("q1 Q0 d1 1 1e999 run\n", "finite"),
        (f"q1 Q0 {'d' * 300} 1 1.0 run\n", "at most 200"),
        ("q1 Q0 d1 1 \u0661 run\n", "not a number"),
    ):
        run = tmp_path / "run.txt"
        run.write_text(content, encoding="utf-8")
        result = cli("import-run", str(run), "--config", "c", "--testset", "t", "--db", db_url)
        refused(result, "run.txt line 1", words)
    run.write_text("q1 Q0 d1 1 1.0 run\n", encoding="utf-8")
    metric = "P(rel=1)@" + "1" * 9 + "," * 0
    long_metric = cli(
        "import-run", str(run), "--config", "c", "--testset", "t", "--metric", "P@1" + "0" * 80,
        "--db", db_url,
    )  # fmt: skip
    refused(long_metric, "metric")
    assert metric  # a 9-digit cutoff is still a metric name that fits
    assert dump(db_url) == before


def test_free_text_round_trips_on_both_databases(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    text = "caf\u00e9 \U0001f600 \u202eRTL\u202c line\u2028sep \t tab \u00a0 \\ ' \""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q\u00e9 0 d\U0001f600 1\n", encoding="utf-8")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q\u00e9", "text": text}) + "\n", encoding="utf-8")
    args = ("testset", "import", "t", "--qrels", str(qrels), "--queries", str(queries))
    assert cli(*args, "--db", db_url).exit_code == 0
    with Store.open(db_url) as store:
        content = store.load_test_set(VersionRef("t"))
    assert content.queries["text"].tolist() == [text.strip()]
    assert content.judgments["doc_id"].tolist() == ["d\U0001f600"]


ENGINE = """
from pathlib import Path

def search(query, depth, flag):
    if Path(flag).exists():
        return [("d" * 300, 2.0), ("d1", 1.0)]
    return [("d1", 1.0)]
"""


def test_an_engine_doc_id_too_long_fails_its_query_and_resume_finishes(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    (tmp_path / "long_ids.py").write_text(ENGINE, encoding="utf-8")
    flag = tmp_path / "long"
    flag.touch()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\n", encoding="utf-8")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tone\nq2\ttwo\n", encoding="utf-8")
    imported = cli("testset", "import", "t", "--qrels", str(qrels), "--queries", str(queries),
                   "--db", db_url)  # fmt: skip
    assert imported.exit_code == 0
    add = ("config", "add", "c", "--searcher", "python", "--param", "function=long_ids:search")
    params = ("--param", f"path={tmp_path}", "--param", f"flag={flag}")
    assert cli(*add, *params, "--db", db_url).exit_code == 0
    first = cli("run", "c", "--testset", "t", "--db", db_url, "--json")
    assert first.exit_code == 3
    run = json.loads(first.stdout)
    assert run["status"] == "failed" and run["queries_failed"] == 2
    with Store.open(db_url) as store:
        assert "at most 200" in store.run_failures(run["id"])[0]["error"]
    flag.unlink()
    resumed = cli("run", "--resume", str(run["id"]), "--db", db_url, "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "complete"


def test_pathological_params_and_import_labels_are_one_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    deep = tmp_path / "params.json"
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    add = ("config", "add", "c", "--searcher", "python", "--param", "function=m:f")
    refused(cli(*add, "--file", str(deep), "--db", db_url), "params.json", "nested too deeply")
    huge = tmp_path / "params.toml"
    huge.write_text("a = " + "9" * 5000 + "\n", encoding="utf-8")
    refused(cli(*add, "--file", str(huge), "--db", db_url), "params.toml", "invalid TOML")
    refused(cli(*add, "--param", "x=" + "[" * 3000 + "]" * 3000, "--db", db_url), "too deeply")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    before = dump(db_url)
    imported = cli(
        "import-run", str(run), "--config", "imp", "--testset", "t", "--label", LONG,
        "--db", db_url,
    )  # fmt: skip
    refused(imported, "label", "at most 200")
    assert dump(db_url) == before
