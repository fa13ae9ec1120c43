"""The http searcher's probe before a run is configurable, and what only the environment or a
query can break is found when the searcher is made or fails that query alone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalplat.errors import InputError
from evalplat.searchers import SearchError, create_searcher

from .json_engine import EngineServer, engine_server


@pytest.fixture
def server() -> Iterator[EngineServer]:
    with engine_server() as running:
        yield running


def test_the_probe_sends_the_configured_text(server: EngineServer) -> None:
    params = {"url": f"{server.url}/search", "results_path": "items",
              "query_params": {"q": "{{ query }}"}, "probe": "healthcheck do-not-log"}  # fmt: skip
    with create_searcher("http", params) as searcher:
        searcher.check()
    [probe] = server.requests
    assert probe["query"] == {"q": ["healthcheck do-not-log"]}


def test_by_default_the_probe_is_the_word_evalplat(server: EngineServer) -> None:
    params = {"url": f"{server.url}/search", "results_path": "items",
              "query_params": {"q": "{{ query }}"}}  # fmt: skip
    with create_searcher("http", params) as searcher:
        searcher.check()
    assert [r["query"] for r in server.requests] == [{"q": ["evalplat"]}]


def test_probe_false_sends_nothing_before_the_run(server: EngineServer) -> None:
    params = {"url": f"{server.url}/search", "results_path": "items", "probe": False}
    with create_searcher("http", params) as searcher:
        searcher.check()
        assert server.requests == []
        assert searcher.search("q1", "wing", 2) == [("d1", 2.0), ("d2", 1.0)]
    assert len(server.requests) == 1


def test_probe_false_from_the_command_line_is_false() -> None:
    from evalplat.searchers import validate_config
    from evalplat.searchers.configs import parse_params

    params = parse_params(["url=http://127.0.0.1:9/x", "results_path=items", "probe=false"])
    assert validate_config("http", params)["probe"] is False


def test_a_url_scheme_from_the_environment_is_checked_when_the_searcher_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_ENGINE", "file:///etc")
    with pytest.raises(InputError, match="must start with http:// or https://"):
        create_searcher("http", {"url": "${EVALPLAT_TEST_ENGINE}/x", "results_path": "items"})


def test_a_template_that_fails_for_one_query_fails_that_query(server: EngineServer) -> None:
    params = {"url": f"{server.url}/search", "results_path": "items",
              "query_params": {"per_char": "{{ 100 // (query|length) }}"}}  # fmt: skip
    with create_searcher("http", params) as searcher:
        assert searcher.search("q1", "wing", 1) == [("d1", 2.0), ("d2", 1.0)]
        with pytest.raises(SearchError, match="query 'q2': a request template failed"):
            searcher.search("q2", "", 1)
    assert [r["query"] for r in server.requests] == [{"per_char": ["25"]}]


def test_a_query_that_makes_the_url_invalid_fails_that_query(server: EngineServer) -> None:
    params = {"url": f"{server.url}/search/{{{{ query }}}}", "results_path": "items"}
    with create_searcher("http", params) as searcher:
        with pytest.raises(SearchError, match="query 'q1': the rendered url is not a valid URL"):
            searcher.search("q1", "bell\x07", 1)
        assert searcher.search("q2", "wing", 1) == [("d1", 2.0), ("d2", 1.0)]
    assert [r["path"] for r in server.requests] == ["/search/wing"]
