"""The http searcher against a real HTTP server on 127.0.0.1 started by the test.

The server plays Elasticsearch and Solr, and misbehaves on purpose: slow answers, load shedding
with 503 then success, 429 with Retry-After, malformed JSON, missing result paths, 4xx errors.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from evalplat.searchers import (
    BackendUnavailableError,
    RetryPolicy,
    SearchContext,
    SearchError,
    TransientSearchError,
    call_with_retries,
    get_kind,
)
from evalplat.searchers.http import parse_retry_after

CORPUS = ["d1", "d2", "d3", "d4", "d5"]


class Handler(BaseHTTPRequestHandler):
    server: FakeSearchServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self.handle_request()

    def do_POST(self) -> None:
        self.handle_request()

    def handle_request(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        with self.server.lock:
            self.server.requests.append(
                {
                    "method": self.command,
                    "path": url.path,
                    "query": parse_qs(url.query),
                    "headers": dict(self.headers),
                    "body": body,
                }
            )
            hits = self.server.hits[url.path] = self.server.hits.get(url.path, 0) + 1
        route = url.path.strip("/").split("/")[0]
        getattr(self, f"route_{route.replace('-', '_')}")(url, body, hits)

    def send(self, status: int, payload: bytes | str | dict[str, Any], **headers: str) -> None:
        data = (
            payload
            if isinstance(payload, bytes)
            else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
        )
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def es_answer(self, size: int) -> dict[str, Any]:
        hits = [{"_id": doc, "_score": 10.0 - n} for n, doc in enumerate(CORPUS[:size])]
        return {"took": 1, "hits": {"hits": hits}}

    def route_es(self, url: Any, body: str, hits: int) -> None:
        self.send(200, self.es_answer(json.loads(body)["size"]))

    def route_solr(self, url: Any, body: str, hits: int) -> None:
        rows = int(parse_qs(url.query)["rows"][0])
        docs = [{"id": doc, "score": 3.5 - n} for n, doc in enumerate(CORPUS[:rows])]
        self.send(200, {"responseHeader": {"status": 0}, "response": {"docs": docs}})

    def route_shedding(self, url: Any, body: str, hits: int) -> None:
        if hits <= 2:
            self.send(503, "overloaded")
        else:
            self.send(200, self.es_answer(2))

    def route_throttled(self, url: Any, body: str, hits: int) -> None:
        self.send(429, {"error": "slow down"}, Retry_After="2")

    def route_throttled_until(self, url: Any, body: str, hits: int) -> None:
        self.send(503, "maintenance", Retry_After=formatdate(time.time() + 30, usegmt=True))

    def route_slow(self, url: Any, body: str, hits: int) -> None:
        time.sleep(0.3)
        self.send(200, self.es_answer(1))

    def route_malformed(self, url: Any, body: str, hits: int) -> None:
        self.send(200, b'{"hits": {"hits": [{"_id": "d1", ')

    def route_wrong_shape(self, url: Any, body: str, hits: int) -> None:
        self.send(200, {"took": 1, "result": []})

    def route_bad_request(self, url: Any, body: str, hits: int) -> None:
        self.send(400, {"error": "query_shard_exception: unknown field [tittle]"})

    def route_secure(self, url: Any, body: str, hits: int) -> None:
        if self.headers.get("Authorization") != "Bearer tok-123":
            self.send(401, {"error": "missing credentials"})
        else:
            self.send(200, self.es_answer(json.loads(body)["size"]))

    def route_echo(self, url: Any, body: str, hits: int) -> None:
        self.send(200, {"items": [{"doc": {"key": body}, "relevance": None}]})


class FakeSearchServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.hits: dict[str, int] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeSearchServer]:
    instance = FakeSearchServer()
    thread = threading.Thread(target=instance.serve_forever, daemon=True)
    thread.start()
    yield instance
    instance.shutdown()
    instance.server_close()


def http(concurrency: int = 1, **params: Any) -> Any:
    return get_kind("http").create(params, SearchContext(concurrency=concurrency))


def es(server: FakeSearchServer, path: str, **params: Any) -> Any:
    return http(url=f"{server.url}/{path}", preset="elasticsearch", **params)


def test_elasticsearch_preset_posts_multi_match_and_reads_hits(server: FakeSearchServer) -> None:
    with es(server, "es/products", fields=["title^2", "text"]) as searcher:
        hits = searcher.search("q1", 'say "hi" \\ }', 3)
    assert hits == [("d1", 10.0), ("d2", 9.0), ("d3", 8.0)]
    request = server.requests[-1]
    assert (request["method"], request["path"]) == ("POST", "/es/products/_search")
    assert request["headers"]["Content-Type"] == "application/json"
    body = json.loads(request["body"])
    assert body["size"] == 3
    assert body["query"]["multi_match"] == {"query": 'say "hi" \\ }', "fields": ["title^2", "text"]}


def test_solr_preset_sends_select_params_and_reads_docs(server: FakeSearchServer) -> None:
    with http(url=f"{server.url}/solr/core1/", preset="solr", fields="title text") as searcher:
        hits = searcher.search("q2", "heat & flow", 2)
    assert hits == [("d1", 3.5), ("d2", 2.5)]
    request = server.requests[-1]
    assert (request["method"], request["path"]) == ("GET", "/solr/core1/select")
    assert request["query"]["q"] == ["heat & flow"]
    assert request["query"]["rows"] == ["2"]
    assert request["query"]["qf"] == ["title text"]


def test_headers_come_from_env_and_are_stored_unexpanded(
    server: FakeSearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_ES_TOKEN", "tok-123")
    params = {
        "url": f"{server.url}/secure",
        "preset": "opensearch",
        "headers": {"Authorization": "Bearer ${EVALPLAT_TEST_ES_TOKEN}"},
    }
    kind = get_kind("http")
    stored = kind.validate(params)
    assert stored["headers"]["Authorization"] == "Bearer ${EVALPLAT_TEST_ES_TOKEN}"
    with kind.create(stored) as searcher:
        searcher.check()
        assert searcher.search("q", "x", 1) == [("d1", 10.0)]
    assert server.requests[-1]["headers"]["Authorization"] == "Bearer tok-123"


def test_check_fails_fast_on_refused_credentials(server: FakeSearchServer) -> None:
    with (
        es(server, "secure") as searcher,
        pytest.raises(BackendUnavailableError, match=r"HTTP 401.*missing credentials"),
    ):
        searcher.check()


def test_missing_env_variable_is_named_before_any_request() -> None:
    with pytest.raises(Exception, match="EVALPLAT_TEST_UNSET_TOKEN is not set"):
        http(
            url="http://127.0.0.1:9/x",
            results_path="hits",
            headers={"Authorization": "${EVALPLAT_TEST_UNSET_TOKEN}"},
        )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_backend_fails_check_and_search_is_transient() -> None:
    url = f"http://127.0.0.1:{free_port()}/idx"
    with es_unbound(url) as searcher:
        with pytest.raises(
            BackendUnavailableError, match=r"cannot reach the server \(ConnectError"
        ):
            searcher.check()
        with pytest.raises(TransientSearchError):
            searcher.search("q", "x", 1)


def es_unbound(url: str) -> Any:
    return http(url=url, preset="elasticsearch", timeout=2)


def test_load_shedding_503s_are_retried_until_success(server: FakeSearchServer) -> None:
    slept: list[float] = []
    with es(server, "shedding") as searcher:
        with pytest.raises(TransientSearchError, match="HTTP 503") as first:
            searcher.search("q", "x", 2)
        assert first.value.retry_after is None
        hits = call_with_retries(
            lambda: searcher.search("q", "x", 2), RetryPolicy(jitter=False), sleep=slept.append
        )
    assert hits == [("d1", 10.0), ("d2", 9.0)]
    assert slept == [0.5]  # the second 503, then success
    assert server.hits["/shedding/_search"] == 3


def test_429_carries_retry_after_seconds(server: FakeSearchServer) -> None:
    with es(server, "throttled") as searcher, pytest.raises(TransientSearchError) as error:
        searcher.search("q", "x", 1)
    assert error.value.retry_after == 2.0
    assert "HTTP 429" in str(error.value)


def test_retry_after_as_an_http_date(server: FakeSearchServer) -> None:
    with es(server, "throttled-until") as searcher, pytest.raises(TransientSearchError) as error:
        searcher.search("q", "x", 1)
    assert error.value.retry_after is not None
    assert 25 < error.value.retry_after <= 30


def test_retry_after_parsing_rules() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_slow_server_times_out_as_transient(server: FakeSearchServer) -> None:
    with (
        es(server, "slow", timeout=0.1) as searcher,
        pytest.raises(TransientSearchError, match=r"timed out after 0\.1s"),
    ):
        searcher.search("q", "x", 1)
    with es(server, "slow", timeout=5) as patient:
        assert patient.search("q", "x", 1) == [("d1", 10.0)]


def test_malformed_json_is_permanent_and_quotes_the_start(server: FakeSearchServer) -> None:
    with es(server, "malformed") as searcher, pytest.raises(SearchError) as error:
        searcher.search("q7", "x", 1)
    assert not isinstance(error.value, TransientSearchError)
    assert "not JSON" in str(error.value)
    assert '{"hits": {"hits": [{"_id": "d1",' in str(error.value)


def test_missing_results_path_names_the_path(server: FakeSearchServer) -> None:
    with es(server, "wrong-shape") as searcher, pytest.raises(SearchError) as error:
        searcher.search("q", "x", 1)
    assert "response has no 'hits'" in str(error.value)
    assert "keys took, result" in str(error.value)


def test_client_errors_are_permanent_and_quote_the_body(server: FakeSearchServer) -> None:
    with es(server, "bad-request") as searcher, pytest.raises(SearchError) as error:
        searcher.search("q", "x", 1)
    assert not isinstance(error.value, TransientSearchError)
    assert "HTTP 400" in str(error.value) and "unknown field [tittle]" in str(error.value)


def test_custom_body_table_keeps_native_types_and_paths_reach_nested_fields(
    server: FakeSearchServer,
) -> None:
    params = {
        "url": f"{server.url}/echo",
        "method": "POST",
        "body": {"q": "{{ query }}", "n": "{{ depth }}", "label": "id={{ query_id }}", "k": [1]},
        "results_path": "items[]",
        "id_field": "doc.key",
        "score_field": "relevance",
    }
    with http(**params) as searcher:
        hits = searcher.search("q9", "hello", 7)
    sent = json.loads(server.requests[-1]["body"])
    assert sent == {"q": "hello", "n": 7, "label": "id=q9", "k": [1]}
    assert hits == [(server.requests[-1]["body"], 1.0)]  # null score: derived from the rank


def test_invalid_json_body_template_is_reported_before_sending(server: FakeSearchServer) -> None:
    before = len(server.requests)
    with (
        http(
            url=f"{server.url}/echo",
            method="POST",
            body='{"q": "{{ query }}"}',
            results_path="items",
        ) as searcher,
        pytest.raises(SearchError, match="not valid JSON"),
    ):
        searcher.search("q", 'a "quoted" word', 1)  # without |tojson the quote breaks the JSON
    assert len(server.requests) == before


def test_concurrent_threads_share_one_pooled_client(server: FakeSearchServer) -> None:
    results: list[list[tuple[str, float]]] = []
    lock = threading.Lock()
    with http(concurrency=4, url=f"{server.url}/es/i", preset="elasticsearch") as searcher:

        def worker(n: int) -> None:
            for _ in range(10):
                hits = searcher.search(f"q{n}", "x", 4)
                with lock:
                    results.append(hits)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 60
    assert all(hits == results[0] for hits in results)
    assert len(results[0]) == 4


def test_preset_suffix_is_not_added_twice_and_explicit_params_win(
    server: FakeSearchServer,
) -> None:
    with es(server, "es/idx/_search", score_field="") as searcher:
        hits = searcher.search("q", "x", 2)
    assert server.requests[-1]["path"] == "/es/idx/_search"
    assert hits == [("d1", 2.0), ("d2", 1.0)]  # no score field: scores follow the rank


def test_secrets_are_put_in_after_templating_and_never_read_as_templates(
    server: FakeSearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_SECRET", 'a{{7*7}}b"{%')
    params = {
        "url": f"{server.url}/echo",
        "method": "POST",
        "headers": {"X-Token": "${EVALPLAT_TEST_SECRET}"},
        "query_params": {"q": "{{ query }}", "key": "${EVALPLAT_TEST_SECRET}"},
        "body": {"token": "${EVALPLAT_TEST_SECRET}", "q": "{{ query }}"},
        "results_path": "items[]",
        "id_field": "doc.key",
    }
    with http(**params) as searcher:
        searcher.search("q1", "costs ${EVALPLAT_TEST_SECRET} {{ 1+1 }}", 3)
    request = server.requests[-1]
    assert request["headers"]["X-Token"] == 'a{{7*7}}b"{%'
    assert request["query"]["key"] == ['a{{7*7}}b"{%']
    # the query text is sent as typed: a placeholder in it is not a secret to expand
    assert request["query"]["q"] == ["costs ${EVALPLAT_TEST_SECRET} {{ 1+1 }}"]
    assert json.loads(request["body"]) == {
        "token": 'a{{7*7}}b"{%',
        "q": "costs ${EVALPLAT_TEST_SECRET} {{ 1+1 }}",
    }


def test_a_string_body_gets_the_secret_verbatim(
    server: FakeSearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_SECRET", "{{ oops")
    params = {
        "url": f"{server.url}/echo",
        "method": "POST",
        "body": '{"q": {{ query|tojson }}, "key": "${EVALPLAT_TEST_SECRET}"}',
        "results_path": "items[]",
        "id_field": "doc.key",
    }
    with http(**params) as searcher:
        searcher.search("q1", "x", 1)
    assert json.loads(server.requests[-1]["body"]) == {"q": "x", "key": "{{ oops"}


def test_invalid_json_message_masks_the_secret(
    server: FakeSearchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_SECRET", "hunter2")
    params = {
        "url": f"{server.url}/echo",
        "method": "POST",
        "body": '{"key": "${EVALPLAT_TEST_SECRET}", "q": {{ query }}}',
        "results_path": "items",
    }
    with http(**params) as searcher, pytest.raises(SearchError) as error:
        searcher.search("q1", "two words", 1)
    assert "hunter2" not in str(error.value) and "***" in str(error.value)
