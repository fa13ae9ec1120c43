"""The site keeps the files of pages whose stamps, data and links did not change (SQLite and
PostgreSQL): byte for byte a fresh render, without gathering the pages keyed by stamps, and
rendered again as soon as anything they show changes."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

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

    first, _ = populate(store, tmp_path)
    site = render_site(store, tmp_path / "site").parent
    _age(site)
    render_site(store, site)
    assert _rendered(site) == set()  # nothing changed: every page kept its file
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
    assert rendered == {
        f"runs/run-{third.id}.html", f"compare/compare-{comparison.id}.html",
        "history/docs-bm25--mini.html", "health/docs-bm25--mini.html", "index.html",
    }  # fmt: skip
    _same_files(site, render_site(store, tmp_path / "fresh2").parent)


def _second_config(store: Store, folder: Path) -> int:
    """A run of a second config, so that the test set has a leaderboard page."""
    rankings = {"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d4"]}
    return runner.import_run(
        store, _write_run(folder / "t.run", rankings), "docs-title", "mini", label="t1",
        metrics=["nDCG@10", "P@5", "Judged@10"],
    ).id  # fmt: skip


def _refuse_to_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read that gathers a stamp-keyed page's data fails the test when called."""
    from evalplat.reports import gather

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a page with an unchanged key was gathered")

    for name in ("gather_run", "gather_comparison"):
        monkeypatch.setattr(gather, name, refuse)
    for name in ("load_comparison", "query_health_inputs", "leaderboard", "evaluation_scores"):
        monkeypatch.setattr(Store, name, refuse)


def test_unchanged_pages_are_not_gathered_again(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalplat.reports import render_site

    populate(store, tmp_path)
    _second_config(store, tmp_path)
    site = render_site(store, tmp_path / "site").parent
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    assert {"leaderboard/mini.html", "health/docs-title--mini.html"} <= pages
    _age(site)
    with monkeypatch.context() as patched:
        _refuse_to_gather(patched)
        render_site(store, site)
    assert _rendered(site) == set()
    _same_files(site, render_site(store, tmp_path / "fresh").parent)


def test_a_rescored_or_pruned_run_renders_the_pages_that_show_it(
    store: Store, tmp_path: Path
) -> None:
    from evalplat.reports import render_site
    from evalplat.store.site_stamps import ComparisonStamp

    first, second = populate(store, tmp_path)
    other = _second_config(store, tmp_path)
    (comparison,) = store.site_stamps().comparisons
    assert store.site_stamps().comparisons[comparison] == ComparisonStamp(
        first, second, store.site_stamps().comparisons[comparison].created_at
    )
    site = render_site(store, tmp_path / "site").parent

    # the other config's run scored again: a new evaluation, the same results
    runner.rescore(store, other, metrics=["nDCG@10", "P@5", "Judged@10", "AP"])
    _age(site)
    render_site(store, site)
    assert _rendered(site) == {
        f"runs/run-{other}.html",
        "history/docs-title--mini.html",
        "leaderboard/mini.html",
        "health/docs-bm25--mini.html",
        "health/docs-title--mini.html",
    }  # fmt: skip  (the index shows the same figures: it keeps its file)
    _same_files(site, render_site(store, tmp_path / "fresh").parent)

    # the candidate's ranked results pruned: its run page and its comparison say so
    later = store.run_info(second).finished_at + timedelta(days=2)  # type: ignore[operator]
    assert second in store.prune_results(1, now=later)
    _age(site)
    render_site(store, site)
    rendered = _rendered(site)
    assert {f"runs/run-{second}.html", f"compare/compare-{comparison}.html"} <= rendered
    assert f"runs/run-{first}.html" not in rendered  # a baseline keeps its results
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


def test_the_health_pages_read_the_configs_latest_scores_once(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalplat.store import query_health

    populate(store, tmp_path)
    _second_config(store, tmp_path)
    read: list[list[int]] = []
    scores = query_health._scores

    def counted(session: Any, evaluation_ids: list[int], metric: str) -> Any:
        read.append(list(evaluation_ids))
        return scores(session, evaluation_ids, metric)

    monkeypatch.setattr(query_health, "_scores", counted)
    window = timedelta(days=30)
    first = store.query_health_inputs("docs-bm25", "mini", window)
    second = store.query_health_inputs("docs-title", "mini", window)
    # each config's own runs, and the peers (both configs' latest) once
    assert len(read) == 3 and sorted(read[1]) == sorted(read[0][-1:] + read[2])
    assert first.peers.equals(second.peers) and set(first.peers["config"]) == {
        "docs-bm25",
        "docs-title",
    }
