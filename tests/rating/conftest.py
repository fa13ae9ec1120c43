"""Fixtures of the rating tests: the small world and invites (the
headless Chromium is the suite's, ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .world import RateWorld, build


@pytest.fixture
def world(db_url: str, tmp_path: Path, cli: Callable[..., Any]) -> RateWorld:
    return build(tmp_path, db_url, cli)


@pytest.fixture
def invite(cli: Callable[..., Any], db_url: str) -> Callable[..., str]:
    """``invite(task, rater, base_url, *options)``: the link `rate invite` prints."""

    def make(task: str, rater: str, base_url: str, *options: str) -> str:
        result = cli("rate", "invite", task, rater, "--base-url", base_url, *options,
                     "--db", db_url)  # fmt: skip
        assert result.exit_code == 0, result.stderr
        return str(result.stdout.strip())

    return make
