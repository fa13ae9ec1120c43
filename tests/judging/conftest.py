"""Fixtures of the judge tests: the tests' chat-completions server, the world built on it, and a
page opened in the shared headless Chromium for the tests that read a rendered page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .chat_server import ChatServer, chat_server
from .world import JudgeWorld, build


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with chat_server() as state:
        yield state


@pytest.fixture
def make_world(
    db_url: str,
    tmp_path: Path,
    cli: Callable[..., Any],
    server: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., JudgeWorld]:
    monkeypatch.setenv("JUDGE_KEY", "sekrit")

    def make(**options: Any) -> JudgeWorld:
        return build(tmp_path, db_url, cli, server.url, **options)

    return make


@pytest.fixture
def browser_page(browser: Any) -> Callable[[Path], Any]:
    """Open a file in the module's Chromium; the page, loaded, with no network request but the
    file."""
    requests: list[str] = []

    def open_page(path: Path) -> Any:
        page = browser.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        assert all(url.startswith(("file:", "data:")) for url in requests), requests
        return page

    return open_page
