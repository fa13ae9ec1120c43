"""A query's latency is measured from its send, not from when it was queued: four threads
sharing one engine process wait for it in turn, and that wait is not the engine's time. The
``http`` searcher times the request from its first byte out to the answer's last."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

from evalplat.running import runner
from evalplat.searchers import SearchContext, get_kind
from evalplat.searchers.base import begin_request_timing, request_ms
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

QUERIES = 40
ENGINE_MS = 20
ENGINE = f"""
import json
import sys
import time

for line in sys.stdin:
    request = json.loads(line)
    time.sleep({ENGINE_MS} / 1000)
    topic = request["query"].split()[-1]
    answer = {{"query_id": request["query_id"], "results": [["d" + topic, 1.0]]}}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
"""


def content() -> TestSetContent:
    ids = [f"q{n}" for n in range(QUERIES)]
    return TestSetContent(
        queries=pd.DataFrame({"query_id": ids, "text": [f"topic {n}" for n in range(QUERIES)],
                              "weight": [float("nan")] * QUERIES, "tags": [None] * QUERIES}),
        judgments=pd.DataFrame({"query_id": ids, "doc_id": [f"d{n}" for n in range(QUERIES)],
                                "grade": [1] * QUERIES, "source": [None] * QUERIES}),
    )  # fmt: skip


def test_waiting_for_a_busy_engine_process_is_not_latency(store: Store, tmp_path: Path) -> None:
    engine = tmp_path / "slow_engine.py"
    engine.write_text(ENGINE, encoding="utf-8")
    store.import_test_set("topics", content())
    store.add_config("one-process", "command",
                     {"command": [sys.executable, str(engine)], "processes": 1})  # fmt: skip
    started = time.perf_counter()
    info = runner.run(store, "one-process", "topics",
                      settings=runner.RunSettings(concurrency=4))  # fmt: skip
    elapsed = time.perf_counter() - started
    # one process answers one query at a time: the run took at least every query's 20 ms
    assert elapsed >= QUERIES * ENGINE_MS / 1000
    # a query queued behind three others waited about 60 ms; its latency is its own 20 ms
    assert ENGINE_MS <= info.means["Latency"] < 2 * ENGINE_MS, info.means


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(0.05)
        body = json.dumps({"hits": {"hits": [{"_id": "d1", "_score": 1.0}]}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/docs/_search"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_http_searcher_times_the_request_on_the_wire(server: str) -> None:
    params = {"preset": "elasticsearch", "url": server}
    with get_kind("http").create(params, SearchContext()) as searcher:
        begin_request_timing()
        assert request_ms() is None
        assert searcher.search("q1", "wing flutter", 10) == [("d1", 1.0)]
        sent = request_ms()
    assert sent is not None and 50.0 <= sent < 1000.0
