"""The day rule of online alerts, on plain verdicts: opened on open_days of the last
open_window judged days (the latest among them), resolved after resolve_days clear days."""

from __future__ import annotations

import pytest

from evalplat.errors import InputError
from evalplat.nightly.day_rule import DayRule


def _walk(rule: DayRule, days: list[bool]) -> list[str]:
    """The decision of each day, the alert opening and resolving as decided."""
    is_open, decisions = False, []
    for n in range(1, len(days) + 1):
        decision = rule.decide(days[:n], is_open)
        is_open = (is_open or decision == "open") and decision != "resolve"
        decisions.append(decision)
    return decisions


def test_a_day_touching_zero_neither_resolves_nor_reopens() -> None:
    # regressed, clear (its interval touched zero), regressed, clear, clear
    days = [True, False, True, False, True, True, False, False]
    assert _walk(DayRule(), days) == [
        "hold", "hold", "open", "hold", "hold", "hold", "hold", "resolve"
    ]  # fmt: skip
    # each day alone: four announcements for one condition
    daily = _walk(DayRule(1, 1, 1), days)
    assert daily == ["open", "resolve", "open", "resolve", "open", "hold", "resolve", "hold"]


def test_the_latest_day_must_have_regressed_to_open() -> None:
    assert DayRule().decide([True, True, False], is_open=False) == "hold"
    assert DayRule().decide([True, False, True], is_open=False) == "open"
    assert DayRule().decide([True, False, False, True], is_open=False) == "hold"  # 1 of the last 3


def test_the_message_says_the_rule() -> None:
    assert DayRule().says([True, False, True]) == (
        "regressed 2 days of 3 (opens at 2 of 3, resolves after 2 clear days)"
    )
    assert DayRule(1, 1, 1).says([True]).startswith("regressed 1 day of 1")


@pytest.mark.parametrize(("days", "window", "resolve"), [(0, 3, 2), (4, 3, 2), (2, 3, 0)])
def test_a_rule_that_cannot_hold_is_refused(days: int, window: int, resolve: int) -> None:
    with pytest.raises(InputError):
        DayRule(days, window, resolve)
