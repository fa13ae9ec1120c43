"""Arbitrary bytes and structured garbage fed to every file reader and to project loading,
through the CLI: exit 0, or exit 2 with one line and the database unchanged; never a traceback.

The CLI runs in-process with ``catch_exceptions=False``, so a traceback is an exception that
fails the example. Hypothesis is derandomized (the same examples on every run) and bounded.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .dump import dump
from .fuzzkit import TRIED, backend

FUZZ = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)

# Pieces that stress the contract: ids and numbers at and past the limits, control and
# non-ASCII characters, JSON and TOML punctuation, comments.
TOKENS = [
    "q1", "d1", "0", "1", "-1", "2", "Q0", "run", "#", "x" * 201, "2147483648", "9" * 30,
    "\u0663", "inf", "nan", "1e400", "1.5", "\x00", "\x01", "\x7f", "\u00a0", "\u2028", "é",
    "\U0001f600", '"', "{", "}", "[", "]", ",", ":", "=", "\\", "\\u0000", "\\ud800", "'",
]  # fmt: skip
SEPARATORS = [" ", "\t", ",", "  ", ""]
KEYS = ["id", "query_id", "doc_id", "grade", "source", "text", "title", "weight", "tags", "x"]

token_lines = st.lists(
    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=7).flatmap(
        lambda tokens: st.sampled_from(SEPARATORS).map(lambda sep: sep.join(tokens))
    ),
    min_size=1,
    max_size=6,
).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, min_codepoint=0), max_size=8)
    | st.sampled_from(TOKENS),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS), children, max_size=4)
    ),
    max_leaves=8,
)
json_lines = st.lists(
    st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5) | json_values,
    min_size=1,
    max_size=4,
).map(lambda rows: "\n".join(json.dumps(r) for r in rows).encode("utf-8"))

# Files of the right shape with one field at a time made hostile, so that examples get past
# the parsers and reach the checks behind them.
CONTRACT = ["\x00", "x" * 201, "\x01", "2147483648", "\u0663", "inf", "a\u00a0b", "\ud800"]
hostile = st.one_of(
    st.sampled_from(CONTRACT),
    st.sampled_from(CONTRACT),
    st.sampled_from(TOKENS),
    st.text(st.characters(codec=None, min_codepoint=0), max_size=6),
)
QUERY = st.sampled_from(["q1", "q2"])
DOC = st.sampled_from(["d1", "d2", "d3"])
GRADE = st.sampled_from(["0", "1", "2"])
SCORE = st.sampled_from(["1.5", "2", "-0.5"])
TEXT = st.sampled_from(["one", "two words", ""])


@st.composite
def shaped(
    draw: st.DrawFn, columns: list[st.SearchStrategy[str]], sep: str, header: str = ""
) -> bytes:
    rows = [[draw(column) for column in columns] for _ in range(draw(st.integers(1, 3)))]
    row = draw(st.sampled_from(rows))
    row[draw(st.integers(0, len(row) - 1))] = draw(hostile)
    lines = ([header] if header else []) + [sep.join(values) for values in rows]
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@st.composite
def shaped_json(draw: st.DrawFn, columns: dict[str, st.SearchStrategy[Any]]) -> bytes:
    rows = [{k: draw(v) for k, v in columns.items()} for _ in range(draw(st.integers(1, 3)))]
    row = draw(st.sampled_from(rows))
    row[draw(st.sampled_from(list(columns)))] = draw(hostile | json_values)
    lines = [json.dumps(item) for item in rows]
    return "\n".join(lines).encode("utf-8")


SHAPED: dict[str, st.SearchStrategy[bytes]] = {
    "j.txt": shaped([QUERY, st.just("0"), DOC, GRADE], " "),
    "j.csv": shaped([QUERY, DOC, GRADE, TEXT], ",", "query_id,doc_id,grade,source"),
    "j.tsv": shaped([QUERY, DOC, GRADE], "\t", "query_id\tdoc_id\tgrade"),
    "j.jsonl": shaped_json({"query_id": QUERY, "doc_id": DOC, "grade": GRADE.map(int)}),
    "q.tsv": shaped([QUERY, TEXT, st.just("1.0")], "\t"),
    "q.csv": shaped([QUERY, TEXT, st.just("2"), TEXT], ",", "query_id,text,weight,tags"),
    "q.jsonl": shaped_json({"id": QUERY, "text": TEXT, "tags": st.just(["head"])}),
    "docs.jsonl": shaped_json({"id": DOC, "title": TEXT, "text": TEXT, "x": st.just({"a": 1})}),
    "run.txt": shaped([QUERY, st.just("Q0"), DOC, st.just("1"), SCORE, st.just("r")], " "),
}


def garbage(name: str) -> st.SearchStrategy[bytes]:
    files = SHAPED[name]
    return st.one_of(files, files, files, st.binary(max_size=300), token_lines, json_lines)


def check(cli: Callable[..., Any], db_url: str, *args: str) -> None:
    options = " ".join(a for a in args if a.startswith("--"))
    TRIED[f"garbage: {args[0]} {options} [{backend(db_url)}]"] += 1
    before = dump(db_url)
    result = cli(*args, "--db", db_url)
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr)
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert dump(db_url) == before


@pytest.fixture
def base(cli: Callable[..., Any], db_url: str, tmp_path: Path) -> Path:
    """A valid test set ``ok`` (queries q1, q2) and the folder fuzzed files go to."""
    (tmp_path / "good.qrels").write_text("q1 0 d1 1\nq2 0 d2 2\n", encoding="utf-8")
    (tmp_path / "good.tsv").write_text("q1\tone\nq2\ttwo\n", encoding="utf-8")
    result = cli(
        "testset", "import", "ok", "--qrels", str(tmp_path / "good.qrels"),
        "--queries", str(tmp_path / "good.tsv"), "--db", db_url,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return tmp_path


@FUZZ
@given(data=st.data(), name=st.sampled_from(["j.txt", "j.csv", "j.tsv", "j.jsonl"]))
def test_judgment_files(
    cli: Callable[..., Any], db_url: str, base: Path, data: st.DataObject, name: str
) -> None:
    path = base / name
    path.write_bytes(data.draw(garbage(name)))
    check(cli, db_url, "testset", "import", "fuzz", "--qrels", str(path))


@FUZZ
@given(data=st.data(), name=st.sampled_from(["q.tsv", "q.csv", "q.jsonl", "docs.jsonl"]))
def test_query_and_document_files(
    cli: Callable[..., Any], db_url: str, base: Path, data: st.DataObject, name: str
) -> None:
    path = base / name
    path.write_bytes(data.draw(garbage(name)))
    option = "--docs" if name.startswith("docs") else "--queries"
    qrels = str(base / "good.qrels")
    check(cli, db_url, "testset", "import", "fuzz", "--qrels", qrels, option, str(path))


@FUZZ
@given(data=garbage("run.txt"))
def test_run_files(cli: Callable[..., Any], db_url: str, base: Path, data: bytes) -> None:
    path = base / "run.txt"
    path.write_bytes(data)
    check(cli, db_url, "import-run", str(path), "--config", "imported", "--testset", "ok")
    result = cli("evaluate", "--qrels", str(base / "good.qrels"), "--run", str(path))
    assert result.exit_code in (0, 2), result.stderr
    if result.exit_code == 2:
        assert len(result.stderr.strip().splitlines()) == 1


TOML_KEYS = ["name", "qrels", "searcher", "testsets", "depth", "metric", "names", "url", "type"]
TOML_VALUES = ['"x"', "1", "-1", "0", "1e400", "[1,", '["a"]', "{a=1}", "true", '"${X}"', "inf"]
TOML_TABLES = ["[[testsets]]", "[[configs]]", "[metrics]", "[[gates]]", "[reports]", "[x]", "["]

toml_text = st.lists(
    st.sampled_from(TOML_TABLES)
    | st.tuples(st.sampled_from(TOML_KEYS), st.sampled_from(TOML_VALUES)).map(" = ".join),
    max_size=10,
).map(lambda lines: "\n".join(lines).encode("utf-8"))


@FUZZ
@given(data=st.one_of(st.binary(max_size=200), toml_text))
def test_project_files(cli: Callable[..., Any], db_url: str, base: Path, data: bytes) -> None:
    path = base / "evalplat.toml"
    path.write_bytes(data)
    check(cli, db_url, "nightly", "--dry-run", "--project", str(path))


TASK_NAMES = itertools.count()


@FUZZ
@given(data=st.data())
def test_pair_lists_and_guidelines_of_a_rating_task(
    cli: Callable[..., Any], db_url: str, base: Path, data: st.DataObject
) -> None:
    pairs, guidelines = base / "pairs.csv", base / "guide.md"
    pairs.write_bytes(data.draw(garbage("j.csv")))
    guidelines.write_bytes(data.draw(st.binary(max_size=200) | token_lines))
    task = f"fuzz-{next(TASK_NAMES)}"  # a new task each time: a name is taken once
    check(cli, db_url, "rate", "task", task, "-t", "ok", "--pairs", str(pairs),
          "--guidelines", str(guidelines))  # fmt: skip
