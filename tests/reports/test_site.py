"""Reports from a real store (SQLite and PostgreSQL): the site, its relative links, the CLI."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.running import runner
from evalplat.store import Store
from evalplat.testsets.content import load_testset

HOSTILE = "<script>alert(1)</script>"


def _write_run(path: Path, rankings: dict[str, list[str]]) -> Path:
    lines = [
        f"{q} Q0 {doc} {rank} {100 - rank} tag"
        for q, docs in rankings.items()
        for rank, doc in enumerate(docs, start=1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def populate(store: Store, folder: Path) -> tuple[int, int]:
    """A test set of 3 queries (one with a hostile text) and two imported runs, compared."""
    (folder / "qrels.txt").write_text(
        "q1 0 d1 2\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d4 1\nq3 0 d5 0\n", encoding="utf-8"
    )
    (folder / "queries.tsv").write_text(
        f"q1\tlaminar flow\nq2\t{HOSTILE}\nq3\tshock waves\n", encoding="utf-8"
    )
    (folder / "docs.jsonl").write_text(
        '{"id": "d1", "title": "Laminar flow over a plate", "text": "body"}\n'
        '{"id": "d9", "text": "pressure distribution on a slender cone at high speed '
        'measured in the wind tunnel"}\n',
        encoding="utf-8",
    )
    content = load_testset(
        folder / "qrels.txt", queries=folder / "queries.tsv", docs=folder / "docs.jsonl"
    )
    store.import_test_set("mini", content)
    metrics = ["nDCG@10", "P@5", "Judged@10"]
    good = _write_run(folder / "a.run", {"q1": ["d1", "d2"], "q2": ["d3"], "q3": ["d4", "d5"]})
    bad = _write_run(folder / "b.run", {"q1": ["d9", "d2", "d1"], "q2": ["x"], "q3": ["d5"]})
    first = runner.import_run(store, good, "docs-bm25", "mini", label="porter", metrics=metrics)
    second = runner.import_run(store, bad, "docs-bm25", "mini", label="v2", metrics=metrics)
    store.compare_runs(first.id, second.id)
    return first.id, second.id


def links_of(html: str) -> list[str]:
    return re.findall(r'href="([^"#]+)"', html)


def test_site_has_every_page_and_only_relative_links_that_resolve(
    store: Store, tmp_path: Path
) -> None:
    from evalplat.reports import render_site

    first, second = populate(store, tmp_path)
    index = render_site(store, tmp_path / "site")
    site = index.parent
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert pages == [
        "compare/compare-1.html",
        "health/docs-bm25--mini.html",
        "history/docs-bm25--mini.html",
        "index.html",
        f"runs/run-{first}.html",
        f"runs/run-{second}.html",
    ]
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert HOSTILE not in html
        for link in links_of(html):
            assert not link.startswith(("/", "http:", "https:", "file:")), (page, link)
            if link.startswith("data:text/csv;"):  # a CSV download carried by the page itself
                continue
            assert (page.parent / link).resolve().is_file(), (page, link)
    index_text = index.read_text(encoding="utf-8")
    # three queries are too few for a credible drop: the verdict is shown, linked, as it is
    assert '<a href="compare/compare-1.html"><span class="badge v-unchanged">' in index_text
    assert '<a href="health/docs-bm25--mini.html">queries</a>' in index_text


def test_comparison_page_from_the_store_shows_grades_and_unjudged_documents(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalplat.reports import render_comparison

    first, second = populate(store, tmp_path)
    result = store.compare_runs(first, second)
    asked: list[list[str]] = []
    real = store.document_text
    monkeypatch.setattr(store, "document_text",
                        lambda ref, ids: asked.append(list(ids)) or real(ref, ids))  # fmt: skip
    html = render_comparison(result, tmp_path / "c.html", store).read_text(encoding="utf-8")
    # the hits' titles in one read, not one per document
    assert len(asked) == 1 and {"d1", "d9", "d5"} <= set(asked[0])
    assert "laminar flow" in html
    assert '<span class="id">d9</span>' in html and "★ new" in html and "? unjudged" in html
    # titles from the stored documents; a document without one by the first words of its text
    assert '<span class="doc-title">Laminar flow over a plate</span>' in html
    assert (
        '<span class="doc-title">pressure distribution on a slender cone at high speed '
        "measured in the…</span>" in html
    )
    assert "What changed" in html and "&#34;porter&#34;" in html
    plain = render_comparison(result, tmp_path / "plain.html").read_text(encoding="utf-8")
    assert 'class="hits"' not in plain and "nDCG@10" in plain


def test_report_commands_write_pages_and_name_them(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        first, second = populate(store, tmp_path)
    done = cli("report", "run", str(second), "--out", str(tmp_path / "out"), "--db", db_url)
    assert done.exit_code == 0, done.stderr
    assert Path(done.stdout.strip()) == tmp_path / "out" / f"run-{second}.html"
    target = tmp_path / "cmp.html"
    done = cli("report", "compare", str(first), "docs-bm25@latest", "--out", str(target),
               "--db", db_url)  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert "<h1>Comparison: docs-bm25 vs docs-bm25</h1>" in target.read_text(encoding="utf-8")
    done = cli("report", "site", "--out", str(tmp_path / "site"), "--db", db_url, "--json")
    assert done.exit_code == 0, done.stderr
    assert '"path"' in done.stdout and (tmp_path / "site" / "index.html").is_file()
    missing = cli("report", "run", "999", "--db", db_url)
    assert missing.exit_code == 2 and "no run with id 999" in missing.stderr


def test_empty_database_gives_an_index_that_says_so(store: Store, tmp_path: Path) -> None:
    from evalplat.reports import render_site

    html = render_site(store, tmp_path / "site").read_text(encoding="utf-8")
    assert "No runs yet" in html and "No open alerts" in html


@pytest.mark.parametrize("name", ["a/b c", "a_b_c"])
def test_config_names_become_distinct_safe_file_names(name: str) -> None:
    from evalplat.reports.render import slug

    assert re.fullmatch(r"[A-Za-z0-9._-]+", slug(name))
    assert slug("a/b c") != slug("a_b_c")


def test_long_names_sharing_their_first_80_characters_get_files_of_their_own() -> None:
    from evalplat.reports.render import SLUG_LENGTH, slug

    stem = "docs-bm25-" + "x" * 80
    names = [stem + "-porter", stem + "-nostem", "y" * 81, "y" * 80]
    slugs = [slug(name) for name in names]
    assert len(set(slugs)) == len(names)
    assert all(len(s) <= SLUG_LENGTH for s in slugs) and slugs[3] == "y" * 80
    assert [slug(name) for name in names] == slugs  # the same file every night
    assert slug("docs-bm25") == "docs-bm25" and slug("a/b c") == "a_b_c-" + slug("a/b c")[-6:]


def test_two_long_configs_keep_two_histories(store: Store, tmp_path: Path) -> None:
    from evalplat.reports import render_site

    populate(store, tmp_path)
    run = _write_run(tmp_path / "c.run", {"q1": ["d1"], "q2": ["d3"], "q3": ["d4"]})
    stem = "docs-bm25-" + "a" * 75
    for name in (stem + "-porter", stem + "-nostem"):
        runner.import_run(store, run, name, "mini", metrics=["nDCG@10"])
    site = render_site(store, tmp_path / "site").parent
    histories = [p.read_text(encoding="utf-8") for p in (site / "history").glob("*.html")]
    assert len(histories) == 3
    for name in (stem + "-porter", stem + "-nostem"):
        assert sum(name in html for html in histories) == 1, name
