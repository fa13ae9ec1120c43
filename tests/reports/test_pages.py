"""Rendered pages for fixed data: golden files, escaping, side-by-side marks, links.

Goldens are rewritten only on purpose: ``EVALPLAT_UPDATE_GOLDEN=1 pytest tests/reports``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from evalplat.reports import comparison_html, history_html, index_html, run_html
from evalplat.reports.compared import ComparisonPage
from evalplat.reports.data import HistoryPage, RunPage
from evalplat.reports.index_data import SiteIndex
from evalplat.reports.online_page import OfflineOnlinePage
from evalplat.reports.render import Links, script_json

GOLDEN = Path(__file__).resolve().parent / "golden"
HOSTILE = "<script>alert(1)</script>"


def check_golden(name: str, html: str) -> None:
    path = GOLDEN / name
    if os.environ.get("EVALPLAT_UPDATE_GOLDEN") == "1":
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(
                "EVALPLAT_UPDATE_GOLDEN is set in CI: goldens are compared there, never rewritten"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"golden file {name} is missing: run with EVALPLAT_UPDATE_GOLDEN=1 once")
    expected = path.read_text(encoding="utf-8")
    if html != expected:
        diff = next(i for i, (a, b) in enumerate(zip(html, expected, strict=False)) if a != b)
        pytest.fail(f"{name} differs from its golden file at character {diff}: "
                    f"{html[max(0, diff - 80):diff + 80]!r}")  # fmt: skip


def test_comparison_page_matches_its_golden_file(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    links = Links("../", frozenset({1, 2}), {}, "history/docs-bm25--mini.html", index=True)
    check_golden("comparison.html", comparison_html(make_comparison_page(), links))


def test_run_page_matches_its_golden_file(fixed_run_page: RunPage) -> None:
    check_golden("run.html", run_html(fixed_run_page))


def test_history_page_matches_its_golden_file(fixed_history_page: HistoryPage) -> None:
    links = Links("../", frozenset({1, 2, 3}), {2: "compare/compare-7.html"}, index=True)
    check_golden("history.html", history_html(fixed_history_page, links))


def test_site_index_matches_its_golden_file(fixed_index: SiteIndex) -> None:
    check_golden("index.html", index_html(fixed_index))


def test_offline_online_page_matches_its_golden_file(
    fixed_online_page: OfflineOnlinePage,
) -> None:
    from evalplat.reports.online_page import offline_online_html

    check_golden("offline_online.html", offline_online_html(fixed_online_page))


def test_index_links_the_offline_online_pages_only_when_there_are_some(
    fixed_index: SiteIndex,
) -> None:
    from dataclasses import replace

    assert "Offline vs online" not in index_html(fixed_index)
    html = index_html(replace(fixed_index, online=((HOSTILE, "online/x.html"),)))
    assert "<h2>Offline vs online</h2>" in html and '<a href="online/x.html">' in html
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_rendering_twice_gives_identical_bytes(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    assert comparison_html(make_comparison_page()) == comparison_html(make_comparison_page())


@pytest.mark.parametrize("page", ["comparison", "run", "history"])
def test_script_tag_in_user_text_is_escaped_everywhere(
    page: str,
    make_comparison_page: Callable[..., ComparisonPage],
    fixed_run_page: RunPage,
    fixed_history_page: HistoryPage,
) -> None:
    html = {
        "comparison": lambda: comparison_html(make_comparison_page()),
        "run": lambda: run_html(fixed_run_page),
        "history": lambda: history_html(fixed_history_page),
    }[page]()
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # the only script elements are the page's own: the JSON blob and the table script
    assert len(re.findall(r"<script\b", html)) == {"comparison": 3, "run": 2, "history": 0}[page]


def test_segments_page_escapes_tags_and_says_why_a_segment_is_not_gated(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    from .conftest import segmented_result

    html = comparison_html(make_comparison_page(result=segmented_result()))
    assert HOSTILE not in html
    assert len(re.findall(r"<script\b", html)) == 3
    assert "2 queries, fewer than 20: not gated" in html
    assert "Segments of fewer than 20 queries are shown but never gated" in html
    assert "corrected with Holm across the gated metrics and gated segments" in html
    plain = comparison_html(make_comparison_page())
    assert "segment" not in plain.lower()


def test_embedded_json_cannot_close_its_script_element() -> None:
    text = script_json({"rows": [["q", "</script><script>alert(1)</script><!--"]]})
    assert "<" not in text
    assert json.loads(text)["rows"][0][1].startswith("</script>")


def test_side_by_side_marks_new_moved_gone_and_unjudged_documents(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    page = make_comparison_page()
    q1 = next(s for s in page.worse if s.query_id == "q1")
    assert [(h.doc_id, h.change, h.other_rank, h.grade) for h in q1.candidate_hits] == [
        ("d2", "up", 2, 0),
        ("d1", "down", 1, 2),
        ("d9", "new", None, None),
    ]
    assert [(h.doc_id, h.change) for h in q1.baseline_hits] == [
        ("d1", ""),
        ("d2", ""),
        ("d3", "gone"),
    ]
    html = comparison_html(page)
    assert "★ new" in html and "? unjudged" in html and "✕ dropped" in html


def test_worst_queries_come_first_in_the_server_rendered_table(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    table = make_comparison_page().table
    order = [row[0] for row in table.first_page]
    assert order == ["q1", "q2", "q4", "q3"]  # deltas -0.3, -0.3 (ties by id), 0, +0.3
    assert table.sort_key == "d0" and not table.descending


def test_pruned_results_say_so_instead_of_showing_empty_rankings(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    html = comparison_html(make_comparison_page(baseline_results=None))
    assert "were pruned by the retention policy" in html
    assert 'class="hits"' not in html


def test_lower_is_better_metric_sorts_its_worst_queries_first() -> None:
    from evalplat.reports.data import Column, QueryTable, sorted_rows

    rows = [("a", "", 10.0), ("b", "", 30.0), ("c", "", None), ("d", "", 20.0)]
    table = QueryTable((Column("q", "Query", "id"),), sorted_rows(rows, 2, True), "l", True)
    assert [r[0] for r in table.rows] == ["b", "d", "a", "c"]  # missing values last


def test_run_page_lists_failures_and_nearest_rank_latency(fixed_run_page: RunPage) -> None:
    assert [f.query_id for f in fixed_run_page.failures] == ["q4"]
    latency = fixed_run_page.latency
    assert latency is not None
    assert (latency.count, latency.p50, latency.p95, latency.max) == (3, 12.5, 30.0, 30.0)
    assert "HTTP 503 from &lt;backend&gt;" in run_html(fixed_run_page)


def test_pages_load_nothing_from_the_network(
    make_comparison_page: Callable[..., ComparisonPage],
    fixed_run_page: RunPage,
    fixed_history_page: HistoryPage,
    fixed_index: SiteIndex,
) -> None:
    for html in (
        comparison_html(make_comparison_page()),
        run_html(fixed_run_page),
        history_html(fixed_history_page),
        index_html(fixed_index),
    ):
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
        assert "@import" not in html and "url(" not in html


def test_run_without_evaluation_renders_its_queries_and_says_it_has_no_scores() -> None:
    import pandas as pd

    from evalplat.reports.data import RunHeader, run_page

    header = RunHeader(9, "c", 1, None, "http", "t", 1, "failed", "manual", "2026-05-01 03:00 UTC",
                       None, 2, 2)  # fmt: skip
    outcomes = pd.DataFrame(
        [("b", "failed", None, 3, 0, "timeout"), ("a", "failed", None, 3, 0, "timeout")],
        columns=["query_id", "status", "latency_ms", "attempts", "results_count", "error"],
    )
    scores = pd.DataFrame(columns=["query_id", "metric", "value"])
    page = run_page(header, scores=scores, outcomes=outcomes, query_text={"a": "x", "b": "y"},
                    means={}, error="backend unreachable")  # fmt: skip
    assert [row[0] for row in page.table.rows] == ["a", "b"]
    assert page.latency is None and len(page.failures) == 2
    html = run_html(page)
    assert "This run has no evaluation yet." in html and "backend unreachable" in html


def test_every_template_compiles_with_autoescape_on() -> None:
    from evalplat.reports.render import environment

    env = environment()
    names = env.list_templates()
    assert {"base.html", "comparison.html", "run.html", "history.html", "index.html"} <= set(names)
    for name in names:
        env.get_template(name)  # raises TemplateSyntaxError on a broken template
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_goldens_are_never_rewritten_in_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EVALPLAT_UPDATE_GOLDEN", "1")
    monkeypatch.setenv("CI", "true")
    golden = GOLDEN / "index.html"
    before = golden.read_bytes()
    with pytest.raises(pytest.fail.Exception, match="set in CI"):
        check_golden("index.html", "<p>not the site</p>")
    assert golden.read_bytes() == before


def test_side_by_side_results_show_document_titles_or_first_words(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    page = make_comparison_page()
    q1 = next(s for s in page.worse if s.query_id == "q1")
    assert [(h.doc_id, h.title) for h in q1.baseline_hits] == [
        ("d1", "Laminar flow over a flat plate"), ("d2", ""), ("d3", "")
    ]  # fmt: skip
    html = comparison_html(page)
    assert '<span class="doc-title">Laminar flow over a flat plate</span>' in html


def test_a_document_without_title_is_named_by_the_first_words_of_its_text() -> None:
    from evalplat.reports.compared import document_title

    text = " ".join(f"w{i}" for i in range(20))
    assert document_title("", text) == "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11…"
    assert document_title(None, "short text") == "short text"
    assert document_title("  A  title ", text) == "A title"
    assert document_title(None, None) == ""


def test_comparison_page_says_what_changed(
    make_comparison_page: Callable[..., ComparisonPage],
) -> None:
    html = comparison_html(make_comparison_page())
    section = html.split("<h2>What changed</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<code>tokenizer</code>" in section
    assert "<code>&#34;porter&#34;</code>" in section and "&#34;unicode61&#34;" in section
    assert "test set mini v1 → v2: judgments 3 added, 1 with a new grade" in section
    assert HOSTILE not in section and "&lt;script&gt;" in section


def test_run_page_flags_a_run_where_most_queries_returned_nothing() -> None:
    import pandas as pd

    from evalplat.reports.data import RunHeader, run_page

    header = RunHeader(5, "pg-fts", 1, None, "sql", "t", 1, "complete", "manual",
                       "2026-05-01 03:00 UTC", None, 4, 0)  # fmt: skip
    outcomes = pd.DataFrame(
        [(q, "ok", 1.0, 1, n, None) for q, n in (("a", 0), ("b", 0), ("c", 0), ("d", 5))],
        columns=["query_id", "status", "latency_ms", "attempts", "results_count", "error"],
    )
    scores = pd.DataFrame(columns=["query_id", "metric", "value"])
    page = run_page(header, scores=scores, outcomes=outcomes, query_text={}, means={})
    html = run_html(page)
    assert "Most queries returned nothing" in html
    assert "75% of the queries (3 of 4) returned no result" in html
    assert "(75.0 % zero-result rate)" in html
    healthy = run_page(header, scores=scores, outcomes=outcomes.assign(results_count=5),
                       query_text={}, means={})  # fmt: skip
    assert "Most queries returned nothing" not in run_html(healthy)


def test_server_rendered_run_table_orders_numeric_ids_as_numbers() -> None:
    import pandas as pd

    from evalplat.reports.data import RunHeader, run_page

    header = RunHeader(1, "c", 1, None, "builtin", "t", 1, "complete", "manual",
                       "2026-05-01 03:00 UTC", None, 4, 0)  # fmt: skip
    ids = ["100", "10", "2", "1"]
    scores = pd.DataFrame([(q, "P@1", 0.5) for q in ids], columns=["query_id", "metric", "value"])
    outcomes = pd.DataFrame(
        [(q, "ok", 1.0, 1, 1, None) for q in ids],
        columns=["query_id", "status", "latency_ms", "attempts", "results_count", "error"],
    )
    page = run_page(header, scores=scores, outcomes=outcomes, query_text={}, means={"P@1": 0.5})
    assert [row[0] for row in page.table.rows] == ["1", "2", "10", "100"]  # ties: by id
