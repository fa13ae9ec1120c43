"""The column check of control characters agrees with the contract's regular expression on
every string, however the Arrow column is laid out (chunks, slices, 64-bit offsets)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.inputs.columns import has_control_characters
from evalplat.inputs.validation import CONTROL

# characters around every boundary of the UTF-8 patterns the check reads
EDGES = "\x00\x1f\x20\x7e\x7f\x80\x9f\xa0\xc2\u0100\u0780\u0880\u2028\U0001f600aZ0é"
characters = st.sampled_from(EDGES) | st.characters(exclude_categories=["Cs"])
texts = st.lists(st.text(alphabet=characters, max_size=12))


def expected(values: list[str]) -> bool:
    return any(CONTROL.search(value) for value in values)


@settings(max_examples=300, derandomize=True, database=None)
@given(values=texts, cut=st.integers(min_value=0, max_value=5))
def test_agrees_with_the_contract(values: list[str], cut: int) -> None:
    array = pa.array(values, type=pa.string())
    assert has_control_characters(array) == expected(values)
    assert has_control_characters(pa.array(values, type=pa.large_string())) == expected(values)
    # a slice reads only its own values, whatever its neighbours hold
    assert has_control_characters(array.slice(cut)) == expected(values[cut:])
    chunked = pa.chunked_array([array.slice(0, cut), array.slice(cut)], type=pa.string())
    assert has_control_characters(chunked) == expected(values)


def test_neighbours_outside_a_slice_do_not_count() -> None:
    array = pa.array(["\x01", "plain", "\u0085"])
    assert has_control_characters(array)
    assert not has_control_characters(array.slice(1, 1))
    assert has_control_characters(array.slice(2))


def test_two_byte_controls_and_their_neighbours() -> None:
    assert has_control_characters(pa.array(["a\u0080"]))
    assert has_control_characters(pa.array(["\u009f"]))
    assert not has_control_characters(pa.array(["\u00a0\u0100\u00c2"]))
    assert not has_control_characters(pa.array([], type=pa.string()))
    assert not has_control_characters(pa.array(["", ""]))


def test_only_string_columns_are_read() -> None:
    with pytest.raises(TypeError, match="string column"):
        has_control_characters(pa.array([1, 2]))
