"""A chat-completions server of the tests' own on 127.0.0.1, answering like a small judge.

The user message names ``document <id>`` and holds a ``GRADE=n`` marker; the server answers
that grade (``3 - n`` with ``invert``), as JSON when the request asked for a JSON schema and as
``Grade: n`` text otherwise. Markers in the passage pick a fault: ``MALFORMED`` answers "The
document is", ``OUTSIDE`` answers grade 7, ``SLOW`` waits 2 s, ``DROP`` closes the connection
without answering (the first time for each document), ``NESTED`` answers HTTP 200 with a
body of JSON arrays nested 100,000 deep (the first ``nested`` times for each document),
``DEEPJSON`` answers a grade nested that deep inside the answer's text. Server-wide:
``busy`` answers 429 (with
``Retry-After: 0``) to that many requests first, ``refuse_schema`` answers that HTTP status
(400, or 500 as llama-cpp-python's server does) to a request asking for a ``json_schema``
answer, and ``refuse_json_object`` 400 to one asking for a ``json_object`` answer (``formats``
records the ``response_format`` type of every request), ``status`` answers every request with
that status, ``delay`` waits that long before each
answer. ``requests`` records (document id, asked for a schema,
Authorization header) of every request that reached the handler.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_DOC = re.compile(r"document (\S+)")
_GRADE = re.compile(r"GRADE=(\d+)")
DEPTH = 100_000
DEEP_BODY = ("[" * DEPTH + "]" * DEPTH).encode()


class ChatServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, bool, str | None]] = []
        self.answered: list[str] = []
        self.busy = 0
        self.refuse_schema: int | None = None
        self.refuse_json_object = False
        self.formats: list[str | None] = []
        self.status: int | None = None
        self.delay = 0.0
        self.invert = False
        self.dropped: set[str] = set()
        self.nested = 1
        self.nested_sent: list[str] = []
        self.lock = threading.Lock()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def documents_asked(self) -> list[str]:
        with self.lock:
            return [doc for doc, _, _ in self.requests]

    def answer(self, body: dict[str, Any], auth: str | None) -> tuple[int, dict[str, Any] | None]:
        user = body["messages"][-1]["content"]
        found = _DOC.search(user)
        doc = found.group(1) if found else "?"
        structured = "response_format" in body
        answer_format = body["response_format"].get("type") if structured else None
        with self.lock:
            self.requests.append((doc, structured, auth))
            self.formats.append(answer_format)
            if self.status is not None:
                return self.status, {"error": {"message": f"status {self.status}"}}
            if self.busy > 0:
                self.busy -= 1
                return 429, {"error": {"message": "slow down"}}
            if self.refuse_schema is not None and answer_format == "json_schema":
                message = "body.response_format.type: Input should be 'text' or 'json_object'"
                return self.refuse_schema, {"error": {"message": message}}
            if self.refuse_json_object and answer_format == "json_object":
                return 400, {"error": {"message": "response_format json_object: unsupported"}}
            if "DROP" in user and doc not in self.dropped:
                self.dropped.add(doc)
                return -1, None
            if "NESTED" in user and self.nested_sent.count(doc) < self.nested:
                self.nested_sent.append(doc)
                return 200, None
        if "SLOW" in user:
            time.sleep(2.0)
        if self.delay:
            time.sleep(self.delay)
        if "MALFORMED" in user:
            content = "The document is"
        elif "DEEPJSON" in user:
            content = '{"grade": ' + "[" * DEPTH + "]" * DEPTH + "}"
        elif "OUTSIDE" in user:
            content = json.dumps({"grade": 7, "reason": "very"})
        else:
            marker = _GRADE.search(user)
            grade = int(marker.group(1)) if marker else 0
            grade = 3 - grade if self.invert else grade
            content = (
                json.dumps({"grade": grade, "reason": "the marker says so"})
                if structured
                else f"The passage carries a marker.\nGrade: {grade}"
            )
        with self.lock:
            self.answered.append(doc)
        return 200, {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": len(user) // 4, "completion_tokens": 9},
        }


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    state = ChatServer()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            if not self.path.endswith("/chat/completions"):
                status, data = 404, {"error": {"message": "no such path"}}
            else:
                status, data = state.answer(body, self.headers.get("Authorization"))
            if status == -1:  # drop the connection without a word
                self.close_connection = True
                self.connection.close()
                return
            payload = json.dumps(data).encode() if data is not None else DEEP_BODY
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that gave up waiting (a timeout test) breaks the pipe: expected

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
