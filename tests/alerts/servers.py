"""Real servers on 127.0.0.1 for the alert tests: an HTTP capture server and an SMTP server.

``capture_server()`` records every POST (path, headers, JSON body, and whether its
``Idempotency-Key`` was already accepted, as a receiver honouring the header would) and answers
by path:
``/ok`` 200; ``/flaky`` 500 for the first two requests, then 200; ``/down`` 500 every time;
``/bad`` 400 with Slack's ``invalid_payload``; ``/slow`` answers only once the server stops (its
``release`` event); ``/busy`` 429 with ``Retry-After: 0``; ``/delay`` 200 after a tenth of a
second, as a receiver that takes its time (so that two senders overlap).
``dead_url()`` is a URL on a port nothing listens on.

``smtp_server(...)`` runs aiosmtpd's controller in a thread, optionally with STARTTLS (a
self-signed certificate for 127.0.0.1 made with the ``openssl`` command) and a login check.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any
    duplicate: bool = False


class CaptureServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # do not wait for the /slow handler the client gave up on

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.requests: list[Request] = []
        self.release = threading.Event()  # /slow waits for it: set when the server stops

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def received(self, path: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    def accepted(self, path: str) -> list[Request]:
        """The requests to ``path`` a receiver honouring ``Idempotency-Key`` would act on."""
        return [r for r in self.received(path) if not r.duplicate]

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


class _Handler(BaseHTTPRequestHandler):
    server: CaptureServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        path = urlsplit(self.path).path
        key = self.headers.get("Idempotency-Key")
        with self.server.lock:
            duplicate = key is not None and any(
                r.headers.get("Idempotency-Key") == key and r.path == path
                for r in self.server.requests
            )
            self.server.requests.append(Request(path, dict(self.headers.items()), body, duplicate))
            seen = sum(1 for r in self.server.requests if r.path == path)
        if path == "/flaky" and seen <= 2:
            return self._send(500, b"temporarily broken")
        if path == "/down":
            return self._send(500, b"receiver is down")
        if path == "/bad":
            return self._send(400, b"invalid_payload")
        if path == "/busy":
            return self._send(429, b"slow down", {"Retry-After": "0"})
        if path == "/slow":
            self.server.release.wait(timeout=60)
        if path == "/delay":
            self.server.release.wait(timeout=0.1)
        self._send(200, b"ok")

    def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left


@contextmanager
def serving(server: ThreadingHTTPServer, poll: float = 0.05) -> Iterator[None]:
    """Serve ``server`` on a thread of its own while the block runs; then stop and close it.
    ``shutdown`` waits for the loop to look again: every ``poll`` seconds (0.5 by default in
    ``serve_forever``, half a second of nothing at the end of every test)."""
    thread = threading.Thread(target=server.serve_forever, args=(poll,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def capture_server() -> Iterator[CaptureServer]:
    server = CaptureServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/hook"


# ── SMTP ─────────────────────────────────────────────────────────────────────────────────────


@dataclass
class SmtpServer:
    port: int
    messages: list[Message] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)


class _SmtpHandler:
    def __init__(self, server: SmtpServer) -> None:
        self.server = server

    async def handle_DATA(self, smtp: Any, session: Any, envelope: Any) -> str:
        self.server.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.server.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate valid for 127.0.0.1 and its key, made with the openssl command."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def openssl_available() -> bool:
    return shutil.which("openssl") is not None


@contextmanager
def smtp_server(
    *,
    tls_files: tuple[Path, Path] | None = None,
    credentials: tuple[str, str] | None = None,
) -> Iterator[SmtpServer]:
    """aiosmtpd on 127.0.0.1; STARTTLS offered when ``tls_files`` is given; AUTH checks
    ``credentials`` (and is allowed without TLS, as on a trusted relay)."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    server = SmtpServer(port=free_port())

    def authenticate(smtp: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        ok = (
            credentials is not None
            and isinstance(data, LoginPassword)
            and (data.login.decode(), data.password.decode()) == credentials
        )
        if ok:
            server.logins.append(data.login.decode())
        return AuthResult(success=ok, handled=False)

    options: dict[str, Any] = {}
    if tls_files is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*tls_files)
        options.update(tls_context=context, require_starttls=True)
    if credentials is not None:
        options.update(authenticator=authenticate, auth_require_tls=tls_files is not None)
    controller = Controller(_SmtpHandler(server), hostname="127.0.0.1", port=server.port, **options)
    controller.start()
    try:
        yield server
    finally:
        controller.stop()
