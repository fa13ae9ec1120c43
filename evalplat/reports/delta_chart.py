"""An inline SVG scatter of paired deltas: offline delta (x) against online delta (y) per A/B pair.

Drawn like the charts of ``evalplat.reports.charts`` (its frame, "no data" note, classes and
escaping): each axis is symmetric around 0, so the four quadrants are equal and the dashed zero
lines split them; a pair whose deltas agree (upper right or lower left once directions are
accounted for) is a ``c-good`` circle, one that disagrees a ``c-bad`` triangle (shape as well as
colour), a tie a ``c-neutral`` circle on an axis. Each point's tooltip names its pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from evalplat.reports.axes import fmt_tick
from evalplat.reports.charts import _f, _no_data, _open


@dataclass(frozen=True)
class DeltaPoint:
    """One A/B pair: its deltas, whether they agree (None: a tie) and its tooltip."""

    x: float
    y: float
    agrees: bool | None
    note: str


def _extent(values: list[float]) -> float:
    """Half the width of a symmetric axis: the largest |value| plus 8 %, 1 when all are 0."""
    largest = max((abs(v) for v in values), default=0.0)
    return min(largest * 1.08, 1.7e308) if largest > 0 else 1.0


def delta_scatter(
    points: Sequence[DeltaPoint],
    *,
    label: str,
    x_label: str,
    y_label: str,
    width: int = 360,
    height: int = 300,
) -> str:
    """The scatter (module doc); non-finite deltas are skipped."""
    left, right, top, bottom = 48, 12, 12, 40
    out = [_open(width, height, label, "scatter delta-scatter")]
    shown = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    plot_w, plot_h = width - left - right, height - top - bottom
    out.append(f'<rect class="c-frame" x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/>')
    if not shown:
        out.append(_no_data(width, height))
        return "".join(out) + "</svg>"
    x_extent = _extent([p.x for p in shown])
    y_extent = _extent([p.y for p in shown])

    def x_of(v: float) -> float:
        return left + plot_w * (v / x_extent + 1) / 2

    def y_of(v: float) -> float:
        return top + plot_h * (1 - (v / y_extent + 1) / 2)

    mid_x, mid_y = x_of(0.0), y_of(0.0)
    out.append(
        f'<line class="c-diagonal" x1="{_f(mid_x)}" x2="{_f(mid_x)}" y1="{top}" '
        f'y2="{top + plot_h}"/>'
        f'<line class="c-diagonal" x1="{left}" x2="{left + plot_w}" y1="{_f(mid_y)}" '
        f'y2="{_f(mid_y)}"/>'
    )
    for point in shown:
        x, y = x_of(point.x), y_of(point.y)
        tip = f"<title>{escape(point.note)}</title>"
        if point.agrees is False:
            path = f"M{_f(x - 5)},{_f(y - 4)} L{_f(x + 5)},{_f(y - 4)} L{_f(x)},{_f(y + 5)} Z"
            out.append(f'<path class="c-bad" d="{path}">{tip}</path>')
        else:
            css = "c-good" if point.agrees else "c-neutral"
            out.append(f'<circle class="{css}" cx="{_f(x)}" cy="{_f(y)}" r="4.5">{tip}</circle>')
    for value in (-x_extent, 0.0, x_extent):
        out.append(
            f'<text class="c-tick" x="{_f(x_of(value))}" y="{top + plot_h + 14}" '
            f'text-anchor="middle">{escape(fmt_tick(value))}</text>'
        )
    for value in (-y_extent, 0.0, y_extent):
        out.append(
            f'<text class="c-tick" x="{left - 4}" y="{_f(y_of(value) + 3)}" '
            f'text-anchor="end">{escape(fmt_tick(value))}</text>'
        )
    out.append(
        f'<text class="c-note" x="{_f(left + plot_w / 2)}" y="{height - 6}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
        f'<text class="c-note" x="10" y="{_f(top + plot_h / 2)}" text-anchor="middle" '
        f'transform="rotate(-90 10 {_f(top + plot_h / 2)})">{escape(y_label)}</text>'
    )
    return "".join(out) + "</svg>"
