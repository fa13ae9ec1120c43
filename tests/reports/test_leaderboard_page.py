"""The leaderboard page for fixed data: its golden file, escaping, and the site index's link."""

from __future__ import annotations

from dataclasses import replace

from evalplat.comparison.leaderboard import Leaderboard
from evalplat.reports import index_html
from evalplat.reports.index_data import SiteIndex
from evalplat.reports.leaderboard_page import interval_chart, leaderboard_html
from evalplat.reports.render import Links

from .test_pages import HOSTILE, check_golden


def test_leaderboard_page_matches_its_golden_file(fixed_leaderboard: Leaderboard) -> None:
    check_golden("leaderboard.html", leaderboard_html(fixed_leaderboard))


def test_leaderboard_page_escapes_run_names_and_links_runs_of_the_site(
    fixed_leaderboard: Leaderboard,
) -> None:
    html = leaderboard_html(fixed_leaderboard, Links("../", frozenset({3}), index=True))
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<a href="../runs/run-3.html">hybrid@1</a>' in html
    assert '<a href="../index.html">' in html
    assert html.count('class="leaderboard"') == 2  # one table per metric


def test_interval_chart_draws_a_dot_and_an_interval_per_run(
    fixed_leaderboard: Leaderboard,
) -> None:
    svg = interval_chart(fixed_leaderboard.metrics[0])
    assert svg.count("<circle") == 5 and svg.count("<line") == 5
    assert 'class="m-baseline"' in svg and 'class="m-improvement"' in svg
    assert HOSTILE not in svg


def test_index_links_the_leaderboards_only_when_there_are_some(fixed_index: SiteIndex) -> None:
    assert "Leaderboards" not in index_html(fixed_index)
    html = index_html(replace(fixed_index, leaderboards=((HOSTILE, "leaderboard/x.html"),)))
    assert "<h2>Leaderboards</h2>" in html and '<a href="leaderboard/x.html">' in html
    assert HOSTILE not in html
