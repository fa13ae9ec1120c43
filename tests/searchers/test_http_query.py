"""The http searcher keeps the url's query string, and no secret comes back in a message.

Against a real JSON engine on 127.0.0.1 (``json_engine``): the url's parameters are sent, with
``${ENV}`` placeholders in them expanded as in headers, merged with the preset's or the given
``query_params``; an engine that echoes the request in its error body gets the secrets
redacted from every message that quotes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.searchers import (
    BackendUnavailableError,
    SearchContext,
    SearchError,
    get_kind,
    validate_config,
)

from .json_engine import EngineServer, engine_server

SECRET = "s3cr&t #key=/+x"


@pytest.fixture(scope="module")
def engine() -> Iterator[EngineServer]:
    with engine_server() as server:
        yield server


@pytest.fixture(autouse=True)
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_API_KEY", SECRET)


def http(**params: Any) -> Any:
    kind = get_kind("http")
    return kind.create(kind.validate(params), SearchContext(concurrency=1))


def test_the_urls_query_is_sent_with_a_secret_expanded_in_it(engine: EngineServer) -> None:
    url = f"{engine.url}/search?fmt=json&key=${{EVALPLAT_TEST_API_KEY}}&tag=a&tag=b&empty="
    with http(url=url, results_path="items", query_params={"q": "{{ query }}"}) as searcher:
        assert searcher.search("q1", "heat flow", 5) == [("d1", 2.0), ("d2", 1.0)]
    request = engine.requests[-1]
    assert request["path"] == "/search"
    assert request["raw_query"].startswith("fmt=json&key=")
    assert request["query"]["key"] == [SECRET]  # a & or # in the secret does not cut the query
    assert request["query"]["tag"] == ["a", "b"]
    assert request["query"]["q"] == ["heat flow"]
    assert "empty=" in request["raw_query"]  # kept as written


def test_a_presets_parameters_merge_with_the_urls_and_the_suffix_goes_before_the_query(
    engine: EngineServer,
) -> None:
    url = f"{engine.url}/solr/core?fq=type:book&rows=7&key=${{EVALPLAT_TEST_API_KEY}}"
    with http(url=url, preset="solr", results_path="items", id_field="id") as searcher:
        searcher.search("q1", "steel", 3)
    request = engine.requests[-1]
    assert request["path"] == "/solr/core/select"
    assert request["query"]["fq"] == ["type:book"]
    assert request["query"]["rows"] == ["7"]  # the url's own value, not the preset's
    assert request["query"]["q"] == ["steel"]
    assert request["query"]["key"] == [SECRET]


def test_a_parameter_in_the_url_and_in_query_params_is_refused() -> None:
    with pytest.raises(InputError, match="query param 'key' is given in the url and in"):
        validate_config(
            "http",
            {
                "url": "http://127.0.0.1:9/search?key=a",
                "results_path": "items",
                "query_params": {"key": "b"},
            },
        )


@pytest.mark.parametrize(
    ("part", "forms"),
    [
        ("target", ["s3cr%26t"]),  # the query string as sent, URL-encoded
        ("X-Api-Key", ["s3cr&t #key", "s3cr"]),  # a header as sent (Latin-1 on the wire)
        ("body", ["s3cr&t #key=/"]),  # a JSON body, the secret JSON-escaped
        ("Authorization", ["dXNlcjpzM2Ny"]),  # basic auth, base64 of user:secret
    ],
)
def test_a_secret_echoed_in_an_error_body_is_redacted(
    engine: EngineServer, part: str, forms: list[str]
) -> None:
    params = {
        "url": f"{engine.url}/refuse/{part}/400?key=${{EVALPLAT_TEST_API_KEY}}",
        "method": "POST",
        "headers": {"X-Api-Key": "${EVALPLAT_TEST_API_KEY}"},
        "body": '{"key": "${EVALPLAT_TEST_API_KEY}", "q": {{ query|tojson }}}',
        "auth": "user:${EVALPLAT_TEST_API_KEY}",
        "results_path": "items",
        "probe": False,
    }
    with http(**params) as searcher, pytest.raises(SearchError) as error:
        searcher.search("q1", "x", 1)
    message = str(error.value)
    assert "HTTP 400" in message and "***" in message, message
    for form in forms:
        assert form not in message, (form, message)


def test_a_refused_probe_quotes_the_engine_with_the_secret_redacted(engine: EngineServer) -> None:
    url = f"{engine.url}/refuse/target/401?key=${{EVALPLAT_TEST_API_KEY}}"
    with (
        http(url=url, results_path="items") as searcher,
        pytest.raises(BackendUnavailableError) as error,
    ):
        searcher.check()
    assert "HTTP 401" in str(error.value) and "s3cr" not in str(error.value)
