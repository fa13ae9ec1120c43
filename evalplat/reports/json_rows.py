"""A per-query table's rows as the page's JSON holds them: floats rounded to six digits.

A 10,000-query run page has a quarter of a million cells; rounding them one ``round`` call at a
time was a third of the page's time. Here a column of floats is rounded as one NumPy array, to
exactly the value Python's ``round(value, 6)`` gives, so pages stay byte for byte what they were:

- ``round`` rounds the exact binary value to six decimals (half to even) and returns the double
  nearest that decimal. ``rint(value * 1e6) / 1e6`` returns the double nearest the same decimal
  whenever ``rint`` picks the same integer: the division of an exact integer by an exact 10^6 is
  correctly rounded.
- The product ``value * 1e6`` is off the exact one by at most half a unit in its last place,
  which moves ``rint``'s choice only when the product lies that close to a half. Those cells (and
  products too large for the bound below) are rounded by ``round`` itself.

Cells that are not floats keep their value; NaN and infinities become None (JSON has neither).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

DIGITS = 6
_SCALE = 10.0**DIGITS
# below 2^33 the product's error is under 2^-20, well inside the margin around a half
_EXACT_BELOW = 2.0**33
_HALF_MARGIN = 1e-6
# plain floats only: a NumPy float rounds by NumPy's rule in ``round``, and keeps it cell by cell
_FLOAT_TYPES = frozenset({float, type(None)})


def json_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """``rows`` with every float rounded to six digits and every non-finite float None (as
    tuples: JSON writes them as arrays)."""
    if not rows:
        return []
    columns = [_json_column(column) for column in zip(*rows, strict=True)]
    return list(zip(*columns, strict=True))


def json_cell(value: Any) -> Any:
    """One cell as ``json_rows`` writes it."""
    if not isinstance(value, float):
        return value
    return round(value, DIGITS) if math.isfinite(value) else None


def rounded(values: np.ndarray) -> np.ndarray:
    """``values`` (float64) each rounded as ``round(value, 6)`` rounds it; non-finite ones kept."""
    with np.errstate(over="ignore", invalid="ignore"):  # huge values: ``round`` does those
        scaled = values * _SCALE
        result: np.ndarray = np.rint(scaled) / _SCALE
        doubtful = ~(np.abs(scaled) < _EXACT_BELOW) | (
            np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5) < _HALF_MARGIN
        )
    for index in np.flatnonzero(doubtful & np.isfinite(values)).tolist():
        result[index] = round(float(values[index]), DIGITS)
    return result


def _json_column(column: tuple[Any, ...]) -> Sequence[Any]:
    kinds = set(map(type, column))
    if not any(issubclass(kind, float) for kind in kinds):
        return column  # text, whole numbers, None: nothing to round
    if not kinds <= _FLOAT_TYPES:
        return [json_cell(value) for value in column]
    values = np.array(column, dtype=np.float64)  # None becomes NaN
    cells: list[Any] = rounded(values).tolist()
    for index in np.flatnonzero(~np.isfinite(values)).tolist():
        cells[index] = None
    return cells
