"""Numbers and names of the project file, checked one way for every table.

TOML gives typed values, so a key can hold a boolean (``true`` is an integer to Python), an
infinity, a NaN or an integer of thousands of digits; each helper refuses those with one error
naming the table entry and the key (``fail`` builds it, with the key's line).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.validation import check_number

Fail = Callable[[str, str | None, int, str | None], InputError]

COUNT_MAX = 2**31 - 1  # nights, sessions, queries, requests: the range of the count columns
DAYS_MAX = 100_000  # about 270 years: further than any date a night can compute


def whole(
    value: Any,
    fail: Fail,
    where: str,
    index: int,
    key: str,
    *,
    minimum: int,
    maximum: int = COUNT_MAX,
    prefix: str = "",
    unit: str = "",
) -> int:
    """An integer from ``minimum`` to ``maximum`` (booleans are not numbers)."""
    what = f"{prefix}must be a whole number{f' {unit}' if unit else ''}"
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise fail(f"{what} ≥ {minimum}", where, index, key)
    if value > maximum:
        raise fail(f"{what} ≤ {maximum:,}", where, index, key)
    return value


def real(
    value: Any,
    fail: Fail,
    where: str,
    index: int,
    key: str,
    *,
    minimum: float = 0,
    prefix: str = "",
) -> float:
    """A finite number ≥ ``minimum`` (booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise fail(f"{prefix}must be a number ≥ {minimum:g}", where, index, key)
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = float("inf")
    try:
        return check_number(number, key, minimum=minimum)
    except InputError as error:
        raise fail(f"{prefix}{error.problem}", where, index, key) from None


def name(value: str, what: str, fail: Fail, where: str, index: int, key: str) -> str:
    """A test set or config name: what ``testset import`` and ``config add`` accept."""
    from evalplat.store.refs import check_name

    try:
        return check_name(value, what)
    except InputError as error:
        raise fail(error.problem, where, index, key) from None


def label(value: str, fail: Fail, where: str, index: int, key: str) -> str:
    """A config label: what ``config add --label`` accepts."""
    from evalplat.store.refs import check_label

    try:
        return check_label(value)
    except InputError as error:
        raise fail(error.problem, where, index, key) from None


def confirmation(
    table: dict[str, Any], fail: Fail, where: str, index: int, prefix: str
) -> tuple[int, int | None, int]:
    """``consecutive``, ``within`` and ``clear`` of a gate or a target (its confirmation rule,
    ``evalplat.alerts.confirmation``): ``within`` is None when not given (= ``consecutive``)."""
    from evalplat.alerts.confirmation import MOST

    consecutive = whole(table.get("consecutive", 1), fail, where, index, "consecutive",
                        minimum=1, maximum=MOST, prefix=prefix)  # fmt: skip
    within = table.get("within")
    if within is not None:
        within = whole(within, fail, where, index, "within", minimum=consecutive, maximum=MOST,
                       prefix=f"{prefix}{consecutive} nights of how many: ")  # fmt: skip
    clear = whole(table.get("clear", 1), fail, where, index, "clear", minimum=1, maximum=MOST,
                  prefix=prefix)  # fmt: skip
    return consecutive, within, clear
