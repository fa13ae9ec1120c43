"""Value axes of the inline charts: a finite range for any finite values, and readable ticks.

``Axis`` places a value between ``low`` and ``high`` even when their difference overflows
(-1e308 … 1e308: it works on halves); ``padded_range`` gives a range with a margin so that no
point sits on an edge (a constant series gets ±|v|·10 %, or ±0.5 near 0, and subnormal values
never make a zero-width range). ``axis_ticks`` puts 2 to 5 ticks at a 1-2-5 step with the
decimals that step needs, so no two labels read alike, clipped to a metric's bounds.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

LARGEST = sys.float_info.max
TINY = 1e-300  # below this a margin is treated as 0 (subnormal arithmetic loses all precision)


@dataclass(frozen=True)
class Axis:
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


def widened(low: float, high: float, margin: float) -> Axis:
    return Axis(max(low - margin, -LARGEST), min(high + margin, LARGEST))


def constant_margin(value: float) -> float:
    """Half-height of the range drawn around a constant series: ±|v|·10 %, or ±0.5 near 0."""
    margin = abs(value) * 0.1
    return margin if margin >= TINY else 0.5


def padded_range(values: Sequence[float]) -> Axis:
    """The axis covering ``values``; a single value gets a margin so it is not at an edge."""
    if not values:
        return Axis(0.0, 1.0)
    low, high = min(values), max(values)
    if high - low < 1e-12:
        return widened(low, high, constant_margin(low))
    # 8 % of the range on each side, computed on halves so that it cannot overflow.
    return widened(low, high, (high / 2 - low / 2) * 0.16)


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
        high = min(low + (abs(low) * 0.1 or 1.0), LARGEST)
    if not (math.isfinite(high - low) and (high - low) / max(most - 1, 1) > TINY):
        # a span that overflows (±1e308) or is too small for a decimal step: ends and middle
        axis = Axis(low, high)
        values = [low, axis.value_at(0.5), high]
        return low, high, [(value, fmt_tick(value)) for value in values]
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
    ticks = [(value, fmt_tick(value, decimals)) for value in values]
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


def fmt_tick(value: float, decimals: int | None = None) -> str:
    if decimals is not None:
        text = f"{value:,.{decimals}f}" if abs(value) >= 1000 else f"{value:.{decimals}f}"
        return text[1:] if text.startswith("-") and float(text.replace(",", "")) == 0 else text
    if 1000 <= abs(value) < 1e15:
        return f"{value:,.0f}"  # counts (NumRet...): 22,500 rather than 2.25e+04
    text = f"{value:.3g}"
    return "0" if text in ("-0", "0") else text


def fmt_edge(value: float) -> str:
    return f"{value:.3f}" if abs(value) < 1e15 else f"{value:.3g}"
