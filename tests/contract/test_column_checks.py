"""The column checks of control characters and of Unicode whitespace agree with the contract
(its regular expression, ``str.isspace``) on every string, however the Arrow column is laid out
(chunks, slices, 64-bit offsets)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.inputs.columns import has_control_characters, has_unicode_whitespace
from evalplat.inputs.validation import CONTROL

# characters around every boundary of the UTF-8 patterns the check reads
EDGES = "\x00\x1f\x20\x7e\x7f\x80\x9f\xa0\xc2\u0100\u0780\u0880\u2028\U0001f600aZ0é"
SPACES = "\x85\xa0\u1680\u2000\u200a\u200b\u2028\u2029\u202f\u205f\u3000\u3001\u1fff\ufeff"
characters = (
    st.sampled_from(EDGES) | st.sampled_from(SPACES) | st.characters(exclude_categories=["Cs"])
)
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


def wide_space(values: list[str]) -> bool:
    return any(ch.isspace() and ch > "\x7f" for value in values for ch in value)


@settings(max_examples=300, derandomize=True, database=None)
@given(values=texts, cut=st.integers(min_value=0, max_value=5))
def test_unicode_whitespace_agrees_with_isspace(values: list[str], cut: int) -> None:
    array = pa.array(values, type=pa.string())
    assert has_unicode_whitespace(array) == wide_space(values)
    assert has_unicode_whitespace(pa.array(values, type=pa.large_string())) == wide_space(values)
    assert has_unicode_whitespace(array.slice(cut)) == wide_space(values[cut:])
    chunked = pa.chunked_array([array.slice(0, cut), array.slice(cut)], type=pa.string())
    assert has_unicode_whitespace(chunked) == wide_space(values)


def test_every_unicode_space_and_its_neighbours() -> None:
    for space in "\x85\xa0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000":
        assert has_unicode_whitespace(pa.array(["id", f"a{space}b"])), repr(space)
    neighbours = "\x84\xa1\u167f\u1681\u200b\u2027\u202a\u205e\u2060\u2fff\u3001 \t"
    assert not has_unicode_whitespace(pa.array([f"a{ch}b" for ch in neighbours]))


def test_the_written_out_spaces_are_those_of_isspace() -> None:
    from evalplat.inputs.columns import _WIDE_SPACES

    every = [code for code in range(0x80, 0x110000) if chr(code).isspace()]
    assert sorted(_WIDE_SPACES.tolist()) == every
    assert max(every) < 0x10000  # three bytes at most in UTF-8, as the check assumes


@settings(max_examples=300, derandomize=True, database=None)
@given(
    values=st.lists(
        st.text(alphabet=characters | st.sampled_from("\ud800\udfff"), max_size=12)
        | st.sampled_from(["", "d" * 200, "d" * 201]),
        max_size=8,
    )
)
def test_a_ranking_is_usable_exactly_when_each_id_is_and_none_repeats(values: list[str]) -> None:
    """The whole-ranking check (ASCII rankings without a regular expression) says what the
    id-by-id check and a set say: controls, surrogates, empty and too-long ids, repeats."""
    from evalplat.inputs.validation import result_id_problem, result_ids_usable

    each = all(result_id_problem(v) is None for v in values)
    assert result_ids_usable(values) == (each and len(set(values)) == len(values))
