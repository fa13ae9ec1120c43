"""The per-query join of searches to a test set's queries, and the A/B pairs, as plain data."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalplat.comparison.agreement import ab_pairs
from evalplat.comparison.query_clicks import match_searches, query_clicks, unmatched_searches
from evalplat.reports.delta_chart import DeltaPoint, delta_scatter
from evalplat.reports.online_page import query_table


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    queries = pd.DataFrame(
        {"query_id": ["q1", "q2", "q3", "q10"], "text": ["Café  Au Lait", "café au lait", "", "x"]}
    )
    searches = pd.DataFrame(
        [("v1", "CAFÉ au lait", 4, 1), ("v1", "cafe\u0301 au\tlait", 2, 2), ("v1", "", 3, 0),
         ("v2", "x", 5, 5), ("v2", "nothing", 7, 1), ("v3", "x", 1, 1)],
        columns=["version", "user_query", "searches", "clicked"],
    )  # fmt: skip
    offline = pd.DataFrame(
        [("v1", "q1", 0.5), ("v1", "q3", 0.0), ("v2", "q10", 1.0), ("v3", "q1", 0.2)],
        columns=["version", "query_id", "value"],
    )
    return queries, searches, offline


def test_same_text_after_normalising_joins_every_query_with_it() -> None:
    queries, searches, _ = _frames()
    matched = match_searches(queries, searches)
    got = {(v, q): (n, c) for v, q, n, c in matched.itertuples(index=False)}
    # NFKC composes "e" + combining accent; case and white space runs do not matter; q1 and q2
    # share a text so both get its searches; an empty text joins nothing
    assert got == {("v1", "q1"): (6, 3), ("v1", "q2"): (6, 3), ("v2", "q10"): (5, 5),
                   ("v3", "q10"): (1, 1)}  # fmt: skip
    assert unmatched_searches(queries, searches) == {"v1": 3, "v2": 7}


def test_join_keeps_offline_only_and_search_only_queries_of_chosen_versions() -> None:
    queries, searches, offline = _frames()
    clicks = query_clicks("nDCG@10", queries, searches, offline, ["v1", "v2"])
    rows = {(r.version, r.query_id): r for r in clicks.rows.itertuples(index=False)}
    assert set(rows) == {("v1", "q1"), ("v1", "q2"), ("v1", "q3"), ("v2", "q10")}
    assert rows[("v1", "q2")].searches == 6 and math.isnan(rows[("v1", "q2")].value)
    assert rows[("v1", "q3")].searches == 0 and math.isnan(rows[("v1", "q3")].ctr)
    assert rows[("v2", "q10")].ctr == 1.0
    assert clicks.searches == {"v1": 9, "v2": 12} and clicks.unmatched == {"v1": 3, "v2": 7}
    table = query_table(clicks)
    assert [r[0] for r in table.rows] == ["q1", "q2", "q3", "q10"]  # natural order
    assert [c.key for c in table.columns] == ["q", "t", "b0", "r0", "n0", "b1", "r1", "n1"]
    assert table.rows[3][2:] == (None, None, 0, 1.0, 1.0, 5)
    empty = query_clicks("nDCG@10", queries, searches, offline, [])
    assert empty.rows.empty and query_table(empty).rows == ()


def test_ab_pairs_are_versions_online_on_a_shared_day() -> None:
    offline = pd.DataFrame(
        [("a", "AP", 0.3), ("b", "AP", 0.5), ("c", "AP", 0.1)],
        columns=["version", "metric", "value"],
    )
    online = pd.DataFrame(
        [("a", "d1", "online:CTR", 0.4, 10), ("b", "d1", "online:CTR", 0.2, 30),
         ("b", "d2", "online:CTR", 0.6, 10), ("c", "d3", "online:CTR", 0.9, 5)],
        columns=["version", "day", "kpi", "value", "sessions"],
    )  # fmt: skip
    [pair] = ab_pairs(offline, online, "AP", "online:CTR")
    assert (pair.baseline, pair.candidate, pair.days) == ("a", "b", 1)  # c shared no day
    assert pair.offline_delta == pytest.approx(0.2)
    assert pair.online_delta == pytest.approx(-0.2)  # b on d1 only, not pooled with d2
    assert pair.agrees(1) is False and pair.agrees(-1) is True


def test_an_ab_pairs_delta_is_taken_against_the_control_arm_not_by_name_order() -> None:
    """web@2 is the control arm and sorts after web-ltr@1: the pair's deltas are web-ltr's
    against it, not web@2's against web-ltr."""
    offline = pd.DataFrame([("web-ltr@1", "AP", 0.5), ("web@2", "AP", 0.3)],
                           columns=["version", "metric", "value"])  # fmt: skip
    online = pd.DataFrame([("web-ltr@1", "d1", "online:CTR", 0.5, 10),
                           ("web@2", "d1", "online:CTR", 0.4, 10)],
                          columns=["version", "day", "kpi", "value", "sessions"])  # fmt: skip
    [by_name] = ab_pairs(offline, online, "AP", "online:CTR")
    assert (by_name.baseline, by_name.candidate) == ("web-ltr@1", "web@2")
    [pair] = ab_pairs(offline, online, "AP", "online:CTR", control="web@2")
    assert (pair.baseline, pair.candidate, pair.days) == ("web@2", "web-ltr@1", 1)
    assert pair.offline_delta == pytest.approx(0.2) and pair.online_delta == pytest.approx(0.1)
    assert pair.agrees(1) is True


def test_delta_scatter_escapes_labels_and_skips_non_finite() -> None:
    hostile = "<script>alert(1)</script>"
    svg = delta_scatter(
        [DeltaPoint(0.1, 0.2, True, hostile), DeltaPoint(-0.1, 0.3, False, "b \"q\""),
         DeltaPoint(0.0, 0.0, None, "tie"), DeltaPoint(math.inf, 0.1, True, "skipped")],
        label=hostile, x_label=hostile, y_label="y & z",
    )  # fmt: skip
    assert hostile not in svg and "&lt;script&gt;" in svg and "y &amp; z" in svg
    assert svg.count("<circle") == 2 and svg.count('class="c-bad"') == 1
    assert "skipped" not in svg and "nan" not in svg and "inf" not in svg
    assert "no data" in delta_scatter([], label="l", x_label="x", y_label="y")
