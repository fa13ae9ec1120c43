"""SVG charts: well-formed, marked by shape, escaped, and sane on degenerate data."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import example, given
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
    from evalplat.reports.history_render import run_dates

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


# Values that once broke a chart: a subnormal extent made a bin width of 0, a ±1e308 range
# overflowed to inf, a constant huge value absorbed its ±0.5 padding.
DEGENERATE = [
    [5e-324],
    [-5e-324, 5e-324],
    [1e-310, 2e-310, None],
    [1e308],
    [-1e308, 1e308],
    [1.7976931348623157e308, -1.7976931348623157e308, 0.0],
    [1e308, 1e308, 1e308],
    [0.25, 0.25, 0.25],
    [-0.0],
    [-0.0, 0.0],
    [3.0],
    [1e17, 1e17],
    [-1e17, None, -1e17],
]


def _all_charts(values: list[float | None]) -> list[str]:
    points = [charts.LinePoint(f"#{i}", v) for i, v in enumerate(values)]
    return [
        charts.line_chart(points, label="l", version_changes=[1, 3]),
        charts.line_chart(points, label="b", floor=0.0, ceiling=1.0),
        charts.sparkline(values, label="s"),
        charts.delta_histogram(values, label="h"),
        charts.value_histogram(values, label="v"),
        charts.scatter(values, list(reversed(values)), label="x"),
        charts.scatter(values, [0.5 for _ in values], label="x"),
    ]


COORDINATE = re.compile(r"^(?:x|y|x1|x2|y1|y2|cx|cy|r|width|height)$")


def assert_well_formed(svg: str, values: list[float | None]) -> None:
    """Parsed as XML; every coordinate (attributes, points, paths) is a finite number."""
    root = parse(svg)
    coordinates: list[str] = []
    for element in root.iter():
        for name, text in element.attrib.items():
            if COORDINATE.match(name):
                coordinates.append(text)
            elif name == "points":
                coordinates.extend(re.split(r"[ ,]+", text.strip()))
            elif name == "d":
                coordinates.extend(re.findall(r"[-\d.eE+]+", text))
    assert all(math.isfinite(float(c)) for c in coordinates), (values, svg)
    marks = root.findall(f"{SVG}rect[@class]") + root.findall(f"{SVG}circle")
    assert marks or "no data" in svg or "sparkline" in svg, (values, svg)
    text = " ".join(root.itertext()).lower()
    assert "nan" not in text and "inf" not in text, (values, svg)


@pytest.mark.parametrize("values", DEGENERATE, ids=repr)
def test_every_chart_is_well_formed_on_degenerate_values(values: list[float | None]) -> None:
    for svg in _all_charts(values):
        assert_well_formed(svg, values)


def test_subnormal_deltas_fall_in_the_middle_and_outer_bins() -> None:
    root = parse(charts.delta_histogram([5e-324, -5e-324, 0.0], label="d", bins=5))
    classes = sorted(r.get("class", "") for r in root.iter(f"{SVG}rect"))
    assert classes == ["c-bad", "c-good", "c-neutral"]  # ±extent at the edges, 0 in the middle


def test_huge_values_keep_their_order_on_the_page() -> None:
    points = [
        charts.LinePoint("a", -1e308),
        charts.LinePoint("b", 0.0),
        charts.LinePoint("c", 1e308),
    ]
    ys = [
        float(c.get("cy", "nan"))
        for c in parse(charts.line_chart(points, label="x")).iter(f"{SVG}circle")
    ]
    assert ys[0] > ys[1] > ys[2]


def test_value_histogram_of_a_constant_huge_value_counts_it_once() -> None:
    root = parse(charts.value_histogram([1e308, 1e308], label="v"))
    titles = [r.findtext(f"{SVG}title", "") for r in root.iter(f"{SVG}rect")]
    assert len(titles) == 1 and titles[0].startswith("2 queries")


@given(
    st.lists(
        st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
        min_size=0,
        max_size=30,
    )
)
@example([5e-324])  # the delta histogram's bin width rounded to 0 (found by this test)
@example([-1e308, 1e308])  # the range overflowed to inf
@example([1e308, 1e308])  # a constant huge value: its ±0.5 padding was lost in rounding
@example([-0.0, 5e-324, None])
def test_every_chart_is_well_formed_for_any_values(values: list[float | None]) -> None:
    for svg in _all_charts(values):
        assert_well_formed(svg, values)


def test_value_on_a_bin_edge_is_counted_in_the_bin_that_starts_there() -> None:
    root = parse(charts.value_histogram([0.3, 0.6], label="v"))
    titles = [r.findtext(f"{SVG}title", "") for r in root.iter(f"{SVG}rect")]
    assert titles == ["1 queries in [0.3, 0.4)", "1 queries in [0.6, 0.7)"]


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=60))
@example([0.0, 0.1, 0.2, 0.3, 0.7, 0.9, 1.0])
@example([-1e308, 1e308, 0.0])  # a span that overflows: the halves' arithmetic
def test_histogram_bins_count_each_value_where_its_fraction_puts_it(values: list[float]) -> None:
    from evalplat.reports.axes import Axis

    low, high = min(values), max(values)
    axis = Axis(0.0, 1.0) if low >= 0 and high <= 1 else Axis(low, high) if high > low else None
    if axis is None:
        return
    expected = [0] * 10
    for value in values:
        expected[min(9, int(axis.fraction(value) * 10))] += 1
    assert charts._bin_counts(values, axis, 10) == expected
