"""The table's JSON rows: floats rounded column by column exactly as ``round(value, 6)``."""

from __future__ import annotations

import math
import struct

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from evalplat.reports.json_rows import json_cell, json_rows, rounded


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50))
@example([0.0000005, 0.0000015, 0.0000025, 1.2345675, -1.2345675, 2.5e-6, -0.0, 0.1 + 0.2])
@example([5e-324, 1e-310, 8589.9345675, 8589934592.0000005, 1e300, -1e300, 4503599627.3705])
@example([0.6666665, 0.3333335, 123.4567895, 0.1234565, 1 / 3, 2 / 3, 0.9999995, 9.9999995])
def test_rounded_is_pythons_round(values: list[float]) -> None:
    # the same double, bit for bit (the sign of a zero included)
    got = rounded(np.array(values, dtype=np.float64)).tolist()
    assert [_bits(g) for g in got] == [_bits(round(v, 6)) for v in values]


@given(st.integers(-(10**9), 10**9))
def test_values_on_a_half_round_as_round_does(integer: int) -> None:
    # the decimal k + 0.5 millionths: near a half, where the product's error could matter
    value = (integer + 0.5) / 1e6
    assert _bits(rounded(np.array([value]))[0]) == _bits(round(value, 6))


def _cell_by_cell(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return [
        tuple((round(v, 6) if math.isfinite(v) else None) if isinstance(v, float) else v
              for v in row)
        for row in rows
    ]  # fmt: skip


_CELL = st.one_of(
    st.floats(),  # NaN and infinities too
    st.none(),
    st.integers(-5, 10**6),
    st.text(max_size=4),
    st.booleans(),
)


@given(st.integers(1, 6).flatmap(lambda width: st.lists(st.tuples(*[_CELL] * width), max_size=30)))
def test_rows_as_cell_by_cell(rows: list[tuple[object, ...]]) -> None:
    got = json_rows(rows)
    expected = _cell_by_cell(rows)
    assert got == expected
    # equal floats are not enough: 0.0 == -0.0, and the types must survive (1 is not 1.0)
    assert [[type(c) for c in row] for row in got] == [[type(c) for c in row] for row in expected]
    assert [[_bits(c) for c in row if type(c) is float] for row in got] == [
        [_bits(c) for c in row if type(c) is float] for row in expected
    ]


def test_a_float_column_with_gaps_is_rounded_whole() -> None:
    rows = [("q1", 0.12345678, None, 3), ("q2", float("nan"), 2.0000004, None)]
    assert json_rows(rows) == [("q1", 0.123457, None, 3), ("q2", None, 2.0, None)]


def test_numpy_floats_keep_their_own_rounding() -> None:
    # a NumPy float's ``round`` is NumPy's; a column holding one is rounded cell by cell
    cell = np.float64(0.1234565)
    [[got]] = json_rows([(cell,)])
    assert got == json_cell(cell) == round(cell, 6)
    assert json_rows([]) == []
