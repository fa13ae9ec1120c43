"""A target's value is an ASCII decimal number: what Python's float() reads beyond that
(underscores, digits of other scripts, infinities) is refused naming the expression."""

from __future__ import annotations

import pytest

from evalplat.comparison.targets import parse_target
from evalplat.errors import InputError


@pytest.mark.parametrize(
    "value",
    # Arabic-Indic, full-width and Devanagari digits, a vulgar fraction
    [
        "1_0",
        "0_5",
        "\u0660.\u0665",
        "\uff10.\uff15",
        "0.\u096e",
        "inf",
        "nan",
        "1e999",
        "0x1",
        "\u00bd",
    ],
)
def test_a_value_python_reads_but_a_file_would_not_is_refused(value: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_target(f"nDCG@10>={value}")
    assert f"{value!r} is not a finite number (ASCII digits)" in str(caught.value)


@pytest.mark.parametrize(
    ("expression", "value"),
    [("nDCG@10>=0.85", 0.85), ("nDCG@10>=.5", 0.5), ("Latency(p=95)<=2e2", 200.0),
     ("nDCG@10[tail] >= 1", 1.0)],
)  # fmt: skip
def test_ascii_decimals_are_read(expression: str, value: float) -> None:
    assert parse_target(expression).value == value
