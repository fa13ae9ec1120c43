"""A headless Chromium for the judging tests that read a rendered page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update"]  # fmt: skip


@pytest.fixture
def browser_page() -> Iterator[Callable[[Path], Any]]:
    """Open a file in Chromium; the page, loaded, with no network request but the file."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        requests: list[str] = []

        def open_page(path: Path) -> Any:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            assert all(url.startswith(("file:", "data:")) for url in requests), requests
            return page

        yield open_page
        browser.close()
