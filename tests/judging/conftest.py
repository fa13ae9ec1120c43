"""Fixtures of the judge tests: the tests' chat-completions server and the world built on it."""

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
