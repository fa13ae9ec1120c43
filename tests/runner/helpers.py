"""Small test sets, configs and a misbehaving HTTP search server for the runner tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pandas as pd

from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

# Ten queries; query qN has relevant documents dN (grade 2) and dN+1 (grade 1).
QUERY_IDS = [f"q{n}" for n in range(10)]


def small_content(grades: dict[tuple[str, str], int] | None = None) -> TestSetContent:
    """Queries q0..q9 with text 'topic N'; judgments as above, overridden by ``grades``."""
    queries = pd.DataFrame(
        {
            "query_id": QUERY_IDS,
            "text": [f"topic {n}" for n in range(10)],
            "weight": [float("nan")] * 10,
            "tags": [None] * 10,
        }
    )
    judged: dict[tuple[str, str], int] = {}
    for n in range(10):
        judged[(f"q{n}", f"d{n}")] = 2
        judged[(f"q{n}", f"d{n + 1}")] = 1
    judged.update(grades or {})
    judgments = pd.DataFrame(
        [(q, d, g, None) for (q, d), g in sorted(judged.items())],
        columns=["query_id", "doc_id", "grade", "source"],
    )
    judgments["grade"] = judgments["grade"].astype("int64")
    return TestSetContent(queries=queries, judgments=judgments)


def new_run(store: Store) -> tuple[int, int]:
    """A running run of config ``engine`` over test set ``small`` (``small_content``), 10
    queries at depth 10: its id and the test set version's."""
    store.import_test_set("small", small_content())
    store.add_config("engine", "python", {"function": "json:loads"})
    version_id = store.test_set_version_id("small")
    run_id = store.create_run(
        store.config_version_id("engine"), version_id, depth=10, queries_total=10
    )
    return run_id, version_id


def ranking(query_id: str, depth: int = 5) -> list[dict[str, Any]]:
    """The server's answer for a query: for qN, documents dN+1, dN, d(N+2).. scored downwards."""
    n = int(query_id[1:]) if query_id[1:].isdigit() else 0
    docs = [f"d{n + 1}", f"d{n}"] + [f"d{n + k}" for k in range(2, 40)]
    return [{"_id": doc, "_score": 100.0 - rank} for rank, doc in enumerate(docs[:depth])]


class SearchServer(ThreadingHTTPServer):
    """An Elasticsearch-like ``POST /<mode>/_search``; ``mode`` picks how it behaves.

    ``ok``: answers at once; ``slow``: sleeps ``delay`` seconds first, and with ``hold_after``
    answers no more than that many topic queries until ``release`` is set; ``flaky``: the first
    request of each query gets a 503; ``broken``: q3 never answers while the server runs, q5 gets
    malformed JSON, q7 is shed with 503 every time; other queries answer normally.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, delay: float = 0.0, hold_after: int | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = delay
        self.hold_after = hold_after
        self.lock = threading.Lock()
        self.seen: dict[str, int] = {}
        self.release = threading.Event()  # set when the server stops

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def count(self, query_id: str) -> int:
        with self.lock:
            return self.seen.get(query_id, 0)


class _Handler(BaseHTTPRequestHandler):
    server: SearchServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        mode = self.path.strip("/").split("/")[0]
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        text = body.get("query", {}).get("multi_match", {}).get("query", "")
        query_id = "q" + text.split()[-1] if text.startswith("topic") else "probe"
        with self.server.lock:
            attempt = self.server.seen[query_id] = self.server.seen.get(query_id, 0) + 1
        if mode == "slow":
            time.sleep(self.server.delay)
            if self.server.hold_after is not None and query_id != "probe":
                with self.server.lock:
                    answered = sum(n for q, n in self.server.seen.items() if q != "probe")
                if answered > self.server.hold_after:
                    self.server.release.wait(timeout=60)
        if mode == "flaky" and attempt == 1 and query_id != "probe":
            return self._send(503, b'{"error": "shedding load"}')
        if mode == "broken":
            if query_id == "q3":  # never answers while the test runs: the client must time out
                self.server.release.wait(timeout=60)
            if query_id == "q5":
                return self._send(200, b'{"hits": {"hits": [ oops')
            if query_id == "q7":
                return self._send(503, b'{"error": "overloaded"}')
        hits = ranking(query_id, int(body.get("size", 5)))
        self._send(200, json.dumps({"hits": {"hits": hits}}).encode())

    def _send(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to answer


@contextmanager
def search_server(delay: float = 0.0, hold_after: int | None = None) -> Iterator[SearchServer]:
    server = SearchServer(delay, hold_after)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def es_params(server_url: str, mode: str, **extra: Any) -> dict[str, Any]:
    return {"preset": "elasticsearch", "url": f"{server_url}/{mode}", **extra}
