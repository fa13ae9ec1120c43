"""The site keeps the files of pages whose data and links did not change (SQLite and
PostgreSQL): byte for byte a fresh render, re-rendered as soon as anything they show changes."""

from __future__ import annotations

import os
from pathlib import Path

from evalplat.reports.data import RunPage
from evalplat.reports.page_keys import KEYS_FILE
from evalplat.reports.render import Links, run_html
from evalplat.reports.site import _followed
from evalplat.running import runner
from evalplat.store import Store

from .test_site import _write_run, populate

OLD = 1_000_000_000_000_000_000  # an mtime in 2001: a page rendered again gets a new one


def _age(site: Path) -> None:
    for page in site.rglob("*.html"):
        os.utime(page, ns=(OLD, OLD))


def _rendered(site: Path) -> set[str]:
    return {
        p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.stat().st_mtime_ns != OLD
    }


def _same_files(site: Path, fresh: Path) -> None:
    """Every page a fresh render writes is in ``site``, byte for byte (the site, as before,
    leaves the pages of runs and comparisons it no longer writes where they are)."""
    pages = sorted(p.relative_to(fresh) for p in fresh.rglob("*.html"))
    assert pages
    for page in pages:
        assert (site / page).read_bytes() == (fresh / page).read_bytes(), page


def test_unchanged_run_and_comparison_pages_keep_their_files(store: Store, tmp_path: Path) -> None:
    from evalplat.reports import render_site

    first, second = populate(store, tmp_path)
    site = render_site(store, tmp_path / "site").parent
    _age(site)
    render_site(store, site)
    # the history, health and index pages are rebuilt every time; the others were kept
    assert _rendered(site) == {"health/docs-bm25--mini.html", "history/docs-bm25--mini.html",
                               "index.html"}  # fmt: skip
    _same_files(site, render_site(store, tmp_path / "fresh").parent)

    # a new night: its run page and comparison are new; the older run pages are kept
    third = runner.import_run(
        store, _write_run(tmp_path / "c.run", {"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d5"]}),
        "docs-bm25", "mini", label="v3", metrics=["nDCG@10", "P@5", "Judged@10"],
    )  # fmt: skip
    comparison = store.compare_runs(first, third.id)
    _age(site)
    render_site(store, site)
    rendered = _rendered(site)
    assert f"runs/run-{third.id}.html" in rendered
    assert f"runs/run-{first}.html" not in rendered and f"runs/run-{second}.html" not in rendered
    assert f"compare/compare-{comparison.id}.html" in rendered
    _same_files(site, render_site(store, tmp_path / "fresh2").parent)


def test_a_page_changed_or_lost_on_disk_is_rendered_again(store: Store, tmp_path: Path) -> None:
    from evalplat.reports import render_site

    first, second = populate(store, tmp_path)
    site = render_site(store, tmp_path / "site").parent
    edited, deleted = site / f"runs/run-{first}.html", site / f"runs/run-{second}.html"
    edited.write_text("edited by hand\n", encoding="utf-8")
    deleted.unlink()
    _age(site)
    render_site(store, site)
    assert {f"runs/run-{first}.html", f"runs/run-{second}.html"} <= _rendered(site)
    _same_files(site, render_site(store, tmp_path / "fresh").parent)

    # without the key file (or with one that is not ours) every page is rendered
    (site / KEYS_FILE).write_text("not json", encoding="utf-8")
    _age(site)
    render_site(store, site)
    assert _rendered(site) == {p.relative_to(site).as_posix() for p in site.rglob("*.html")}


def test_a_run_page_follows_no_link_its_key_leaves_out(fixed_run_page: RunPage) -> None:
    """The key holds what ``_followed`` takes from the links; links that differ elsewhere
    (other runs with pages, other comparisons) must give the same HTML."""
    run_id = fixed_run_page.run.id
    narrow = Links("../", frozenset({run_id}), {}, "history/a.html", index=True)
    wide = Links(
        "../", frozenset({run_id, run_id + 1, run_id + 7}), {run_id: "compare/compare-9.html",
        run_id + 1: "compare/compare-3.html"}, "history/a.html", index=True,
    )  # fmt: skip
    assert _followed(narrow, run_id) == _followed(wide, run_id)
    assert run_html(fixed_run_page, narrow) == run_html(fixed_run_page, wide)
    unlinked = Links("../", frozenset(), {}, "history/a.html", index=True)
    assert _followed(unlinked, run_id) != _followed(narrow, run_id)
