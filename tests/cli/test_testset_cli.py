"""`evalplat testset`: import, versions, listings, and bad input that leaves the database be."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from evalplat.db.engine import create_db_engine
from evalplat.db.metadata import METADATA

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"
QUERIES = "q1\tblue whale size\nq2\tkrill diet\n"
DOCS = (
    '{"id": "d1", "title": "Blue whale", "text": "The largest animal.", "lang": "en"}\n'
    '{"id": "d2", "title": "Krill", "text": "Small crustaceans."}\n'
)


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def snapshot(url: str) -> dict[str, int]:
    """Row count of every table: enough to see that a refused import wrote nothing."""
    engine = create_db_engine(url)
    with engine.connect() as connection:
        counts = {
            table.name: connection.execute(select(func.count()).select_from(table)).scalar_one()
            for table in METADATA.sorted_tables
        }
    engine.dispose()
    return counts


def test_import_then_reimport_identical_content_returns_the_same_version(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", QRELS)
    queries = write(tmp_path, "queries.tsv", QUERIES)
    docs = write(tmp_path, "docs.jsonl", DOCS)
    args = (
        "testset",
        "import",
        "whales",
        "--qrels",
        str(qrels),
        "--queries",
        str(queries),
        "--docs",
        str(docs),
        "--db",
        db_url,
    )
    first = cli(*args, "--json")
    assert first.exit_code == 0, first.stderr
    data = json.loads(first.stdout)
    assert (data["name"], data["version"], data["queries"], data["judgments"]) == (
        "whales",
        1,
        2,
        3,
    )
    assert data["documents"] == 2 and data["created"] is True
    again = cli(*args)
    assert again.exit_code == 0
    assert "unchanged: identical to whales@1" in again.stderr
    assert snapshot(db_url)["test_set_version"] == 1


def test_changed_content_makes_a_new_version_and_shares_the_corpus(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    docs = write(tmp_path, "docs.jsonl", DOCS)
    queries = write(tmp_path, "queries.tsv", QUERIES)
    for grades in (QRELS, QRELS.replace("d2 0", "d2 1")):
        qrels = write(tmp_path, "qrels.txt", grades)
        result = cli(
            "testset",
            "import",
            "whales",
            "--qrels",
            str(qrels),
            "--queries",
            str(queries),
            "--docs",
            str(docs),
            "--db",
            db_url,
        )
        assert result.exit_code == 0, result.stderr
    listed = json.loads(cli("testset", "list", "--db", db_url, "--json").stdout)
    assert [(t["name"], t["version"]) for t in listed] == [("whales", 2)]
    shown = json.loads(cli("testset", "show", "whales@1", "--db", db_url, "--json").stdout)
    assert shown["version"] == 1 and shown["versions"] == [1, 2]
    assert snapshot(db_url)["corpus"] == 1


def test_qrels_only_test_set_infers_queries(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", "# judged by hand\n" + QRELS)
    result = cli("testset", "import", "bare", "--qrels", str(qrels), "--db", db_url, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["queries"] == 2


@pytest.mark.parametrize(
    ("file_name", "content", "expected"),
    [
        ("qrels.txt", "q1 0 d1 2\nq1 0 d2\n", "qrels.txt line 2"),
        ("qrels.txt", "q1 0 d1 2\nq1 0 d2 high\n", "qrels.txt line 2"),
        ("qrels.txt", "q1 0 d1 2\nq2 0 d1 1\nq1 0 d1 0\n", "qrels.txt line 3"),
        ("qrels.txt", "q1 0 d1 2\n" + "q1 0 d2 1\n" + "q1 0 d\xe9 1\n", "qrels.txt line 3"),
        ("qrels.txt", "", "qrels.txt"),
        ("qrels.xlsx", "q1 0 d1 2\n", "qrels.xlsx"),
    ],
    ids=[
        "field-count",
        "non-integer-grade",
        "duplicate-judgment",
        "bad-encoding",
        "empty",
        "unknown-format",
    ],
)
def test_malformed_qrels_exit_2_name_the_line_and_write_nothing(
    cli: Callable[..., Any],
    db_url: str,
    tmp_path: Path,
    file_name: str,
    content: str,
    expected: str,
) -> None:
    raw: str | bytes = content.encode("latin-1") if "\xe9" in content else content
    qrels = write(tmp_path, file_name, raw)
    before = snapshot(db_url)
    result = cli("testset", "import", "broken", "--qrels", str(qrels), "--db", db_url)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr
    assert snapshot(db_url) == before


def test_duplicate_query_id_in_queries_file_names_the_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", QRELS)
    queries = write(tmp_path, "queries.tsv", QUERIES + "q1\tagain\n")
    before = snapshot(db_url)
    result = cli(
        "testset", "import", "dup", "--qrels", str(qrels), "--queries", str(queries), "--db", db_url
    )
    assert result.exit_code == 2
    assert "queries.tsv line 3" in result.stderr
    assert snapshot(db_url) == before


def test_bad_documents_file_is_refused_after_valid_qrels_without_a_trace(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", QRELS)
    docs = write(tmp_path, "docs.jsonl", DOCS + "{not json\n")
    before = snapshot(db_url)
    result = cli(
        "testset", "import", "w", "--qrels", str(qrels), "--docs", str(docs), "--db", db_url
    )
    assert result.exit_code == 2
    assert "docs.jsonl line 3" in result.stderr
    assert snapshot(db_url) == before


def test_export_writes_files_that_import_back_to_the_same_version(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", QRELS)
    queries = write(tmp_path, "queries.tsv", QUERIES)
    docs = write(tmp_path, "docs.jsonl", DOCS)
    assert (
        cli(
            "testset",
            "import",
            "w",
            "--qrels",
            str(qrels),
            "--queries",
            str(queries),
            "--docs",
            str(docs),
            "--db",
            db_url,
        ).exit_code
        == 0
    )
    out = tmp_path / "exported"
    result = cli("testset", "export", "w@1", "--out", str(out), "--db", db_url, "--json")
    assert result.exit_code == 0, result.stderr
    files = json.loads(result.stdout)["files"]
    assert Path(files["docs"]).name == "docs.jsonl"
    args = ["testset", "import", "w", "--db", db_url, "--json"]
    for kind in ("qrels", "queries", "docs"):
        args += [f"--{kind}", files[kind]]
    again = json.loads(cli(*args).stdout)
    assert (again["version"], again["created"]) == (1, False)
    stdout = cli("testset", "export", "w", "--db", db_url)
    assert "q1 0 d1 2" in stdout.stdout


def test_unknown_test_set_is_exit_2_with_the_known_names(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write(tmp_path, "qrels.txt", QRELS)
    cli("testset", "import", "whales", "--qrels", str(qrels), "--db", db_url)
    result = cli("testset", "show", "dolphins", "--db", db_url)
    assert result.exit_code == 2
    assert "no test set named 'dolphins'; known: whales" in result.stderr
    missing_version = cli("testset", "show", "whales@7", "--db", db_url)
    assert missing_version.exit_code == 2 and "has no version 7" in missing_version.stderr
