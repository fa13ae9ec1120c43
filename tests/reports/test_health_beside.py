"""The site's query-health pages rendered in a second process (``evalplat.reports.health_beside``)
are the pages rendered here, byte for byte, with the same keys; a second process that dies loses
no page; a store no other process can open keeps the pages here (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from evalplat.reports import health_beside
from evalplat.reports.health_beside import HealthPages, start_health_pages
from evalplat.reports.page_keys import KEYS_FILE, PageKeys
from evalplat.reports.render import Links
from evalplat.store import Store

from .test_page_keys import _age, _rendered, _second_config
from .test_site import populate


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[HealthPages]:
    """Every ``HealthPages`` the site starts, to tell where its pages were rendered."""
    started: list[HealthPages] = []

    def start(*args: object) -> HealthPages:
        pages = start_health_pages(*args)  # type: ignore[arg-type]
        started.append(pages)
        return pages

    monkeypatch.setattr(health_beside, "start_health_pages", start)
    return started


@pytest.fixture
def here(store: Store, tmp_path: Path, starts: list[HealthPages]) -> Path:
    """Two configs of the test set "mini", and their site rendered in this process."""
    from evalplat.reports import render_site

    populate(store, tmp_path)
    _second_config(store, tmp_path)
    site = render_site(store, tmp_path / "here").parent
    assert starts[-1].beside is None  # a few hundred query rows: not worth a process
    return site


def test_pages_rendered_beside_are_the_pages_rendered_here(
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    starts: list[HealthPages],
    here: Path,
) -> None:
    from evalplat.reports import render_site

    monkeypatch.setattr(health_beside, "BESIDE_ROWS", 0)
    beside = render_site(store, tmp_path / "beside").parent
    assert starts[-1].beside is not None
    assert len(starts[-1].pages) == 2  # both configs' pages went to the second process
    assert _files(beside) == _files(here)  # pages, index links and page keys alike
    keys = json.loads((beside / KEYS_FILE).read_text(encoding="utf-8"))
    assert {"health/docs-bm25--mini.html", "health/docs-title--mini.html"} <= set(keys)

    # the keys the second process wrote keep its pages next time: nothing is rendered again
    _age(beside)
    render_site(store, beside)
    assert _rendered(beside) == set()
    assert starts[-1].pages == () and starts[-1].beside is None


def test_a_second_process_that_dies_loses_no_page(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, here: Path
) -> None:
    monkeypatch.setattr(health_beside, "BESIDE_ROWS", 0)
    out = tmp_path / "killed"
    keys = PageKeys(out)
    pairs = [("docs-bm25", "mini"), ("docs-title", "mini")]
    infos = {info.id: info for info in store.list_runs()}
    pages = start_health_pages(store, pairs, out, Links("../", index=True), keys, infos)
    assert pages.beside is not None
    pool, _ = pages.beside
    for process in list(pool._processes.values()):  # killed before it could write a page
        os.kill(process.pid, signal.SIGKILL)
    paths = pages.paths()
    assert sorted(paths.values()) == ["health/docs-bm25--mini.html", "health/docs-title--mini.html"]
    for path in paths.values():
        assert (out / path).read_bytes() == (here / path).read_bytes()
    assert keys.rendered == 2 and set(keys.now) == set(paths.values())
