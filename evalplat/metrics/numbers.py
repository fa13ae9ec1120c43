"""One format per kind of number, for every place a figure is shown: the console, JUnit XML,
alert messages and report pages.

- **scores** (nDCG, P, rates): four decimals, ``0.4312``; a delta signed, ``+0.0123``;
- **counts** (the ``Num*`` sums, and any measure aggregated by a sum): whole numbers, ``22500``;
  a delta signed, ``+12``;
- **durations** (a measure whose values are in ms, e.g. ``Latency(p=95)``): one decimal and the
  unit, ``182.4 ms``; a delta signed, ``+35.2 ms``;
- **counts of things** in a sentence: the noun agrees with the number, ``1 run``, ``3 runs``,
  ``0 queries`` (``counted``);
- **p-values**: two significant digits, ``0.21``, ``0.034``, ``0.0085``; below 0.001 in
  scientific notation, ``1.0e-04``, so that a tiny p never prints as ``0.0000`` (which would
  suggest certainty). A p of exactly 1 is ``1.0``.

A missing or non-finite number is an en dash, or what the caller passes as ``missing``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from evalplat.metrics.registry import Metric

Kind = Literal["score", "count", "ms"]
MISSING = "\u2013"  # an en dash

__all__ = ["MISSING", "Kind", "counted", "delta_text", "kind_of", "p_text", "value_text"]


def kind_of(metric: Metric | str) -> Kind:
    """The kind of a metric's figures: ``count`` for sums, ``ms`` for durations, else ``score``.
    A name that does not parse (an old stored name) is a score."""
    from evalplat.errors import EvalplatError
    from evalplat.metrics.names import parse

    if isinstance(metric, str):
        try:
            metric = parse(metric)
        except EvalplatError:
            return "score"
    if metric.spec.value_unit == "ms":
        return "ms"
    if metric.aggregate == "sum":
        return "count"
    return "score"


def _kind(kind: Kind | Metric | str) -> Kind:
    if kind == "score":
        return "score"
    if kind == "count":
        return "count"
    if kind == "ms":
        return "ms"
    return kind_of(kind)


def _finite(value: float | None) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def value_text(value: float | None, kind: Kind | Metric | str = "score", *,
               missing: str = MISSING) -> str:  # fmt: skip
    """A figure of its kind: ``0.4312``, ``22500``, ``182.4 ms``."""
    if value is None or not _finite(value):
        return missing
    kind = _kind(kind)
    if kind == "count":
        return f"{round(value):d}"
    if kind == "ms":
        return f"{value:.1f} ms"
    return f"{value:.4f}"


def delta_text(value: float | None, kind: Kind | Metric | str = "score", *,
               missing: str = MISSING) -> str:  # fmt: skip
    """A signed change of its kind: ``+0.0123``, ``-12``, ``+35.2 ms``; no change is unsigned."""
    if value is None or not _finite(value):
        return missing
    text = value_text(abs(value), kind)
    if float(text.split()[0]) == 0:
        return text
    return ("+" if value > 0 else "-") + text


def p_text(p: float | None, *, missing: str = MISSING) -> str:
    """A p-value to two significant digits: ``0.21``, ``0.034``, ``0.0085``, ``1.0e-04``."""
    if p is None or not _finite(p):
        return missing
    if p == 0:
        return "0"
    if p < 0.001:
        return f"{p:.1e}"
    decimals = max(1, 1 - math.floor(math.log10(p)))
    return f"{p:.{decimals}f}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 run``, ``3 runs``, ``0 queries``, ``2 searches``: the count and its noun, singular
    only for exactly one. The plural is the noun's regular one (``query`` → ``queries``,
    ``search`` → ``searches``) unless ``plural`` gives it (``2 regressions opened``)."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {plural if plural is not None else _plural(noun)}"


def _plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"
