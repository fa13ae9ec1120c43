"""Bulk loads keep every value exactly, including the characters COPY text must escape."""

from __future__ import annotations

import json
from pathlib import Path

from evalplat.store import Store
from evalplat.testsets.content import load_testset

AWKWARD = ["tab\there", "new\nline", "back\\slash \\N", "carriage\rreturn", "ünïcödé ✓", ""]


def test_awkward_text_and_missing_values_round_trip(store: Store, tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "text": text, **({"weight": 2.5} if i == 0 else {})}) + "\n"
            for i, text in enumerate(AWKWARD)
        ),
        encoding="utf-8",
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} {i % 3}\n" for i in range(len(AWKWARD))), "utf-8")
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        json.dumps({"id": "d0", "title": "a\tb", "text": "x\\y", "meta": {"k": [1, None]}}) + "\n",
        encoding="utf-8",
    )
    content = load_testset(qrels, queries=queries, docs=docs)
    store.import_test_set("awkward", content)
    loaded = store.load_test_set("awkward")
    by_id = dict(zip(loaded.queries["query_id"], loaded.queries["text"], strict=True))
    assert [by_id[f"q{i}"] for i in range(len(AWKWARD))] == AWKWARD
    weights = dict(zip(loaded.queries["query_id"], loaded.queries["weight"], strict=True))
    assert weights["q0"] == 2.5 and all(weights[f"q{i}"] != weights[f"q{i}"] for i in range(1, 6))
    assert loaded.documents is not None
    document = loaded.documents.iloc[0]
    assert (document["title"], document["text"]) == ("a\tb", "x\\y")
    assert json.loads(document["fields"]) == {"meta": {"k": [1, None]}}
    assert loaded.content_hash() == content.content_hash()
