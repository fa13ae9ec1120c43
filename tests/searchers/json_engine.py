"""A JSON search engine on 127.0.0.1 for the probe and query-text tests.

Every request is recorded (method, path, query string, body). ``/search`` answers
``{"items": [{"id": "d1", "score": 2.0}, {"id": "d2", "score": 1.0}]}``; ``/by-id/QID``
answers the document ``d-QID`` first, as an engine that looks queries up by id.
``/refuse/PART/STATUS`` answers STATUS with a part of the request it got in its error (``target``,
``body`` or a header's name), as an engine quoting what it could not parse does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..alerts.servers import serving


class EngineServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: EngineServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        with self.server.lock:
            self.server.requests.append(
                {"method": self.command, "path": url.path, "query": parse_qs(url.query),
                 "raw_query": url.query, "headers": dict(self.headers), "body": body}
            )  # fmt: skip
        if url.path.startswith("/refuse/"):
            _, _, part, status = url.path.split("/")
            echoed = {"target": self.path, "body": body}.get(part) or self.headers.get(part)
            self._send(int(status), json.dumps({"error": "cannot parse", "request": echoed}))
            return
        if url.path.startswith("/by-id/"):
            items = [{"id": "d-" + url.path.rsplit("/", 1)[1], "score": 1.0}]
        else:
            items = [{"id": "d1", "score": 2.0}, {"id": "d2", "score": 1.0}]
        self._send(200, json.dumps({"items": items}))

    def _send(self, status: int, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def engine_server() -> Iterator[EngineServer]:
    server = EngineServer()
    with serving(server):
        yield server
