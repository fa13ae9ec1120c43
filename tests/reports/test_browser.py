"""A real headless browser (Debian's chromium driven by Playwright) opens the pages from disk.

Skipped, with the reason, when /usr/bin/chromium or the playwright package is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from evalplat.reports import comparison_html, history_html, index_html, run_html
from evalplat.reports.compared import ComparisonPage
from evalplat.reports.data import HistoryPage, RunPage
from evalplat.reports.index_data import SiteIndex
from evalplat.reports.online_page import OfflineOnlinePage

HOSTILE = "<script>alert(1)</script>"
GOLDEN = Path(__file__).resolve().parent / "golden"
QUOTED = "say \"hi\" & 'bye'"


@dataclass
class Visit:
    """What happened while a page was open."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def visit(browser: Any, tmp_path: Path) -> Iterator[Callable[[str, str], Visit]]:
    opened: list[Any] = []

    def open_page(name: str, html: str) -> Visit:
        path = tmp_path / name
        path.write_text(html, encoding="utf-8")
        page = browser.new_page()
        opened.append(page)
        seen = Visit(page)
        page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: seen.errors.append(str(e)))
        page.on("request", lambda r: seen.requests.append(r.url))
        page.on("dialog", lambda d: (seen.dialogs.append(d.message), d.dismiss()))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        return seen

    yield open_page
    for page in opened:
        page.close()


def first_column(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("#query-table tbody tr td:first-child",
                                          "cells => cells.map(c => c.textContent)"))  # fmt: skip


def assert_clean(seen: Visit) -> None:
    assert seen.errors == []
    assert seen.dialogs == []
    assert all(url.startswith(("file:", "data:")) for url in seen.requests), seen.requests


def test_every_page_loads_without_errors_or_network(
    visit: Callable[[str, str], Visit],
    make_comparison_page: Callable[..., ComparisonPage],
    fixed_run_page: RunPage,
    fixed_history_page: HistoryPage,
    fixed_index: SiteIndex,
) -> None:
    pages = {
        "comparison.html": comparison_html(make_comparison_page()),
        "run.html": run_html(fixed_run_page),
        "history.html": history_html(fixed_history_page),
        "index.html": index_html(fixed_index),
    }
    for name, html in pages.items():
        seen = visit(name, html)
        assert_clean(seen)
        assert seen.page.locator("h1").count() == 1


def test_clicking_a_header_sorts_the_per_query_table(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    seen = visit("comparison.html", comparison_html(make_comparison_page()))
    assert first_column(seen.page) == ["q1", "q2", "q4", "q3"]  # worst nDCG@10 delta first
    header = seen.page.locator("#query-table th[data-key='q'] button")
    header.click()
    assert first_column(seen.page) == ["q1", "q2", "q3", "q4"]
    header.click()
    assert first_column(seen.page) == ["q4", "q3", "q2", "q1"]
    sort = seen.page.get_attribute("#query-table th[data-key='q']", "aria-sort")
    assert sort == "descending"
    assert_clean(seen)


def test_script_tag_query_text_stays_text_in_the_browser(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    seen = visit("comparison.html", comparison_html(make_comparison_page()))
    # re-render the rows from the JSON blob too, so both code paths are exercised
    seen.page.locator("#query-table th[data-key='t'] button").click()
    texts = seen.page.eval_on_selector_all(
        "#query-table td.text", "cells => cells.map(c => c.textContent)"
    )
    assert HOSTILE in texts
    assert seen.page.evaluate("document.querySelectorAll('script').length") == 3
    assert seen.dialogs == []
    assert_clean(seen)


def test_filter_and_pages_work_on_many_queries(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    from dataclasses import replace

    page = make_comparison_page()
    base = page.table.rows[0]
    rows = tuple((f"x{i:03d}", f"text {i}", *base[2:]) for i in range(120))
    seen = visit("many.html", comparison_html(replace(page, table=replace(page.table, rows=rows))))
    assert seen.page.locator("#query-table tbody tr").count() == 50
    assert seen.page.text_content("#q-status") == "1\u201350 of 120 queries (120 in all)"
    seen.page.click("#q-next")
    assert first_column(seen.page)[0] == "x050"
    seen.page.fill("#q-filter", "text 11")
    assert sorted(first_column(seen.page)) == ["x011", "x110", "x111", "x112", "x113", "x114",
                                               "x115", "x116", "x117", "x118", "x119"]  # fmt: skip
    seen.page.fill("#q-filter", "")
    seen.page.select_option("#q-move", "better")
    assert seen.page.locator("#query-table tbody tr").count() == 0  # every row got worse
    assert_clean(seen)


def test_printing_opens_every_moved_query(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    from dataclasses import replace

    page = make_comparison_page()
    many = replace(page, worse=page.worse * 3)  # more than the three shown open on screen
    seen = visit("print.html", comparison_html(many))
    closed = "document.querySelectorAll('details.mover:not([open])').length"
    assert seen.page.evaluate(closed) > 0
    seen.page.emulate_media(media="print")
    seen.page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert seen.page.evaluate(closed) == 0
    assert_clean(seen)


def test_the_first_page_is_there_without_javascript(
    browser: Any, tmp_path: Path, make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    path = tmp_path / "nojs.html"
    path.write_text(comparison_html(make_comparison_page()), encoding="utf-8")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(path.as_uri())
    assert first_column(page) == ["q1", "q2", "q4", "q3"]
    assert page.locator("#q-controls").is_hidden()
    context.close()


def test_query_ids_sort_as_numbers_on_the_run_page(
    visit: Callable[[str, str], Visit], fixed_run_page: RunPage
) -> None:
    from dataclasses import replace

    ids = ["100", "2", "10", "1", "101", "q10", "q9"]
    base = fixed_run_page.table.rows[0]
    rows = tuple((q, f"text {q}", *base[2:]) for q in ids)
    page = replace(fixed_run_page, table=replace(fixed_run_page.table, rows=rows))
    seen = visit("run.html", run_html(page))
    header = seen.page.locator("#query-table th[data-key='q'] button")
    header.click()
    assert first_column(seen.page) == ["1", "2", "10", "100", "101", "q9", "q10"]
    header.click()
    assert first_column(seen.page) == ["q10", "q9", "101", "100", "10", "2", "1"]
    assert_clean(seen)


def test_comparison_page_shows_what_changed_and_document_titles(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    seen = visit("comparison.html", comparison_html(make_comparison_page()))
    rows = seen.page.eval_on_selector_all(
        "table.changes tbody tr",
        "rows => rows.map(r => Array.from(r.children).map(c => c.textContent))",
    )
    assert ["tokenizer", '"porter"', '"unicode61"', "changed"] in rows
    assert ["note", "\u2013", '"<script>alert(1)</script>"', "added"] in rows
    assert "judgments 3 added" in (seen.page.text_content("p.test-set-change") or "")
    titles = seen.page.eval_on_selector_all(
        "table.hits .doc-title", "cells => cells.map(c => c.textContent)"
    )
    assert "Laminar flow over a flat plate" in titles
    assert seen.page.locator("table.hits .doc-title").first.is_visible()
    assert_clean(seen)


def test_history_chart_axes_show_dates_and_distinct_ticks(
    visit: Callable[[str, str], Visit], fixed_history_page: HistoryPage
) -> None:
    seen = visit("history.html", history_html(fixed_history_page))
    charts = seen.page.locator("svg.line-chart")
    assert charts.count() == 2
    for i in range(charts.count()):
        svg = charts.nth(i)
        x_labels = svg.locator("text.c-x").all_text_contents()
        assert x_labels == ["2026-05-01", "2026-05-02", "2026-05-03"]
        y_labels = svg.locator("text.c-tick:not(.c-x)").all_text_contents()
        assert len(y_labels) >= 2 and len(set(y_labels)) == len(y_labels)
        assert all(0 <= float(label) <= 1 for label in y_labels)
        assert svg.bounding_box() is not None  # laid out, not hidden
    assert_clean(seen)


def test_history_draws_the_first_metric_per_segment(
    visit: Callable[[str, str], Visit], fixed_history_page: HistoryPage
) -> None:
    from dataclasses import replace

    # runs 1, 2, 3 (oldest first): the tail falls at run 2 while the head stays flat; the
    # hostile tag has no query in run 3, a gap in its line
    segments = {"head": {1: 0.4, 2: 0.4, 3: 0.4}, "tail": {1: 0.35, 2: 0.1, 3: 0.1},
                HOSTILE: {1: 0.2, 2: 0.25}}  # fmt: skip
    seen = visit("history.html", history_html(replace(fixed_history_page, segments=segments)))
    page = seen.page
    assert page.text_content("#by-segment") == "nDCG@10 by segment"
    section = page.locator("section[aria-labelledby='by-segment']")
    captions = section.locator("figcaption strong").all_text_contents()
    assert captions == ["head", "tail", HOSTILE]
    charts = section.locator("svg.line-chart")
    assert charts.count() == 3 and page.locator("svg.line-chart").count() == 5
    labels = [charts.nth(i).get_attribute("aria-label") or "" for i in range(3)]
    assert labels[1].startswith("nDCG@10 over time, segment tail")
    for i in range(3):
        assert charts.nth(i).bounding_box() is not None
        x_labels = charts.nth(i).locator("text.c-x").all_text_contents()
        assert x_labels == ["2026-05-01", "2026-05-02", "2026-05-03"]
    assert_clean(seen)


def test_segment_table_and_filter_of_the_query_table(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    from .conftest import segmented_result

    seen = visit("segments.html", comparison_html(make_comparison_page(result=segmented_result())))
    page = seen.page
    segments = page.eval_on_selector_all(
        "#segment-table tbody tr",
        "rows => rows.map(r => [r.children[0].textContent, r.children[10].textContent.trim()])",
    )
    assert segments == [["head", "gate"], [HOSTILE, "2 queries, fewer than 20: not gated"]]
    assert "weighted by query weight" in (page.text_content("table.metrics caption") or "")
    options = page.eval_on_selector_all("#q-segment option", "o => o.map(x => x.textContent)")
    assert options == ["all queries", HOSTILE, "head"]
    assert first_column(page) == ["q1", "q2", "q4", "q3"]
    page.select_option("#q-segment", "head")
    assert first_column(page) == ["q1", "q2"]
    assert page.text_content("#q-status") == "1\u20132 of 2 queries (4 in all)"
    page.select_option("#q-segment", HOSTILE)
    assert first_column(page) == ["q2", "q3"]
    page.fill("#q-filter", "shock")  # the text filter and the segment filter combine
    assert first_column(page) == ["q3"]
    page.fill("#q-filter", "")
    page.select_option("#q-segment", "")
    assert len(first_column(page)) == 4
    assert seen.dialogs == []
    assert_clean(seen)


def test_pages_without_segments_have_no_segment_filter(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    seen = visit("plain.html", comparison_html(make_comparison_page()))
    assert seen.page.locator("#q-segment").count() == 0
    assert seen.page.locator("#segment-table").count() == 0
    assert_clean(seen)


def test_run_page_draws_the_latency_distribution_and_lists_queries_without_results(
    visit: Callable[[str, str], Visit], fixed_run_page: RunPage
) -> None:
    from dataclasses import replace

    page = replace(fixed_run_page, empty=(("q7", '<b>"laminar"</b>'),), zero_results=1)
    seen = visit("run.html", run_html(page))
    figure = seen.page.locator("figure", has_text="Latency (ms)")
    assert figure.count() == 1
    bars = figure.locator("svg rect")
    # three answered queries (12.5, 30, 8.25 ms): three bars, one query each, visible
    assert bars.count() == 3
    assert bars.first.bounding_box()["height"] > 0
    titles = figure.locator("svg rect title").all_text_contents()
    assert all(title.startswith("1 queries in") for title in titles)
    section = seen.page.locator("h2", has_text="Queries without results")
    assert section.count() == 1
    rows = seen.page.locator("h2:has-text('Queries without results') + table tbody tr")
    assert rows.all_inner_texts() == ['q7\t<b>"laminar"</b>']  # hostile text stays text
    assert_clean(seen)


def test_an_online_run_page_shows_sessions_and_no_query_parts(
    visit: Callable[[str, str], Visit],
) -> None:
    import pandas as pd

    from evalplat.reports.data import run_page

    from .conftest import header

    online = replace(header(9, 1, None, 3), trigger="online", test_set="online",
                     queries_total=3, window="2026-03-02", searches=5, events=4)  # fmt: skip
    scores = pd.DataFrame(
        [(f"s{n}", "online:CTR", value) for n, value in enumerate((1.0, 0.5, 0.0))],
        columns=["query_id", "metric", "value"],
    )
    outcomes = pd.DataFrame(
        columns=["query_id", "status", "latency_ms", "attempts", "results_count", "error"]
    )
    page = run_page(online, scores=scores, outcomes=outcomes, query_text={},
                    means={"online:CTR": 0.5})  # fmt: skip
    seen = visit("online-run.html", run_html(page))
    facts = seen.page.locator("dl.facts").first.inner_text()
    assert "sessions\n3" in facts and "searches\n5" in facts and "2026-03-02" in facts
    headings = seen.page.locator("h2").all_inner_texts()
    assert headings == ["Metrics", "Distribution per session"]
    assert seen.page.locator("text=Sessions, not queries").count() == 1
    assert seen.page.locator("#query-table").count() == 0
    assert_clean(seen)


def test_query_health_page_loads_sorts_and_keeps_hostile_text_as_text(
    visit: Callable[[str, str], Visit],
) -> None:
    import pandas as pd

    from evalplat.comparison.query_health import HealthInputs, query_health
    from evalplat.reports.health import health_html, health_page

    ids = [f"q{n}" for n in range(1, 121)]
    runs = (1, 2, 3)
    scores = pd.DataFrame(
        [(r, q, (n * r % 7) / 7) for n, q in enumerate(ids) for r in runs],
        columns=["run_id", "query_id", "value"],
    )
    texts = [HOSTILE if q == "q2" else f"topic {q}" for q in ids]
    inputs = HealthInputs(
        config="docs-bm25", test_set=HOSTILE, metric="nDCG@10", higher_is_better=True, runs=runs,
        scores=scores,
        records=pd.DataFrame({"run_id": 3, "query_id": ids, "results_count": 1, "status": "ok"}),
        queries=pd.DataFrame({"query_id": ids, "text": texts, "weight": 1.0, "tags": None}),
        peers=scores[scores["run_id"] == 3].assign(config="docs-bm25")[["config", "query_id",
                                                                         "value"]],
        top=pd.DataFrame({"config": "docs-bm25", "query_id": ids, "doc_id": HOSTILE, "rank": 1,
                          "judged": False, "title": HOSTILE, "text": "start of the text"}),
    )  # fmt: skip
    seen = visit("health.html", health_html(health_page(query_health(inputs))))
    assert seen.page.locator("h1").count() == 1
    assert first_column(seen.page)[:3] == ["q1", "q2", "q3"]
    texts_shown = seen.page.eval_on_selector_all(
        "#query-table td.text", "cells => cells.map(c => c.textContent)"
    )
    assert HOSTILE in texts_shown
    seen.page.locator("#query-table th[data-key='q'] button").click()
    assert first_column(seen.page)[0] == "q120"
    assert seen.page.locator("#judge-list td.id", has_text=HOSTILE).count() >= 1
    # an annotator reads what to grade: the document's title (as text) and its start
    assert seen.page.locator("#judge-list .doc-title", has_text=HOSTILE).count() >= 1
    assert seen.page.locator("#judge-list .doc-snippet").first.text_content() == "start of the text"
    assert seen.page.evaluate("document.querySelectorAll('script').length") == 2
    assert_clean(seen)


def test_calibration_page_loads_marks_changed_verdicts_and_keeps_model_text_as_text(
    visit: Callable[[str, str], Visit],
) -> None:
    from evalplat.reports.calibration import calibration_html

    source = {
        "source": HOSTILE, "pairs": 4, "exact": 0.5, "weighted_kappa": 0.25, "alpha": 0.2,
        "grades": [0, 1], "confusion": [[1, 1], [1, 1]],
        "bias": [{"grade": 0, "pairs": 2, "judge_mean": 0.5, "bias": 0.5}],
    }  # fmt: skip
    shift = {
        "metric": "nDCG@10", "human_delta": -0.2, "model_delta": 0.1,
        "human_verdict": "regression", "model_verdict": "improvement", "changed": True,
    }  # fmt: skip
    record = {
        "judge": HOSTILE, "model": "m", "prompt_hash": "ab" * 32, "scale": [0, 3], "floor": 0.4,
        "sampled": 4, "failed": 1, "sources": [source], "gating": False,
        "refusal": "weighted kappa 0.25 against 'x' (4 pairs) is below the floor 0.40",
        "what_if": [{"comparison_id": 7, "baseline": "run 1: a@1", "candidate": "run 2: b@1",
                     "test_set": "t@1", "replaced": 4, "metrics": [shift], "skipped": None}],
    }  # fmt: skip
    seen = visit("calibration.html", calibration_html(record))
    assert seen.page.locator("h1").inner_text() == f"Judge calibration · {HOSTILE}"
    assert seen.page.locator("#gating").inner_text().startswith("✗ refused for gating")
    diagonal = seen.page.eval_on_selector_all(
        "table.confusion td.agree", "cells => cells.map(c => c.textContent)"
    )
    assert diagonal == ["● 1", "● 1"]
    assert seen.page.locator("#what-if-table tr.changed").count() == 1
    assert seen.page.evaluate("document.querySelectorAll('script').length") == 0
    assert_clean(seen)


def test_offline_online_page_loads_sorts_and_keeps_hostile_text_as_text(
    visit: Callable[[str, str], Visit], fixed_online_page: OfflineOnlinePage
) -> None:
    from evalplat.reports.online_page import offline_online_html

    seen = visit("online.html", offline_online_html(fixed_online_page))
    page = seen.page
    assert page.locator("h1").inner_text() == f"Offline vs online · {HOSTILE}"
    scatter = page.locator("svg.delta-scatter")
    assert scatter.count() == 1 and scatter.bounding_box() is not None
    assert scatter.locator("circle").count() + scatter.locator("path.c-bad").count() == 10
    assert page.locator("#pairs tbody tr").count() == 10
    rows = page.eval_on_selector_all(
        "#agreement-table tbody tr",
        "rows => rows.map(r => Array.from(r.cells, c => c.textContent.trim()))",
    )
    # the chosen pairs only (AP is stored, not chosen); tau 0.8, exact p = 10/120
    assert rows == [
        ["nDCG@10", "online:CTR", "5", "+0.80", "0.083", "+0.90", "9/10 (90.0 %)"],
        ["nDCG@10", "online:MRR", "1", "too few versions (1)"],
    ]
    assert first_column(page)[:3] == ["q1", "q2", "q3"]
    page.locator("#query-table th[data-key='t'] button").click()  # re-rendered from the JSON
    page.locator("#query-table th[data-key='q'] button").click()
    page.locator("#query-table th[data-key='q'] button").click()
    shown = page.eval_on_selector_all(
        "#query-table td.text", "cells => cells.map(c => c.textContent)"
    )
    assert first_column(page)[0] == "q60" and len(shown) == 50
    page.fill("#q-filter", "bye")
    shown = page.eval_on_selector_all(
        "#query-table td.text", "cells => cells.map(c => c.textContent)"
    )
    assert shown == [QUOTED]
    page.fill("#q-filter", "alert")
    assert page.eval_on_selector_all(
        "#query-table td.text", "cells => cells.map(c => c.textContent)"
    ) == [HOSTILE]
    assert page.evaluate("document.querySelectorAll('script').length") == 2
    assert_clean(seen)


def test_comparison_page_shows_the_operational_facts_under_the_verdict(
    visit: Callable[[str, str], Visit], make_comparison_page: Callable[..., ComparisonPage]
) -> None:
    from dataclasses import replace

    from evalplat.comparison.facts import RunRecords, comparison_facts

    from .conftest import comparison_result

    texts = {"q1": "laminar", "q2": "", "q3": "flow"}
    baseline = RunRecords(1, dict.fromkeys(texts, "ok"), dict.fromkeys(texts, 5), texts)
    candidate = replace(baseline, run=2, results={"q1": 0, "q2": 0, "q3": 4})
    facts = tuple(comparison_facts(baseline, candidate))
    result = replace(comparison_result(), facts=facts)
    seen = visit("facts.html", comparison_html(make_comparison_page(result=result)))
    block = seen.page.locator("section[aria-label='operational facts']")
    assert block.is_visible()
    # the block follows the verdict banner, before the metrics
    order = seen.page.eval_on_selector_all(
        "section.banner", "nodes => nodes.map(n => n.getAttribute('aria-label'))"
    )
    assert order[:2] == ["verdict", "operational facts"]
    items = block.locator("li")
    assert items.all_inner_texts() == [
        "new: 2 of 3 queries returned nothing (run 2).",
        "1 query has an empty text (run 2); the baseline too.",
    ]
    kinds = items.evaluate_all(
        "nodes => nodes.map(n => n.dataset.factKind + ':' + n.dataset.factSide)"
    )
    assert kinds == ["zero_results:candidate", "empty_text:both"]
    assert_clean(seen)


def test_leaderboard_page_loads_opens_its_pairs_and_keeps_hostile_text_as_text(
    visit: Callable[[str, str], Visit], fixed_leaderboard: Any
) -> None:
    from evalplat.reports.leaderboard_page import leaderboard_html

    seen = visit("leaderboard.html", leaderboard_html(fixed_leaderboard))
    page = seen.page
    assert page.locator("h1").inner_text() == "Leaderboard · mini@1"
    assert page.locator("table.leaderboard").count() == 2
    first = page.locator("#board-1 tbody tr")
    assert first.count() == 5
    runs = page.eval_on_selector_all("#board-1 tbody tr td:nth-child(2)",
                                     "cells => cells.map(c => c.textContent)")  # fmt: skip
    assert runs[0].startswith(f"dense@1 ({HOSTILE})") and runs[-1].startswith("stemless@1")
    charts = page.locator("svg.intervals")
    assert charts.count() == 2 and charts.first.bounding_box() is not None
    pairs = page.locator("details").first
    assert not pairs.locator("table.pairs").is_visible()
    pairs.locator("summary").click()
    assert pairs.locator("table.pairs tbody tr").count() == 10
    assert page.evaluate("document.querySelectorAll('script').length") == 0
    assert_clean(seen)


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.html")))
def test_no_table_of_a_golden_page_is_wider_than_a_1024_px_page(
    browser: Any, tmp_path: Path, name: str
) -> None:
    """A table wider than the page hides its last columns behind a scroll bar (or past the
    window's edge): at 1,024 px, every table of every golden page fits its page and shows all
    of its columns."""
    path = tmp_path / name
    path.write_text((GOLDEN / name).read_text(encoding="utf-8"), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("table").count() > 0
        for details in page.locator("details").all():  # folded tables count when opened
            details.evaluate("d => { d.open = true; }")
        wide = page.evaluate(
            """() => [...document.querySelectorAll('table')].flatMap(t => {
                const box = t.getBoundingClientRect();
                const fits = box.right <= document.documentElement.clientWidth + 0.5
                    && t.scrollWidth <= t.parentElement.clientWidth + 0.5;
                const name = t.id || t.className || 'table';
                return fits ? [] : [`${name}: ${Math.round(box.width)} px`];
            })"""
        )
        assert wide == [], f"{name}: tables wider than a 1,024 px page: {wide}"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1024
    finally:
        page.close()


def test_history_marks_change_points_on_the_chart_and_in_a_table(
    visit: Callable[[str, str], Visit], fixed_history_page: HistoryPage
) -> None:
    from datetime import date

    from evalplat.comparison.change_points import ChangePoint

    # run 2 (the second point) is where nDCG@10 stepped down; P@5 did not move
    step = ChangePoint("nDCG@10", 2, date(2026, 5, 2), 0.375, 0.335, 0.335 - 0.375, "test set",
                       "judgments changed (v1 → v2)")  # fmt: skip
    page = replace(fixed_history_page, change_points={"nDCG@10": (step,)})
    seen = visit("history.html", history_html(page))
    charts = seen.page.locator("svg.line-chart")
    assert [charts.nth(i).locator("g.c-change").count() for i in range(2)] == [1, 0]
    mark = charts.nth(0).locator("g.c-change")
    assert mark.locator("title").text_content() == step.text()
    assert mark.locator("text").text_content() == "▼"
    # the mark stands between the first and the second point of the line
    line = mark.locator("line").bounding_box()
    xs = [box["x"] for box in (
        charts.nth(0).locator(".c-x").nth(i).bounding_box() for i in range(2)
    ) if box is not None]  # fmt: skip
    assert line is not None and len(xs) == 2 and xs[0] < line["x"]
    rows = seen.page.locator("#change-points ~ div table tbody tr")
    assert rows.count() == 1
    cells = rows.nth(0).locator("td").all_text_contents()
    assert cells[:3] == ["2026-05-02", "#2", "nDCG@10"]
    assert cells[5] == "▼ \u22120.0400" and cells[6] == "test set: judgments changed (v1 → v2)"
    assert_clean(seen)
