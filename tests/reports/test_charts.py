"""SVG charts: well-formed, marked by shape, escaped, and sane on degenerate data."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.reports import charts

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises on malformed XML


def test_line_chart_draws_baseline_and_regression_with_their_own_shapes() -> None:
    points = [
        charts.LinePoint("#1", 0.40, "baseline"),
        charts.LinePoint("#2", 0.41),
        charts.LinePoint("#3", 0.35, "regression"),
        charts.LinePoint("#4", 0.45, "improvement"),
    ]
    root = parse(charts.line_chart(points, label="nDCG@10 over time", version_changes=[2]))
    assert len(root.findall(f"{SVG}rect[@class='m-baseline']")) == 1
    assert len(root.findall(f"{SVG}path[@class='m-regression']")) == 1
    assert len(root.findall(f"{SVG}path[@class='m-improvement']")) == 1
    assert len(root.findall(f"{SVG}circle[@class='m-run']")) == 1
    assert len(root.findall(f"{SVG}line[@class='c-version']")) == 1
    assert root.get("role") == "img" and root.findtext(f"{SVG}title") == "nDCG@10 over time"


def test_line_chart_puts_higher_values_higher_on_the_page() -> None:
    svg = charts.line_chart([charts.LinePoint("a", 0.1), charts.LinePoint("b", 0.9)], label="x")
    ys = [float(c.get("cy", "nan")) for c in parse(svg).iter(f"{SVG}circle")]
    assert ys[1] < ys[0]  # SVG y grows downwards


def test_line_chart_leaves_a_gap_for_a_missing_value() -> None:
    points = [charts.LinePoint(str(i), v) for i, v in enumerate([0.1, 0.2, None, 0.3, 0.4])]
    root = parse(charts.line_chart(points, label="gap"))
    assert len(root.findall(f"{SVG}polyline")) == 2


def test_constant_and_empty_series_do_not_divide_by_zero() -> None:
    flat = charts.line_chart([charts.LinePoint("a", 0.5), charts.LinePoint("b", 0.5)], label="f")
    ys = {c.get("cy") for c in parse(flat).iter(f"{SVG}circle")}
    assert len(ys) == 1 and "nan" not in flat
    assert "no data" in charts.line_chart([], label="empty")
    assert "no data" in charts.delta_histogram([], label="empty")
    assert "no data" in charts.scatter([], [], label="empty")
    parse(charts.sparkline([], label="empty"))


def y_tick_labels(svg: str) -> list[str]:
    """The y-axis labels (text-anchor end) of a line chart, top to bottom order not assumed."""
    return [
        t.text or ""
        for t in parse(svg).iter(f"{SVG}text")
        if t.get("text-anchor") == "end" and "c-x" not in (t.get("class") or "")
    ]


def test_y_ticks_of_a_nearly_flat_series_are_distinct() -> None:
    points = [charts.LinePoint(str(i), v) for i, v in enumerate([0.7312, 0.7309, 0.7311])]
    labels = y_tick_labels(charts.line_chart(points, label="flat", floor=0.0, ceiling=1.0))
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels
    values = [float(label) for label in labels]
    assert all(0.7 < v < 0.76 for v in values), labels


def test_y_ticks_never_go_below_zero_for_a_metric_bounded_at_zero() -> None:
    for series in ([0.0, 0.0, 0.0], [0.0, 0.02, 0.01], [0.0, 0.5], [1.0, 1.0]):
        points = [charts.LinePoint(str(i), v) for i, v in enumerate(series)]
        labels = y_tick_labels(charts.line_chart(points, label="b", floor=0.0, ceiling=1.0))
        values = [float(label) for label in labels]
        assert len(set(labels)) == len(labels) >= 2, (series, labels)
        assert all(0.0 <= v <= 1.0 for v in values), (series, labels)


def test_axis_ticks_pick_a_nice_step_and_matching_decimals() -> None:
    low, high, ticks = charts.axis_ticks(0.658, 0.804)
    assert [label for _, label in ticks] == ["0.70", "0.75", "0.80"]
    assert (low, high) == (0.658, 0.804)
    _, _, ticks = charts.axis_ticks(0.73045, 0.73155)
    assert [label for _, label in ticks] == ["0.7305", "0.7310", "0.7315"]
    _, _, ticks = charts.axis_ticks(-0.3, 22_800.0, floor=0.0)
    assert [label for _, label in ticks] == ["0", "10,000", "20,000"]


def test_history_axis_shows_run_dates() -> None:
    from evalplat.reports.render import run_dates

    assert run_dates(["2026-05-01 03:00 UTC", "2026-05-02 03:00 UTC"], [1, 2]) == [
        "2026-05-01", "2026-05-02"
    ]  # fmt: skip
    # two runs on one day: dates alone would repeat, so the time is added
    assert run_dates(["2026-05-01 03:00 UTC", "2026-05-01 09:30 UTC"], [1, 2]) == [
        "05-01 03:00", "05-01 09:30"
    ]  # fmt: skip
    # two runs in one minute: the run id tells them apart
    assert run_dates(["2026-05-01 03:00 UTC", "2026-05-01 03:00 UTC"], [7, 8]) == [
        "05-01 #7", "05-01 #8"
    ]  # fmt: skip


def test_labels_are_escaped() -> None:
    svg = charts.line_chart([charts.LinePoint("<b>", 1.0)], label='<script>"x"</script>')
    assert "<script>" not in svg and "<b>" not in svg
    parse(svg)


def test_histogram_counts_every_delta_and_colours_by_direction() -> None:
    deltas = [-0.5, -0.2, -0.2, 0.0, 0.0, 0.0, 0.3]
    root = parse(charts.delta_histogram(deltas, label="d", bins=5))
    rects = list(root.iter(f"{SVG}rect"))
    counted = [int(re.findall(r"^(\d+)", r.findtext(f"{SVG}title", ""))[0]) for r in rects]
    assert sum(counted) == len(deltas)
    assert {"c-bad", "c-good", "c-neutral"} <= {r.get("class") for r in rects}
    flipped = parse(charts.delta_histogram([0.3], label="d", higher_is_better=False))
    assert [r.get("class") for r in flipped.iter(f"{SVG}rect")] == ["c-bad"]


def test_scatter_draws_identical_points_once() -> None:
    baseline = [0.5] * 1000 + [0.2]
    candidate = [0.5] * 1000 + [0.4]
    root = parse(charts.scatter(baseline, candidate, label="s"))
    circles = list(root.iter(f"{SVG}circle"))
    assert len(circles) == 2
    assert "(1000 queries)" in (circles[1].findtext(f"{SVG}title") or "") + (
        circles[0].findtext(f"{SVG}title") or ""
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)), min_size=0, max_size=30)
)
def test_every_chart_is_well_formed_for_any_values(values: list[float | None]) -> None:
    points = [charts.LinePoint(f"#{i}", v) for i, v in enumerate(values)]
    for svg in (
        charts.line_chart(points, label="l", version_changes=[1, 3]),
        charts.line_chart(points, label="b", floor=0.0, ceiling=1.0),
        charts.sparkline(values, label="s"),
        charts.delta_histogram(values, label="h"),
        charts.value_histogram(values, label="v"),
        charts.scatter(values, list(reversed(values)), label="x"),
    ):
        parse(svg)
        assert "nan" not in svg.lower() and "inf" not in svg.lower()
        numbers = [float(n) for n in re.findall(r'(?:x|y|cx|cy)="(-?[\d.]+)"', svg)]
        assert all(math.isfinite(n) for n in numbers)
