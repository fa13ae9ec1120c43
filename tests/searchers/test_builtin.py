"""The builtin SQLite FTS5 BM25 searcher over a small corpus written in the test."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.searchers import SearchContext, get_kind

DOCS: list[dict[str, Any]] = [
    {"doc_id": "d1", "title": "Boundary layer flows", "text": "laminar flow over a flat plate"},
    {"doc_id": "d2", "title": "Heat transfer", "text": "heat conduction in composite slabs"},
    {"doc_id": "d3", "title": "Shock waves", "text": "the boundary layer interacts with a shock"},
    {"doc_id": "d4", "title": "Wings", "text": "supersonic wing design and flutter"},
    {"id": "d5", "fields": {"title": "Flow", "text": "flowing flows of a boundary"}},
]


def make(tmp_path: Path, documents: Any = DOCS, **params: Any) -> Any:
    context = SearchContext(documents=documents, corpus_key="test", cache_dir=tmp_path)
    return get_kind("builtin").create(params, context)


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [doc_id for doc_id, _ in hits]


def test_porter_stemming_matches_other_word_forms(tmp_path: Path) -> None:
    with make(tmp_path) as stemmed, make(tmp_path, tokenizer="unicode61") as plain:
        assert set(ids(stemmed.search("q", "flowing", 10))) == {"d1", "d5"}
        assert ids(plain.search("q", "flowing", 10)) == ["d5"]


def test_scores_are_higher_is_better_and_in_descending_order(tmp_path: Path) -> None:
    with make(tmp_path) as searcher:
        hits = searcher.search("q", "boundary layer", 10)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    assert ids(hits)[:2] in (["d1", "d3"], ["d3", "d1"])  # both terms beat one term


def test_and_operator_needs_every_term(tmp_path: Path) -> None:
    with make(tmp_path) as any_term, make(tmp_path, operator="and") as all_terms:
        assert set(ids(any_term.search("q", "boundary shock", 10))) == {"d1", "d3", "d5"}
        assert ids(all_terms.search("q", "boundary shock", 10)) == ["d3"]


def test_depth_limits_the_number_of_hits(tmp_path: Path) -> None:
    with make(tmp_path) as searcher:
        assert len(searcher.search("q", "boundary flow heat", 2)) == 2
        assert searcher.search("q", "boundary", 0) == []


def test_fts_syntax_in_the_query_is_treated_as_words(tmp_path: Path) -> None:
    with make(tmp_path) as searcher:
        expression = searcher.match_expression('title:heat NEAR("x" ')
        assert expression == '"title" OR "heat" OR "NEAR" OR "x"'
        assert ids(searcher.search("q", 'title:heat* -NEAR(" OR', 10)) == ["d2"]
        assert searcher.search("q", "  ?!* ", 10) == []


def test_weights_boost_a_field(tmp_path: Path) -> None:
    docs = [
        {"doc_id": "in-title", "title": "heat", "text": "cold water"},
        {"doc_id": "in-text", "title": "cold water", "text": "heat"},
    ]
    tmp_path = tmp_path / "own-corpus"  # the corpus key "test" must name one corpus per folder
    with make(tmp_path, docs, weights="title=10,text=1") as title_first:
        assert ids(title_first.search("q", "heat", 10)) == ["in-title", "in-text"]
    with make(tmp_path, docs, weights={"title": 1, "text": 10}) as text_first:
        assert ids(text_first.search("q", "heat", 10)) == ["in-text", "in-title"]


def test_weights_naming_an_unknown_field_list_the_fields(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"field 'abstract'.*fields: text, title"):
        make(tmp_path, weights="abstract=2")


def test_trigram_tokenizer_matches_substrings(tmp_path: Path) -> None:
    with make(tmp_path, tokenizer="trigram") as searcher:
        assert set(ids(searcher.search("q", "ounda", 10))) == {"d1", "d3", "d5"}
        assert searcher.search("q", "of a", 10) == []  # tokens under 3 characters cannot match


def test_index_is_built_once_per_corpus_and_tokenizer(tmp_path: Path) -> None:
    with make(tmp_path) as first:
        index = first.index_path
    built = index.stat().st_mtime_ns
    with make(tmp_path, operator="and", weights="title=2") as second:
        assert second.index_path == index
    assert index.stat().st_mtime_ns == built
    assert index.name == "builtin-test-porter.sqlite"
    with make(tmp_path, tokenizer="unicode61") as other:
        assert other.index_path != index
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "builtin-test-porter.sqlite",
        "builtin-test-unicode61.sqlite",
    ]  # no temporary file left behind


def test_a_leftover_partial_build_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "builtin-test-porter.sqlite.partial.tmp").write_bytes(b"half an index")
    with make(tmp_path) as searcher:
        assert ids(searcher.search("q", "heat", 10)) == ["d2"]


def test_dataframe_documents_and_a_content_hash_key(tmp_path: Path) -> None:
    frame = pd.DataFrame([{"doc_id": d.get("doc_id", "d5"), "title": "t"} for d in DOCS])
    frame.loc[1, "title"] = "heat"
    context = SearchContext(documents=frame, cache_dir=tmp_path)
    with get_kind("builtin").create({}, context) as searcher:
        assert ids(searcher.search("q", "heat", 10)) == ["d2"]
        assert searcher.index_path.name.startswith("builtin-")


def test_without_documents_the_error_says_to_import_them(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--docs"):
        make(tmp_path, documents=None)


def test_duplicate_document_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="duplicate doc id 'd1'"):
        make(tmp_path, documents=[DOCS[0], DOCS[0]])


def test_threads_share_the_index_with_their_own_connections(tmp_path: Path) -> None:
    with make(tmp_path) as searcher:
        expected = searcher.search("q", "boundary layer flow", 10)
        results: list[list[tuple[str, float]]] = []
        lock = threading.Lock()

        def worker() -> None:
            for _ in range(20):
                hits = searcher.search("q", "boundary layer flow", 10)
                with lock:
                    results.append(hits)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 80
    assert all(hits == expected for hits in results)


def test_without_a_cache_dir_a_private_folder_is_used_and_removed(tmp_path: Path) -> None:
    searcher = get_kind("builtin").create({}, SearchContext(documents=DOCS))
    folder = searcher.index_path.parent
    assert ids(searcher.search("q", "heat", 10)) == ["d2"]
    searcher.close()
    assert not folder.exists()


def test_fields_stored_as_json_text_are_indexed_as_their_own_columns(tmp_path: Path) -> None:
    docs = [
        {"doc_id": "a", "title": "wings", "fields": '{"author": "smith", "year": 1962}'},
        {"doc_id": "b", "title": "smith chart", "fields": None},
    ]
    with make(tmp_path, docs, weights="author=5") as searcher:
        assert searcher.fields == ["author", "title"]  # the number is not text
        assert ids(searcher.search("q", "smith", 10)) == ["a", "b"]
