"""The confirmation rule on plain outcomes: open on k of the last n (the latest among them),
resolve after ``clear`` clear outcomes in a row; k = n = N, clear 1 is the old streak rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalplat.alerts.confirmation import MOST, Confirmation, outcomes
from evalplat.errors import InputError


def walk(rule: Confirmation, nights: list[bool]) -> list[str]:
    """Each night's event as the store applies the rule: the outcomes since the key's current
    alert began (a resolved alert's do not count), a key without an alert forgetting those
    that can no longer open one."""
    events, recent, is_open = [], [], False
    for held in nights:
        recent = [*recent, held]
        step = rule.step(recent, is_open)
        if step == "open":
            is_open = True
        elif step == "resolve":
            is_open, recent = False, []
        elif not is_open and not rule.watching(recent):
            recent = []
        events.append({"open": "opened", "resolve": "resolved"}.get(step, ""))
    return events


def streak_walk(consecutive: int, nights: list[bool]) -> list[str]:
    """The rule before confirmation rules: ``consecutive`` regressed nights in a row open the
    alert, the first clear night resolves it (or resets the streak of a pending one)."""
    events, streak, is_open = [], 0, False
    for held in nights:
        event = ""
        if held:
            streak += 1
            if not is_open and streak >= consecutive:
                is_open, event = True, "opened"
        else:
            if is_open:
                event = "resolved"
            is_open, streak = False, 0
        events.append(event)
    return events


def test_a_flapping_series_opens_one_alert_under_two_of_three() -> None:
    # days 1, 2, 4 and 5 regressed, day 3 clear
    events = walk(Confirmation(2, 3, 2), [True, True, False, True, True])
    assert events == ["", "opened", "", "", ""]
    # each day alone: opened, resolved and opened again
    assert walk(Confirmation(), [True, True, False, True, True]).count("opened") == 2


def test_one_clear_night_between_regressions_does_not_reopen() -> None:
    assert walk(Confirmation(1, 1, 2), [True, False, True]) == ["opened", "", ""]
    assert walk(Confirmation(), [True, False, True]) == ["opened", "resolved", "opened"]


def test_an_open_alert_resolves_after_clear_nights_in_a_row_only() -> None:
    rule = Confirmation(2, 3, 2)
    nights = [True, True, False, True, False, False, False]
    assert walk(rule, nights) == ["", "opened", "", "", "", "resolved", ""]


def test_the_latest_night_must_have_regressed_to_open() -> None:
    rule = Confirmation(2, 3, 2)
    assert rule.step([True, True, False], is_open=False) == "stay"
    assert rule.step([True, False, True], is_open=False) == "open"
    assert rule.step([True, False, False, True], is_open=False) == "stay"  # 1 of the last 3


def test_a_resolved_alerts_nights_do_not_count_towards_the_next() -> None:
    # 2 of 3, resolved after 1 clear night: the night after reopens only with a fresh second
    rule = Confirmation(2, 3, 1)
    assert walk(rule, [True, True, False, True, True]) == ["", "opened", "resolved", "", "opened"]


def test_a_key_forgets_what_can_no_longer_open_it() -> None:
    rule = Confirmation(2, 3, 1)
    assert rule.watching([True, False])  # one more regressed night makes 2 of 3
    assert not rule.watching([True, False, False])
    assert not Confirmation(3, 3).watching([True, True, False])  # a broken streak


@given(st.integers(1, 5), st.lists(st.booleans(), max_size=40))
def test_consecutive_alone_is_the_old_streak_rule(consecutive: int, nights: list[bool]) -> None:
    assert walk(Confirmation(consecutive, consecutive), nights) == streak_walk(consecutive, nights)


@given(
    st.integers(1, 4).flatmap(lambda k: st.tuples(st.just(k), st.integers(k, 6))),
    st.integers(1, 4),
    st.lists(st.booleans(), max_size=40),
)
def test_events_alternate_and_a_rule_opens_no_more_often_than_each_night_alone(
    window: tuple[int, int], clear: int, nights: list[bool]
) -> None:
    rule = Confirmation(window[0], window[1], clear)
    events = [e for e in walk(rule, nights) if e]
    assert events == ["opened", "resolved"] * (len(events) // 2) + ["opened"] * (len(events) % 2)
    assert events.count("opened") <= walk(Confirmation(), nights).count("opened")


def test_the_rule_says_how_it_stands() -> None:
    assert Confirmation(2, 3, 2).says([True, False, True], "day") == (
        "regressed 2 days of 3 (opens at 2 of 3, resolves after 2 clear days)"
    )
    assert Confirmation(2, 2).says([True, True]) == (
        "regressed 2 nights of 2 (opens after 2 in a row)"
    )
    assert Confirmation().says([True]) == "regressed 1 night of 1"


def test_the_store_keeps_as_many_outcomes_as_the_rule_reads() -> None:
    rule = Confirmation(2, 3, 5)
    kept = rule.keep([True] * 4 + [False, True, False, False])
    assert kept == "10100" and outcomes(kept) == [True, False, True, False, False]
    assert outcomes(None) == []


@pytest.mark.parametrize(
    ("k", "n", "clear"), [(0, 3, 2), (4, 3, 2), (2, 3, 0), (1, MOST + 1, 1), (True, 1, 1)]
)
def test_a_rule_that_cannot_hold_is_refused(k: int, n: int, clear: int) -> None:
    with pytest.raises(InputError):
        Confirmation(k, n, clear)
