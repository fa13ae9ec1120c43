"""The replay rule of ``gates backtest``: alerts as the state machine opens them, the A/A
false-alarm rate with its exact interval, and the threshold that silences A/A nights."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from evalplat.comparison.backtest import Night, false_alarms, replay, suggested_threshold

START = datetime(2026, 1, 1, tzinfo=UTC)


def _nights(verdicts: str, unchanged: str = "", sizes: tuple[float, ...] = ()) -> list[Night]:
    """``R`` regression, ``J`` needs judgments, ``.`` unchanged, ``-`` not gated."""
    names = {"R": "regression", "J": "needs_judgments", ".": "unchanged", "-": None}
    return [
        Night(
            START + timedelta(days=i),
            100 + i,
            names[v],
            unchanged[i : i + 1] == "a",
            sizes[i] if i < len(sizes) else None,
        )
        for i, v in enumerate(verdicts)
    ]


def test_alerts_open_after_consecutive_nights_and_resolve_on_the_first_clear_one() -> None:
    alerts = replay(_nights("RR.R.RRR"), consecutive=2)
    assert [(a.opened_run, a.nights, a.resolved_at is None) for a in alerts] == [
        (101, 1, False),
        (106, 2, True),
    ]
    assert [a.opened_run for a in replay(_nights("RR.R.RRR"), consecutive=1)] == [100, 103, 105]


def test_each_kind_has_its_own_alert_and_a_night_not_gated_clears() -> None:
    alerts = replay(_nights("RJJ-R"), consecutive=1)
    assert [(a.kind, a.opened_run, a.nights) for a in alerts] == [
        ("regression", 100, 1),
        ("needs_judgments", 101, 2),
        ("regression", 104, 1),
    ]


def test_false_alarms_count_a_a_nights_only() -> None:
    found = false_alarms(_nights("R.RR", unchanged="aa.a"))
    assert (found.nights, found.alarms) == (3, 2)
    assert found.rate == pytest.approx(2 / 3)
    assert found.low is not None and found.high is not None
    assert found.low < 2 / 3 < found.high
    # the exact interval of 2 of 3 (Clopper-Pearson)
    assert (found.low, found.high) == pytest.approx((0.0943, 0.9916), abs=1e-4)
    assert false_alarms(_nights("RR")).rate is None


def test_the_suggested_threshold_silences_all_but_the_allowed_a_a_nights() -> None:
    nights = _nights("RRRR.", unchanged="aaaaa", sizes=(0.05, 0.2, 0.1234, 0.01, 0.3))
    assert suggested_threshold(nights, 0.0) == pytest.approx(0.2)
    assert suggested_threshold(nights, 0.2) == pytest.approx(0.124)  # one of five may stay
    assert suggested_threshold(nights, 0.6) == pytest.approx(0.01)
    assert suggested_threshold(nights, 0.8) == 0.0
    # never below the change it must silence
    assert suggested_threshold(_nights("R", "a", (0.12341,)), 0.0) >= 0.12341
