"""Test set content: cross-file validation, order- and format-independent hashes, export."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TypeVar

import pytest

from evalplat.errors import InputError
from evalplat.testsets.content import TestSetContent, export_testset, load_testset, write_judgments

T = TypeVar("T")

QUERIES = [
    ("q1", "red shoes", None, None),
    ("q2", "blue hat", 2.0, ["head"]),
    ("q3", "", None, None),
]
JUDGMENTS = [
    ("q1", "d1", 2, None),
    ("q1", "d2", 0, None),
    ("q2", "d1", 1, None),
    ("q2", "d3", 3, None),
]
DOCS = [
    ("d1", "Shoes", "red shoes", {"lang": "en"}),
    ("d2", "", "", {}),
    ("d3", "Hat", "a hat", {}),
]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _queries_tsv(path: Path, rows: list[tuple[str, str, float | None, list[str] | None]]) -> Path:
    lines = ["query_id\ttext\tweight\ttags"]
    lines += [f"{q}\t{t}\t{'' if w is None else w}\t{','.join(g or [])}" for q, t, w, g in rows]
    return _write(path, lines)


def _queries_jsonl(path: Path, rows: list[tuple[str, str, float | None, list[str] | None]]) -> Path:
    lines = []
    for query_id, text, weight, tags in rows:
        record: dict[str, object] = {"query_id": query_id, "text": text}
        if weight is not None:
            record["weight"] = weight
        if tags is not None:
            record["tags"] = list(reversed(tags)) + tags  # order and repeats do not matter
        lines.append(json.dumps(record))
    return _write(path, lines)


def _qrels(path: Path, rows: list[tuple[str, str, int, str | None]]) -> Path:
    return _write(path, ["# judged in 2024"] + [f"{q} 0 {d} {g}" for q, d, g, _ in rows])


def _judgments_csv(path: Path, rows: list[tuple[str, str, int, str | None]]) -> Path:
    return _write(path, ["doc_id,grade,query_id"] + [f"{d},{g},{q}" for q, d, g, _ in rows])


def _docs(path: Path, rows: list[tuple[str, str, str, dict[str, str]]]) -> Path:
    lines = [
        json.dumps({**extra, "text": text, "title": title, "id": doc_id})
        for doc_id, title, text, extra in rows
    ]
    return _write(path, lines)


def _shuffled(rows: list[T], seed: int) -> list[T]:
    copy = list(rows)
    random.Random(seed).shuffle(copy)
    return copy


def test_same_content_in_other_formats_and_order_has_the_same_hash(tmp_path: Path) -> None:
    first = load_testset(
        _qrels(tmp_path / "qrels.txt", JUDGMENTS),
        _queries_tsv(tmp_path / "queries.tsv", QUERIES),
        _docs(tmp_path / "docs.jsonl", DOCS),
    )
    second = load_testset(
        _judgments_csv(tmp_path / "judgments.csv", _shuffled(JUDGMENTS, 1)),
        _queries_jsonl(tmp_path / "queries.jsonl", _shuffled(QUERIES, 2)),
        _docs(tmp_path / "docs2.jsonl", _shuffled(DOCS, 3)),
    )
    assert len(first.content_hash()) == 64
    assert first.content_hash() == second.content_hash()
    assert first.corpus_hash() == second.corpus_hash()


@pytest.mark.parametrize(
    "change",
    ["grade", "query text", "weight", "tags", "extra judgment", "source", "doc text", "no docs"],
)
def test_any_change_of_content_changes_the_hash(tmp_path: Path, change: str) -> None:
    queries = list(QUERIES)
    judgments = list(JUDGMENTS)
    docs = list(DOCS)
    if change == "grade":
        judgments[0] = ("q1", "d1", 3, None)
    elif change == "query text":
        queries[0] = ("q1", "red shoe", None, None)
    elif change == "weight":
        queries[0] = ("q1", "red shoes", 1.0, None)
    elif change == "tags":
        queries[1] = ("q2", "blue hat", 2.0, ["tail"])
    elif change == "extra judgment":
        judgments.append(("q3", "d1", 0, None))
    elif change == "doc text":
        docs[2] = ("d3", "Hat", "a cap", {})
    base = load_testset(
        _qrels(tmp_path / "a.txt", JUDGMENTS),
        _queries_tsv(tmp_path / "a.tsv", QUERIES),
        _docs(tmp_path / "a.jsonl", DOCS),
    )
    changed_judgments = _qrels(tmp_path / "b.txt", judgments)
    if change == "source":
        lines = ["query_id,doc_id,grade,source"] + [f"{q},{d},{g},llm" for q, d, g, _ in judgments]
        changed_judgments = _write(tmp_path / "b.csv", lines)
    changed = load_testset(
        changed_judgments,
        _queries_tsv(tmp_path / "b.tsv", queries),
        None if change == "no docs" else _docs(tmp_path / "b.jsonl", docs),
    )
    assert changed.content_hash() != base.content_hash()
    if change == "doc text":
        assert changed.corpus_hash() != base.corpus_hash()


def test_text_moved_between_fields_changes_the_corpus_hash(tmp_path: Path) -> None:
    judgments = _qrels(tmp_path / "qrels.txt", JUDGMENTS)
    one = load_testset(judgments, docs=_docs(tmp_path / "1.jsonl", [("d1", "a\tb", "", {})]))
    two = load_testset(judgments, docs=_docs(tmp_path / "2.jsonl", [("d1", "a", "b", {})]))
    assert one.corpus_hash() != two.corpus_hash()


def test_a_corpus_hash_does_not_depend_on_the_judgments(tmp_path: Path) -> None:
    docs = _docs(tmp_path / "docs.jsonl", DOCS)
    one = load_testset(_qrels(tmp_path / "1.txt", JUDGMENTS), docs=docs)
    two = load_testset(_qrels(tmp_path / "2.txt", JUDGMENTS[:2]), docs=docs)
    assert one.corpus_hash() == two.corpus_hash()
    assert one.content_hash() != two.content_hash()


def test_without_documents_there_is_no_corpus_hash(tmp_path: Path) -> None:
    content = load_testset(_qrels(tmp_path / "qrels.txt", JUDGMENTS))
    with pytest.raises(InputError, match="no documents"):
        content.corpus_hash()


def test_qrels_only_infers_the_queries_with_empty_text(tmp_path: Path) -> None:
    content = load_testset(_qrels(tmp_path / "qrels.txt", JUDGMENTS))
    assert content.queries["query_id"].tolist() == ["q1", "q2"]
    assert content.queries["text"].tolist() == ["", ""]
    assert content.queries["weight"].isna().all()
    assert content.queries["tags"].tolist() == [None, None]
    assert content.documents is None


@pytest.mark.parametrize("fmt", ["trec", "csv", "jsonl"])
def test_a_judgment_for_an_unknown_query_names_the_judgments_file_and_line(
    tmp_path: Path, fmt: str
) -> None:
    queries = _queries_tsv(tmp_path / "queries.tsv", QUERIES[:1])
    rows = [("q1", "d1", 1, None), ("q1", "d2", 0, None), ("q2", "d1", 1, None)]
    content = load_testset(_qrels(tmp_path / "all.txt", rows))
    path = write_judgments(content.judgments, tmp_path / f"j.{fmt}", fmt)
    if fmt == "trec":  # comment and blank lines before the row move it down
        path.write_text("# header\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    expected_line = {"trec": 5, "csv": 4, "jsonl": 3}[fmt]
    with pytest.raises(InputError) as caught:
        load_testset(path, queries, format=fmt)
    assert caught.value.path == str(path)
    assert caught.value.line == expected_line
    assert caught.value.problem == "judgment for query 'q2', which is not in queries.tsv"


def test_queries_without_judgments_are_kept(tmp_path: Path) -> None:
    content = load_testset(
        _qrels(tmp_path / "qrels.txt", JUDGMENTS), _queries_tsv(tmp_path / "q.tsv", QUERIES)
    )
    assert content.queries["query_id"].tolist() == ["q1", "q2", "q3"]


def test_an_error_in_the_documents_stops_the_whole_load(tmp_path: Path) -> None:
    docs = _write(tmp_path / "docs.jsonl", ['{"id": "d1"}', '{"id": "d1"}'])
    with pytest.raises(InputError, match=r"docs\.jsonl line 2: duplicate doc id"):
        load_testset(_qrels(tmp_path / "qrels.txt", JUDGMENTS), docs=docs)


def test_export_then_load_gives_the_same_content(tmp_path: Path) -> None:
    lines = ["query_id,doc_id,grade,source"] + [f"{q},{d},{g},human" for q, d, g, _ in JUDGMENTS]
    original = load_testset(
        _write(tmp_path / "j.csv", lines),
        _queries_jsonl(tmp_path / "q.jsonl", QUERIES),
        _docs(tmp_path / "d.jsonl", DOCS),
    )
    written = export_testset(original, tmp_path / "out")
    assert {k: p.name for k, p in written.items()} == {
        "qrels": "judgments.jsonl",  # sources do not fit in TREC qrels
        "queries": "queries.tsv",
        "docs": "docs.jsonl",
    }
    again = load_testset(written["qrels"], written["queries"], written["docs"])
    assert again.content_hash() == original.content_hash()
    assert again.corpus_hash() == original.corpus_hash()


def test_export_falls_back_to_jsonl_for_queries_tsv_cannot_hold(tmp_path: Path) -> None:
    queries = _write(tmp_path / "q.jsonl", ['{"id": "q1", "text": "x", "tags": ["a,b"]}'])
    original = load_testset(_qrels(tmp_path / "qrels.txt", JUDGMENTS[:1]), queries)
    written = export_testset(original, tmp_path / "out")
    assert written["qrels"].name == "qrels.txt"
    assert written["queries"].name == "queries.jsonl"
    assert not (tmp_path / "out" / "queries.tsv").exists()
    again = load_testset(written["qrels"], written["queries"])
    assert again.content_hash() == original.content_hash()


def test_export_writes_trec_qrels_lines(tmp_path: Path) -> None:
    content = load_testset(_judgments_csv(tmp_path / "j.csv", JUDGMENTS))
    written = export_testset(content, tmp_path / "out")
    assert written["qrels"].read_text(encoding="utf-8").splitlines() == [
        "q1 0 d1 2",
        "q1 0 d2 0",
        "q2 0 d1 1",
        "q2 0 d3 3",
    ]


def test_content_is_not_collected_as_a_test_class() -> None:
    assert TestSetContent.__test__ is False


def test_hash_survives_a_round_trip_through_the_store(tmp_path: Path) -> None:
    from evalplat.store import Store

    original = load_testset(
        _qrels(tmp_path / "qrels.txt", JUDGMENTS),
        _queries_jsonl(tmp_path / "q.jsonl", QUERIES),
        _docs(tmp_path / "d.jsonl", DOCS),
    )
    with Store.init(f"sqlite:///{tmp_path / 'evalplat.db'}") as store:
        store.import_test_set("shop", original)
        loaded = store.load_test_set("shop")
    assert loaded.content_hash() == original.content_hash()
    assert loaded.corpus_hash() == original.corpus_hash()
