"""A comparison page rendered ahead of the site (as a night's second process does) is written by
the site as it is, byte for byte what the site would render, and only while it was rendered
from what the site would render it from (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evalplat.reports import render_site
from evalplat.reports.gather import TestSetCache
from evalplat.reports.page_keys import PageAhead
from evalplat.reports.site import comparison_page_ahead
from evalplat.running import runner
from evalplat.store import Store

from .test_page_keys import _same_files
from .test_site import _write_run, populate


def _new_night(store: Store, folder: Path, baseline: int) -> int:
    """A third run of the config, compared with ``baseline``: the comparison's id."""
    third = runner.import_run(
        store, _write_run(folder / "c.run", {"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d5"]}),
        "docs-bm25", "mini", label="v3", metrics=["nDCG@10", "P@5", "Judged@10"],
    )  # fmt: skip
    compared = store.compare_runs(baseline, third.id)
    assert compared.id is not None
    return compared.id


def _refuse_to_gather_comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The comparisons the site gathers from now on, by id (it gathers none it takes ahead)."""
    from evalplat.reports import gather

    gathered: list[int] = []
    real = gather.gather_comparison

    def counted(store: Store, result: Any, **kwargs: Any) -> Any:
        gathered.append(result.id)
        return real(store, result, **kwargs)

    monkeypatch.setattr(gather, "gather_comparison", counted)
    return gathered


def test_a_page_rendered_ahead_is_written_as_the_site_renders_it(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = populate(store, tmp_path)
    site = render_site(store, tmp_path / "site").parent
    comparison = _new_night(store, tmp_path, first)
    page = comparison_page_ahead(store, comparison, TestSetCache(store))
    assert page is not None and page.path == f"compare/compare-{comparison}.html"
    gathered = _refuse_to_gather_comparisons(monkeypatch)
    render_site(store, site, ahead=[page])
    assert gathered == []  # the new comparison's page is the one rendered ahead
    assert (site / page.path).read_text(encoding="utf-8") == page.html
    monkeypatch.undo()
    _same_files(site, render_site(store, tmp_path / "fresh").parent)


@pytest.mark.parametrize("changed", ["material", "code"])
def test_a_page_rendered_from_other_material_or_code_is_rendered_again(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str
) -> None:
    first, _ = populate(store, tmp_path)
    comparison = _new_night(store, tmp_path, first)
    page = comparison_page_ahead(store, comparison, TestSetCache(store))
    assert page is not None
    stale: PageAhead = replace(page, html="<p>stale</p>")
    if changed == "material":  # what the page showed changed after it was rendered ahead
        stale = replace(stale, material=(*page.material[:-1], ("elsewhere",)))  # type: ignore[misc]
    else:  # rendered by other code than this process's
        stale = replace(stale, code="0" * 40)
    gathered = _refuse_to_gather_comparisons(monkeypatch)
    site = render_site(store, tmp_path / "site", ahead=[stale]).parent
    assert comparison in gathered
    assert (site / page.path).read_text(encoding="utf-8") == page.html


def test_a_page_ahead_links_the_baseline_as_the_site_does_or_is_rendered_again(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalplat.reports import site as site_module

    first, _ = populate(store, tmp_path)
    comparison = _new_night(store, tmp_path, first)  # the config's third run, gated

    def ahead_then_site(pages_ahead: int, pages: int) -> tuple[PageAhead, str, list[int]]:
        """The page rendered ahead and as the site wrote it, with the site writing the pages
        of the latest ``pages_ahead`` runs, then of the latest ``pages``; what it gathered."""
        with monkeypatch.context() as patched:
            patched.setattr(site_module, "RUN_PAGES_PER_HISTORY", pages_ahead)
            page = comparison_page_ahead(store, comparison, TestSetCache(store))
            assert page is not None
            patched.setattr(site_module, "RUN_PAGES_PER_HISTORY", pages)
            gathered = _refuse_to_gather_comparisons(patched)
            site = render_site(store, tmp_path / f"site-{pages_ahead}-{pages}", ahead=[page])
            return page, (site.parent / page.path).read_text(encoding="utf-8"), gathered

    baseline_link = f'href="../runs/run-{first}.html"'
    for pages, linked in ((3, True), (2, False)):  # the baseline's page written, or not
        page, written, gathered = ahead_then_site(pages, pages)
        assert (baseline_link in page.html) is linked
        assert written == page.html and gathered == []
    # rendered ahead while the baseline's page was written, the site written when it is not:
    # the page's links changed, so the site renders it again, without the link
    page, written, gathered = ahead_then_site(3, 2)
    assert baseline_link in page.html and baseline_link not in written
    assert gathered == [comparison]
