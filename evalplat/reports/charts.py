"""Inline SVG charts drawn on the server: pure functions from numbers to an SVG string.

Every chart is a complete ``<svg>`` element with ``role="img"``, a ``<title>`` and an
``aria-label`` (screen readers), colours taken from CSS classes (``c-base``, ``c-cand``,
``c-good``, ``c-bad``, ``c-axis``...) so that the page's light and dark themes apply, and no
script or external reference. All text passes through ``html.escape``. Coordinates are rounded to
one decimal so the output is deterministic and compact (golden files compare it byte for byte).

Edge rules: an empty series draws an empty frame with a "no data" note; a constant series is
drawn on a range padded by ±0.5 (or ±|v|·10 %) so it sits mid-height instead of dividing by 0;
``None``/NaN values are gaps (line charts) or skipped (histogram, scatter). Any finite float is
drawn: subnormal values (5e-324) never make a zero-width range, and huge ones (±1e308), whose
difference overflows, are placed on the axis by halves; an axis end is clamped to the largest
float. Every coordinate is therefore finite.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from evalplat.reports.axes import (
    Axis,
    axis_ticks,
    constant_margin,
    fmt_edge,
    fmt_tick,
    padded_range,
    widened,
)

PointKind = str  # "run" | "baseline" | "regression" | "improvement"


@dataclass(frozen=True)
class LinePoint:
    """One x position of a line chart: its label, value (None = gap) and what it marks."""

    label: str
    value: float | None
    kind: PointKind = "run"
    note: str = ""  # tooltip text, e.g. "run 12 · config v3"


def _f(value: float) -> str:
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _finite(values: Sequence[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def _open(width: int, height: int, label: str, css: str) -> str:
    text = escape(label)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {css}" viewBox="0 0 {width} '
        f'{height}" width="{width}" height="{height}" role="img" aria-label="{text}">'
        f"<title>{text}</title>"
    )


def _no_data(width: int, height: int) -> str:
    return (
        f'<text class="c-note" x="{width / 2:.1f}" y="{height / 2:.1f}" '
        'text-anchor="middle">no data</text>'
    )


def line_chart(
    points: Sequence[LinePoint],
    *,
    label: str,
    version_changes: Sequence[int] = (),
    judgment_changes: Sequence[int] = (),
    width: int = 640,
    height: int = 200,
    floor: float | None = None,
    ceiling: float | None = None,
    target: tuple[str, float] | None = None,
    change_points: Sequence[tuple[int, str]] = (),
) -> str:
    """A line with a marker per point; baseline and regression points get their own symbols.

    ``target`` (``("min", 0.85)`` or ``("max", 200)``) draws the target as a dashed horizontal
    line and shades the side of it that misses (below a ``min``, above a ``max``); the axis
    widens to show it.
    ``version_changes`` are indices where a new config version starts: a dashed vertical line
    is drawn just before that point. ``judgment_changes`` are indices where the points start
    being scored against other judgments: a dotted line marks it and the line is broken there,
    since values on both sides are not comparable. ``change_points`` are (index, text): the
    metric stepped from that point on; a solid vertical line just before it carries the text
    as its title and a ``▲``/``▼`` (the text's first character) at its top. Markers: circle =
    run, square = baseline, downward triangle = regression, upward triangle = improvement
    (shape as well as colour). The y axis stays within ``[floor, ceiling]`` (0 and 1 for a
    metric bounded in [0, 1]); its ticks come from ``axis_ticks``. Point labels are the x axis
    labels (run dates on history pages).
    """
    left, right, top, bottom = 56, 12, 12, 28
    out = [_open(width, height, label, "line-chart")]
    values = _finite([p.value for p in points])
    if not values:
        out.append(_no_data(width, height))
        return "".join(out) + "</svg>"
    axis = padded_range(values if target is None else [*values, target[1]])
    # the bounds clip the padding, never the data: a value outside them widens the axis
    floor = None if floor is None else min(floor, *values)
    ceiling = None if ceiling is None else max(ceiling, *values)
    low, high, ticks = axis_ticks(axis.low, axis.high, floor=floor, ceiling=ceiling)
    axis = Axis(low, high)
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / max(len(points) - 1, 1)

    def x_of(i: int) -> float:
        return left + (i * step if len(points) > 1 else plot_w / 2)

    def y_of(v: float) -> float:
        return top + plot_h * (1 - axis.fraction(v))

    for tick, text in ticks:
        y = y_of(tick)
        out.append(
            f'<line class="c-grid" x1="{left}" x2="{width - right}" y1="{_f(y)}" y2="{_f(y)}"/>'
            f'<text class="c-tick" x="{left - 4}" y="{_f(y + 3)}" text-anchor="end">'
            f"{escape(text)}</text>"
        )
    if target is not None:
        out.append(_target_band(target, y_of, left, width - right, top, height - bottom))
    for indices, kind, title in (
        (version_changes, "c-version", "new config version"),
        (judgment_changes, "c-judgments", "new judgments"),
    ):
        for x in [(x_of(i - 1) + x_of(i)) / 2 for i in indices if 0 < i < len(points)]:
            out.append(
                f'<line class="{kind}" x1="{_f(x)}" x2="{_f(x)}" y1="{top}" '
                f'y2="{height - bottom}"><title>{title}</title></line>'
            )
    for index, text in change_points:
        if 0 < index < len(points):
            x = (x_of(index - 1) + x_of(index)) / 2
            out.append(
                f'<g class="c-change"><line x1="{_f(x)}" x2="{_f(x)}" y1="{top}" '
                f'y2="{height - bottom}" stroke="#6c3483" stroke-width="1.5"/>'
                f'<text x="{_f(x)}" y="{top + 9}" text-anchor="middle" fill="#6c3483" '
                f'font-size="10">{escape(text[:1])}</text><title>{escape(text)}</title></g>'
            )
    segments: list[list[str]] = [[]]
    for i, point in enumerate(points):
        if i in judgment_changes:
            segments.append([])
        if point.value is None or not math.isfinite(point.value):
            segments.append([])
            continue
        segments[-1].append(f"{_f(x_of(i))},{_f(y_of(point.value))}")
    for segment in segments:
        if len(segment) > 1:
            out.append(f'<polyline class="c-line" points="{" ".join(segment)}"/>')
    for i, point in enumerate(points):
        if point.value is None or not math.isfinite(point.value):
            continue
        tip = escape(
            f"{point.label}: {point.value:.4f}" + (f" · {point.note}" if point.note else "")
        )
        out.append(_marker(point.kind, x_of(i), y_of(point.value), tip))
    shown = _label_positions(len(points))
    for i in shown:
        # the outer labels align with the plot's edges so that they stay inside the chart
        anchor = "middle"
        if len(shown) > 1 and i == shown[0]:
            anchor = "start"
        elif len(shown) > 1 and i == shown[-1]:
            anchor = "end"
        out.append(
            f'<text class="c-tick c-x" x="{_f(x_of(i))}" y="{height - 8}" '
            f'text-anchor="{anchor}">{escape(points[i].label)}</text>'
        )
    return "".join(out) + "</svg>"


def _target_band(
    target: tuple[str, float],
    y_of: Callable[[float], float],
    x0: float,
    x1: float,
    y_top: float,
    y_bottom: float,
) -> str:
    """The target line and the shaded miss region (inline colours: pages carry no extra CSS)."""
    bound, value = target
    y = min(max(y_of(value), y_top), y_bottom)
    shade_from, shade_to = (y, y_bottom) if bound == "min" else (y_top, y)
    words = f"target: {'at least' if bound == 'min' else 'at most'} {value:g}"
    return (
        f'<rect class="c-miss" x="{_f(x0)}" y="{_f(shade_from)}" width="{_f(x1 - x0)}" '
        f'height="{_f(shade_to - shade_from)}" fill="#c0392b" fill-opacity="0.08">'
        f"<title>misses the target</title></rect>"
        f'<line class="c-target" x1="{_f(x0)}" x2="{_f(x1)}" y1="{_f(y)}" y2="{_f(y)}" '
        f'stroke="#c0392b" stroke-dasharray="6 3" stroke-width="1.5">'
        f"<title>{escape(words)}</title></line>"
    )


def _label_positions(count: int, most: int = 6) -> list[int]:
    """At most ``most`` evenly spread x labels, always including the first and the last."""
    if count <= most:
        return list(range(count))
    step = (count - 1) / (most - 1)
    return sorted({round(i * step) for i in range(most)})


def _marker(kind: PointKind, x: float, y: float, tip: str) -> str:
    title = f"<title>{tip}</title>"
    if kind == "baseline":
        return (
            f'<rect class="m-baseline" x="{_f(x - 5)}" y="{_f(y - 5)}" width="10" height="10">'
            f"{title}</rect>"
        )
    if kind == "regression":
        path = f"M{_f(x - 6)},{_f(y - 4)} L{_f(x + 6)},{_f(y - 4)} L{_f(x)},{_f(y + 6)} Z"
        return f'<path class="m-regression" d="{path}">{title}</path>'
    if kind == "improvement":
        path = f"M{_f(x - 6)},{_f(y + 4)} L{_f(x + 6)},{_f(y + 4)} L{_f(x)},{_f(y - 6)} Z"
        return f'<path class="m-improvement" d="{path}">{title}</path>'
    return f'<circle class="m-run" cx="{_f(x)}" cy="{_f(y)}" r="3.5">{title}</circle>'


def sparkline(
    values: Sequence[float | None], *, label: str, width: int = 120, height: int = 28
) -> str:
    """A small trend line without axes; the last point is marked with a dot."""
    out = [_open(width, height, label, "sparkline")]
    finite = _finite(values)
    if not finite:
        return "".join(out) + "</svg>"
    axis = padded_range(finite)
    pad = 3
    step = (width - 2 * pad) / max(len(values) - 1, 1)
    coords = [
        (pad + i * step if len(values) > 1 else width / 2,
         pad + (height - 2 * pad) * (1 - axis.fraction(v)))
        for i, v in enumerate(values)
        if v is not None and math.isfinite(v)
    ]  # fmt: skip
    if len(coords) > 1:
        joined = " ".join(f"{_f(x)},{_f(y)}" for x, y in coords)
        out.append(f'<polyline class="c-line" points="{joined}"/>')
    x, y = coords[-1]
    out.append(f'<circle class="m-run" cx="{_f(x)}" cy="{_f(y)}" r="2.5"/>')
    return "".join(out) + "</svg>"


def delta_histogram(
    deltas: Sequence[float | None],
    *,
    label: str,
    higher_is_better: bool = True,
    bins: int = 21,
    width: int = 420,
    height: int = 180,
) -> str:
    """Histogram of per-query deltas on a range symmetric around 0.

    The middle bin holds the (near-)zero deltas and is drawn neutral; bins on the side where the
    candidate is worse (negative deltas when higher is better) are ``c-bad``, the other side
    ``c-good``. ``bins`` is forced odd so that 0 is the centre of a bin.
    """
    bins = bins if bins % 2 == 1 else bins + 1
    left, right, top, bottom = 36, 8, 10, 30
    out = [_open(width, height, label, "histogram")]
    values = _finite(deltas)
    if not values:
        out.append(_no_data(width, height))
        return "".join(out) + "</svg>"
    extent = max(abs(v) for v in values) or 1.0

    def edge(i: int) -> float:  # left edge of bin i; never overflows, even for extent 1e308
        return extent * (2 * i / bins - 1)

    counts = [0] * bins
    for value in values:
        # value / extent lies in [-1, 1] for any extent > 0, subnormal (5e-324) or huge (1e308);
        # a bin width of 2 · extent / bins could round to 0 or overflow instead.
        counts[min(bins - 1, max(0, int((value / extent + 1) * bins / 2)))] += 1
    peak = max(counts)
    plot_w, plot_h = width - left - right, height - top - bottom
    bar_w = plot_w / bins
    middle = bins // 2
    for i, count in enumerate(counts):
        if count == 0:
            continue
        worse = (i < middle) == higher_is_better
        css = "c-neutral" if i == middle else ("c-bad" if worse else "c-good")
        bar_h = plot_h * count / peak
        tip = f"{count} queries with delta in [{fmt_edge(edge(i))}, {fmt_edge(edge(i + 1))})"
        out.append(
            f'<rect class="{css}" x="{_f(left + i * bar_w + 0.5)}" y="{_f(top + plot_h - bar_h)}" '
            f'width="{_f(bar_w - 1)}" height="{_f(bar_h)}"><title>{tip}</title></rect>'
        )
    axis_y = top + plot_h
    out.append(
        f'<line class="c-axis" x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}"/>'
    )
    out.append(f'<text class="c-tick" x="{left - 4}" y="{top + 8}" text-anchor="end">{peak}</text>')
    for x, text in (
        (left, fmt_tick(-extent)),
        (left + plot_w / 2, "0"),
        (width - right, fmt_tick(extent)),
    ):
        out.append(
            f'<text class="c-tick" x="{_f(x)}" y="{axis_y + 14}" text-anchor="middle">{text}</text>'
        )
    out.append(
        f'<text class="c-note" x="{_f(left + plot_w / 2)}" y="{height - 2}" text-anchor="middle">'
        "delta (candidate \u2212 baseline)</text>"
    )
    return "".join(out) + "</svg>"


def value_histogram(
    values: Sequence[float | None],
    *,
    label: str,
    bins: int = 10,
    width: int = 300,
    height: int = 140,
) -> str:
    """Distribution of per-query values of a run (equal-width bins over the values' range;
    metrics bounded in [0, 1] use that range so charts of different runs line up)."""
    left, right, top, bottom = 32, 8, 8, 22
    out = [_open(width, height, label, "histogram")]
    finite = _finite(values)
    if not finite:
        out.append(_no_data(width, height))
        return "".join(out) + "</svg>"
    low, high = min(finite), max(finite)
    if low >= 0 and high <= 1:
        axis = Axis(0.0, 1.0)
    elif high - low < 1e-12:
        # ±0.5 is lost in the rounding of a large value (1e308 + 0.5 == 1e308): widen by 10 %.
        axis = widened(low, high, 0.5 if low - 0.5 < low else constant_margin(low))
    else:
        axis = Axis(low, high)
    counts = _bin_counts(finite, axis, bins)
    peak = max(counts)
    plot_w, plot_h = width - left - right, height - top - bottom
    bar_w = plot_w / bins
    for i, count in enumerate(counts):
        if count == 0:
            continue
        bar_h = plot_h * count / peak
        low_edge, high_edge = axis.value_at(i / bins), axis.value_at((i + 1) / bins)
        out.append(
            f'<rect class="c-cand" x="{_f(left + i * bar_w + 0.5)}" y="{_f(top + plot_h - bar_h)}" '
            f'width="{_f(bar_w - 1)}" height="{_f(bar_h)}"><title>{count} queries in '
            f"[{low_edge:.3g}, {high_edge:.3g})</title></rect>"
        )
    axis_y = top + plot_h
    out.append(
        f'<line class="c-axis" x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}"/>'
    )
    out.append(f'<text class="c-tick" x="{left - 4}" y="{top + 8}" text-anchor="end">{peak}</text>')
    for x, text in ((left, fmt_tick(axis.low)), (width - right, fmt_tick(axis.high))):
        out.append(
            f'<text class="c-tick" x="{_f(x)}" y="{axis_y + 14}" text-anchor="middle">{text}</text>'
        )
    return "".join(out) + "</svg>"


def _bin_counts(values: list[float], axis: Axis, bins: int) -> list[int]:
    """How many ``values`` fall in each of ``bins`` equal parts of ``axis`` (the last one closed):
    the same arithmetic as ``Axis.fraction``, on the whole column at once."""
    import numpy as np

    span = axis.high - axis.low
    if not math.isfinite(span):
        counts = [0] * bins
        for value in values:
            counts[min(bins - 1, int(axis.fraction(value) * bins))] += 1
        return counts
    places = ((np.array(values, dtype=np.float64) - axis.low) / span * bins).astype(np.int64)
    return [int(n) for n in np.bincount(np.minimum(places, bins - 1), minlength=bins)]


def scatter(
    baseline: Sequence[float | None],
    candidate: Sequence[float | None],
    *,
    label: str,
    higher_is_better: bool = True,
    size: int = 260,
) -> str:
    """Baseline (x) against candidate (y) per query, with the diagonal y = x.

    Points above the diagonal are better for the candidate when higher is better (``c-good``),
    below are worse (``c-bad``), on it neutral. Identical (x, y) pairs are drawn once with a
    radius growing with their count, so 10,000 queries stay a light SVG.
    """
    pad = 34
    out = [_open(size, size, label, "scatter")]
    pairs = [
        (b, c)
        for b, c in zip(baseline, candidate, strict=True)
        if b is not None and c is not None and math.isfinite(b) and math.isfinite(c)
    ]
    if not pairs:
        out.append(_no_data(size, size))
        return "".join(out) + "</svg>"
    axis = padded_range([v for pair in pairs for v in pair])
    if min(v for p in pairs for v in p) >= 0 and max(v for p in pairs for v in p) <= 1:
        axis = Axis(0.0, 1.0)
    span = size - 2 * pad

    def at(v: float) -> float:
        return span * axis.fraction(v)

    out.append(
        f'<rect class="c-frame" x="{pad}" y="{pad}" width="{span}" height="{span}"/>'
        f'<line class="c-diagonal" x1="{pad}" y1="{size - pad}" x2="{size - pad}" y2="{pad}"/>'
    )
    counts: dict[tuple[str, str], tuple[int, float, float]] = {}
    for b, c in pairs:
        key = (_f(pad + at(b)), _f(size - pad - at(c)))
        previous = counts.get(key)
        counts[key] = (1 if previous is None else previous[0] + 1, b, c)
    for (x, y), (count, b, c) in sorted(counts.items()):
        better = (c - b) * (1 if higher_is_better else -1)
        css = "c-neutral" if abs(c - b) < 1e-12 else ("c-good" if better > 0 else "c-bad")
        radius = min(2.0 + math.log2(count), 8.0)
        tip = f"baseline {b:.3f} → candidate {c:.3f}" + (f" ({count} queries)" if count > 1 else "")
        out.append(f'<circle class="{css}" cx="{x}" cy="{y}" r="{radius:.1f}">')
        out.append(f"<title>{tip}</title></circle>")
    for v, text in ((axis.low, fmt_tick(axis.low)), (axis.high, fmt_tick(axis.high))):
        out.append(
            f'<text class="c-tick" x="{_f(pad + at(v))}" y="{size - pad + 14}" '
            f'text-anchor="middle">{text}</text>'
            f'<text class="c-tick" x="{pad - 4}" y="{_f(size - pad - at(v) + 3)}" '
            f'text-anchor="end">{text}</text>'
        )
    out.append(
        f'<text class="c-note" x="{size / 2:.1f}" y="{size - 4}" text-anchor="middle">'
        "baseline</text>"
        f'<text class="c-note" x="10" y="{size / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 10 {size / 2:.1f})">candidate</text>'
    )
    return "".join(out) + "</svg>"
