"""An engine's identity (``evalplat.searchers.engines``): the endpoint a config searches,
the same for every config on it, with no secret in it, and none for a local searcher."""

from __future__ import annotations

import pytest

from evalplat.searchers import engine_of


@pytest.mark.parametrize(
    ("url", "engine"),
    [
        ("http://127.0.0.1:9200/products/_search", "http://127.0.0.1:9200"),
        ("http://127.0.0.1:9200/other?fmt=json", "http://127.0.0.1:9200"),
        ("HTTPS://Search.Example.com/a", "https://search.example.com:443"),
        ("https://search.example.com:443/b", "https://search.example.com:443"),
        ("http://user:secret@es.internal/x", "http://es.internal:80"),
        ("http://[::1]:8983/solr/core", "http://[::1]:8983"),
        ("{{ base }}/search", None),  # a templated host: nothing shared is known
        ("http://${SEARCH_HOST}/search", None),
        ("http://host:notaport/x", None),
    ],
)
def test_an_http_engine_is_its_scheme_host_and_port(url: str, engine: str | None) -> None:
    assert engine_of("http", {"url": url, "results_path": "hits"}) == engine


def test_a_sql_engine_is_its_database_url_without_the_password() -> None:
    with_password = {"url": "postgresql://app:s3cret@db:5432/shop?sslmode=require", "query": ""}
    without = {"url": "postgresql+psycopg://app@db:5432/shop", "query": ""}
    assert engine_of("sql", with_password) == "postgresql+psycopg://app@db:5432/shop"
    assert engine_of("sql", with_password) == engine_of("sql", without)
    assert "s3cret" not in str(engine_of("sql", with_password))
    assert engine_of("sql", {"url": "${SEARCH_DB}", "query": ""}) is None


@pytest.mark.parametrize("searcher", ["python", "builtin", "command"])
def test_a_local_searcher_has_no_engine(searcher: str) -> None:
    assert engine_of(searcher, {"function": "engine:search", "argv": ["search"]}) is None
