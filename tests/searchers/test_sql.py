"""The sql searcher against PostgreSQL full-text search (real server) and SQLite FTS5."""

from __future__ import annotations

import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, make_url, text

from evalplat.errors import InputError
from evalplat.searchers import (
    BackendUnavailableError,
    SearchContext,
    SearchError,
    TransientSearchError,
    get_kind,
)

DOCS = [
    ("d1", "Boundary layer flows", "laminar flow over a flat plate"),
    ("d2", "Heat transfer", "heat conduction in composite slabs"),
    ("d3", "Shock waves", "the boundary layer interacts with a shock wave"),
    ("d4", "Wings", "supersonic wing design"),
]


@pytest.fixture
def pg_table(postgres_server: Any) -> Iterator[tuple[str, str]]:
    """(database URL, table name) of a uniquely named documents table, dropped afterwards."""
    url = postgres_server.admin_url
    table = f"evalplat_sql_searcher_{uuid.uuid4().hex[:10]}"
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            text(
                f"CREATE TABLE {table} (id text PRIMARY KEY, title text, body text, "
                "tsv tsvector GENERATED ALWAYS AS "
                "(to_tsvector('english', title || ' ' || body)) STORED)"
            )
        )
        connection.execute(
            text(f"INSERT INTO {table} (id, title, body) VALUES (:id, :title, :body)"),
            [{"id": d, "title": t, "body": b} for d, t, b in DOCS],
        )
    yield url, table
    with engine.begin() as connection:
        connection.execute(text(f"DROP TABLE IF EXISTS {table}"))
    engine.dispose()


def fts_query(table: str) -> str:
    return (
        f"SELECT id, ts_rank(tsv, q) AS score FROM {table}, "
        "websearch_to_tsquery('english', :query) AS q "
        "WHERE tsv @@ q ORDER BY score DESC, id LIMIT :depth"
    )


def sql(concurrency: int = 1, **params: Any) -> Any:
    return get_kind("sql").create(params, SearchContext(concurrency=concurrency))


@pytest.mark.postgres
def test_postgres_full_text_search_returns_ranked_rows(pg_table: tuple[str, str]) -> None:
    url, table = pg_table
    with sql(url=url, query=fts_query(table)) as searcher:
        searcher.check()
        hits = searcher.search("q1", "boundary layer shock", 10)
        assert [doc for doc, _ in hits] == ["d3"]  # websearch syntax: all terms required
        hits = searcher.search("q2", "boundary or heat", 10)
        assert {doc for doc, _ in hits} == {"d1", "d2", "d3"}
        scores = [score for _, score in hits]
        assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
        assert len(searcher.search("q3", "boundary or heat", 2)) == 2
        # the query text is a bound parameter: SQL in it is just words
        assert searcher.search("q4", f"'; DROP TABLE {table}; --", 10) == []
        assert searcher.search("q5", "boundary", 10) != []


@pytest.mark.postgres
def test_postgres_url_placeholders_are_expanded_and_never_shown(
    pg_table: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, table = pg_table
    parsed = make_url(url)
    monkeypatch.setenv("EVALPLAT_TEST_PG_HOST", parsed.host or "127.0.0.1")
    templated = parsed.set(host="PLACEHOLDER").render_as_string(hide_password=False)
    templated = templated.replace("PLACEHOLDER", "${EVALPLAT_TEST_PG_HOST}")
    with sql(url=templated, query=f"SELECT id, 1 FROM {table} WHERE id = :query") as searcher:
        assert searcher.search("q", "d2", 10) == [("d2", 1.0)]
        with pytest.raises(SearchError) as error:
            searcher.search("q", "d2", -1)  # a negative LIMIT is an SQL error
    assert "${EVALPLAT_TEST_PG_HOST}" in str(error.value)


@pytest.mark.postgres
def test_postgres_sql_error_is_permanent_and_fails_the_check(pg_table: tuple[str, str]) -> None:
    url, table = pg_table
    with sql(url=url, query=f"SELECT idd FROM {table} WHERE title = :query") as searcher:
        with pytest.raises(SearchError, match='column "idd" does not exist') as error:
            searcher.search("q", "x", 1)
        assert not isinstance(error.value, TransientSearchError)
        with pytest.raises(BackendUnavailableError, match="idd"):
            searcher.check()


@pytest.mark.postgres
def test_postgres_statement_timeout_is_transient(pg_table: tuple[str, str]) -> None:
    url, _ = pg_table
    query = "SELECT 'd1', 1.0 FROM pg_sleep(2) WHERE :query <> ''"
    with (
        sql(url=url, query=query, timeout=0.2) as searcher,
        pytest.raises(TransientSearchError, match="statement timeout"),
    ):
        searcher.search("q", "x", 1)


@pytest.mark.postgres
def test_postgres_pool_serves_concurrent_threads(pg_table: tuple[str, str]) -> None:
    url, table = pg_table
    results: list[list[tuple[str, float]]] = []
    lock = threading.Lock()
    with sql(concurrency=3, url=url, query=fts_query(table)) as searcher:

        def worker() -> None:
            for _ in range(10):
                hits = searcher.search("q", "boundary or wing", 10)
                with lock:
                    results.append(hits)

        threads = [threading.Thread(target=worker) for _ in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 50
    assert all(hits == results[0] for hits in results)
    assert {doc for doc, _ in results[0]} == {"d1", "d3", "d4"}


def test_unreachable_database_fails_the_check_and_search_is_transient() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql+psycopg://nobody@127.0.0.1:{port}/none"
    with sql(url=url, query="SELECT 'd', 1 WHERE :query = ''") as searcher:
        with pytest.raises(BackendUnavailableError, match=f"127.0.0.1:{port}"):
            searcher.check()
        with pytest.raises(TransientSearchError):
            searcher.search("q", "x", 1)


@pytest.fixture
def sqlite_fts(tmp_path: Path) -> str:
    path = tmp_path / "docs.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title, body)")
    connection.executemany("INSERT INTO docs VALUES (?, ?, ?)", DOCS)
    connection.commit()
    connection.close()
    return f"sqlite:///{path}"


def test_sqlite_fts5_ranking_keeps_the_sql_order(sqlite_fts: str) -> None:
    query = (
        "SELECT id, -bm25(docs) AS score FROM docs WHERE docs MATCH :query "
        "ORDER BY score DESC LIMIT :depth"
    )
    with sql(url=sqlite_fts, query=query) as searcher:
        hits = searcher.search("q", "boundary OR heat", 10)
    assert {doc for doc, _ in hits} == {"d1", "d2", "d3"}
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_sqlite_syntax_error_is_permanent_not_transient(sqlite_fts: str) -> None:
    query = "SELECT id, -bm25(docs) FROM docs WHERE docs MATCH :query LIMIT :depth"
    with sql(url=sqlite_fts, query=query) as searcher, pytest.raises(SearchError) as error:
        searcher.search("q", 'unbalanced "quote', 10)  # FTS5 syntax error from user text
    assert not isinstance(error.value, TransientSearchError)
    assert "unterminated string" in str(error.value)


def test_single_column_rows_get_scores_from_their_rank(sqlite_fts: str) -> None:
    query = "SELECT id FROM docs WHERE :query <> '' ORDER BY id DESC LIMIT :depth"
    with sql(url=sqlite_fts, query=query) as searcher:
        assert searcher.search("q", "x", 3) == [("d4", 3.0), ("d3", 2.0), ("d2", 1.0)]


def test_query_without_the_query_parameter_is_refused(sqlite_fts: str) -> None:
    with pytest.raises(InputError, match=":query"):
        sql(url=sqlite_fts, query="SELECT id, 1 FROM docs LIMIT :depth")


def test_unknown_database_driver_is_an_input_error() -> None:
    with pytest.raises(InputError, match="nosuchdb"):
        sql(url="nosuchdb://host/db", query="SELECT :query")
