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
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PointKind = str  # "run" | "baseline" | "regression" | "improvement"

_LARGEST = sys.float_info.max
_TINY = 1e-300  # below this a margin is treated as 0 (subnormal arithmetic loses all precision)


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


@dataclass(frozen=True)
class _Axis:
    """A value range ``low < high`` (both finite) and where a value falls in it (0 → 1)."""

    low: float
    high: float

    def fraction(self, value: float) -> float:
        span = self.high - self.low
        if math.isfinite(span):
            return (value - self.low) / span
        # The span overflows (e.g. -1e308 … 1e308); its halves cannot.
        return (value / 2 - self.low / 2) / (self.high / 2 - self.low / 2)

    def value_at(self, fraction: float) -> float:
        span = self.high - self.low
        if math.isfinite(span):
            return self.low + fraction * span
        return self.low * (1 - fraction) + self.high * fraction


def _widened(low: float, high: float, margin: float) -> _Axis:
    return _Axis(max(low - margin, -_LARGEST), min(high + margin, _LARGEST))


def _constant_margin(value: float) -> float:
    """Half-height of the range drawn around a constant series: ±|v|·10 %, or ±0.5 near 0."""
    margin = abs(value) * 0.1
    return margin if margin >= _TINY else 0.5


def _padded_range(values: Sequence[float]) -> _Axis:
    """The axis covering ``values``; a single value gets a margin so it is not at an edge."""
    if not values:
        return _Axis(0.0, 1.0)
    low, high = min(values), max(values)
    if high - low < 1e-12:
        return _widened(low, high, _constant_margin(low))
    # 8 % of the range on each side, computed on halves so that it cannot overflow.
    return _widened(low, high, (high / 2 - low / 2) * 0.16)


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


def axis_ticks(
    low: float,
    high: float,
    *,
    floor: float | None = None,
    ceiling: float | None = None,
    most: int = 5,
) -> tuple[float, float, list[tuple[float, str]]]:
    """A value range clipped to ``[floor, ceiling]`` and 2 to ``most`` ticks inside it.

    Ticks sit at multiples of a "nice" step (1, 2 or 5 times 10^n) and are printed with the decimals
    that step needs, so no two labels read alike (``0.7305 / 0.7310 / 0.7315``, never ``0.731``
    three times) and none lies outside the range: a metric bounded at 0 never gets a tick below
    0. Returns ``(low, high, [(value, label), ...])``.
    """
    if floor is not None:
        low = max(low, floor)
    if ceiling is not None:
        high = min(high, ceiling)
    if not high > low:
        high = min(low + (abs(low) * 0.1 or 1.0), _LARGEST)
    if not (math.isfinite(high - low) and (high - low) / max(most - 1, 1) > _TINY):
        # a span that overflows (±1e308) or is too small for a decimal step: ends and middle
        axis = _Axis(low, high)
        values = [low, axis.value_at(0.5), high]
        return low, high, [(value, _fmt_tick(value)) for value in values]
    step = _nice_step((high - low) / max(most - 1, 1))
    while True:
        first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
        if last - first + 1 <= most:
            break
        step = _nice_step(step * 1.01, above=True)
    if last - first < 1:  # fewer than two multiples inside: use the range's ends
        values = [low, high]
        decimals = _decimals((high - low) / 10)
    else:
        values = [i * step for i in range(first, last + 1)]
        decimals = _decimals(step)
    ticks = [(value, _fmt_tick(value, decimals)) for value in values]
    return low, high, ticks


def _nice_step(raw: float, *, above: bool = False) -> float:
    """The smallest of 1, 2, 5 times 10^n that is at least ``raw`` (greater, when ``above``)."""
    exponent = math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        step = factor * 10.0**exponent
        if step > raw * (1 + 1e-9) or (not above and step >= raw * (1 - 1e-9)):
            return step
    return 10.0 ** (exponent + 1)


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9))


def _fmt_tick(value: float, decimals: int | None = None) -> str:
    if decimals is not None:
        text = f"{value:,.{decimals}f}" if abs(value) >= 1000 else f"{value:.{decimals}f}"
        return text[1:] if text.startswith("-") and float(text.replace(",", "")) == 0 else text
    if 1000 <= abs(value) < 1e15:
        return f"{value:,.0f}"  # counts (NumRet...): 22,500 rather than 2.25e+04
    text = f"{value:.3g}"
    return "0" if text in ("-0", "0") else text


def _fmt_edge(value: float) -> str:
    return f"{value:.3f}" if abs(value) < 1e15 else f"{value:.3g}"


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
) -> str:
    """A line with a marker per point; baseline and regression points get their own symbols.

    ``version_changes`` are indices where a new config version starts: a dashed vertical line
    is drawn just before that point. ``judgment_changes`` are indices where the points start
    being scored against other judgments: a dotted line marks it and the line is broken there,
    since values on both sides are not comparable. Markers: circle = run, square = baseline,
    downward triangle = regression, upward triangle = improvement (shape as well as colour). The
    y axis stays within ``[floor, ceiling]`` (0 and 1 for a metric bounded in [0, 1]); its ticks
    come from ``axis_ticks``. Point labels are the x axis labels (run dates on history pages).
    """
    left, right, top, bottom = 56, 12, 12, 28
    out = [_open(width, height, label, "line-chart")]
    values = _finite([p.value for p in points])
    if not values:
        out.append(_no_data(width, height))
        return "".join(out) + "</svg>"
    axis = _padded_range(values)
    # the bounds clip the padding, never the data: a value outside them widens the axis
    floor = None if floor is None else min(floor, *values)
    ceiling = None if ceiling is None else max(ceiling, *values)
    low, high, ticks = axis_ticks(axis.low, axis.high, floor=floor, ceiling=ceiling)
    axis = _Axis(low, high)
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
    for index in version_changes:
        if 0 < index < len(points):
            x = (x_of(index - 1) + x_of(index)) / 2
            out.append(
                f'<line class="c-version" x1="{_f(x)}" x2="{_f(x)}" y1="{top}" '
                f'y2="{height - bottom}"><title>new config version</title></line>'
            )
    for index in judgment_changes:
        if 0 < index < len(points):
            x = (x_of(index - 1) + x_of(index)) / 2
            out.append(
                f'<line class="c-judgments" x1="{_f(x)}" x2="{_f(x)}" y1="{top}" '
                f'y2="{height - bottom}"><title>new judgments</title></line>'
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
    axis = _padded_range(finite)
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
        tip = f"{count} queries with delta in [{_fmt_edge(edge(i))}, {_fmt_edge(edge(i + 1))})"
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
        (left, _fmt_tick(-extent)),
        (left + plot_w / 2, "0"),
        (width - right, _fmt_tick(extent)),
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
        axis = _Axis(0.0, 1.0)
    elif high - low < 1e-12:
        # ±0.5 is lost in the rounding of a large value (1e308 + 0.5 == 1e308): widen by 10 %.
        axis = _widened(low, high, 0.5 if low - 0.5 < low else _constant_margin(low))
    else:
        axis = _Axis(low, high)
    counts = [0] * bins
    for value in finite:
        counts[min(bins - 1, int(axis.fraction(value) * bins))] += 1
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
    for x, text in ((left, _fmt_tick(axis.low)), (width - right, _fmt_tick(axis.high))):
        out.append(
            f'<text class="c-tick" x="{_f(x)}" y="{axis_y + 14}" text-anchor="middle">{text}</text>'
        )
    return "".join(out) + "</svg>"


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
    axis = _padded_range([v for pair in pairs for v in pair])
    if min(v for p in pairs for v in p) >= 0 and max(v for p in pairs for v in p) <= 1:
        axis = _Axis(0.0, 1.0)
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
    for v, text in ((axis.low, _fmt_tick(axis.low)), (axis.high, _fmt_tick(axis.high))):
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
