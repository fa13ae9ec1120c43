"""Fixtures of the rating tests: the small world, invites, and a headless Chromium."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .world import RateWorld, build

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update"]  # fmt: skip


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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for a module's tests, as the report tests have it: launching one took 3 to
    4 s on the 2-core machine under load. Each test opens its pages in a context of its own
    (``new_page`` makes one), so no cookie or storage goes from one test to the next."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()
