"""The rating application served by a real uvicorn on 127.0.0.1, on a thread of the test."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from evalplat.rating.app import create_app
from evalplat.store import Store

from ..alerts.servers import free_port


@contextmanager
def rating_server(url: str, root_path: str = "") -> Iterator[str]:
    """Serve the rating app over the database at ``url``; yields its base URL."""
    import uvicorn

    with Store.open(url) as store:
        config = uvicorn.Config(
            create_app(store), host="127.0.0.1", port=0, log_level="warning", lifespan="off",
            root_path=root_path,
        )  # fmt: skip
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the rating server did not start")
            time.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=10)


@dataclass
class ServedProcess:
    base: str  # the server's base URL
    pid: int
    stderr: str = ""  # what it wrote, once stopped


@contextmanager
def rating_process(url: str, *options: str) -> Iterator[ServedProcess]:
    """``evalplat rate serve`` as a process of its own over the database at ``url``."""
    port = free_port()
    env = {**os.environ, "EVALPLAT_DATABASE_URL": url}
    server = subprocess.Popen(
        [sys.executable, "-m", "evalplat", "rate", "serve", "--port", str(port), *options],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    served = ServedProcess(f"http://127.0.0.1:{port}", server.pid)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{served.base}/static/rate.css")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        yield served
    finally:
        server.terminate()
        served.stderr = server.communicate(timeout=20)[1].decode()


def open_invite(page: Any, link: str) -> None:
    """Open an invite link in the browser and enter by keyboard: the page's button is focused,
    so Enter posts it and the first pair (or "All done") follows."""
    page.goto(link)
    # autofocus is applied at the page's next rendering step, which may follow the load event
    # on a busy machine: wait for it (a page that never focuses the button fails here)
    page.wait_for_function("document.activeElement && document.activeElement.id === 'enter'",
                           timeout=15_000)  # fmt: skip
    with page.expect_navigation():
        page.keyboard.press("Enter")
