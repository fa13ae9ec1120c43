"""The replay rule of ``gates backtest``: alerts as the state machine opens them, the A/A
false-alarm rate with its exact interval, and the threshold that silences A/A nights."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from evalplat.alerts.confirmation import Confirmation
from evalplat.comparison.backtest import Night, false_alarms, replay, suggested_threshold
from evalplat.store import Store

from .helpers import content

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
    alerts = replay(_nights("RR.R.RRR"), Confirmation(2, 2, 1))
    assert [(a.opened_run, a.nights, a.resolved_at is None) for a in alerts] == [
        (101, 1, False),
        (106, 2, True),
    ]
    assert [a.opened_run for a in replay(_nights("RR.R.RRR"), Confirmation())] == [100, 103, 105]


def test_each_kind_has_its_own_alert_and_a_night_not_gated_clears() -> None:
    alerts = replay(_nights("RJJ-R"), Confirmation())
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


def test_a_rule_of_k_of_n_and_clear_nights_replays_as_the_store_walks_it() -> None:
    """Regressed, regressed, clear, regressed, regressed under 2 of 3 and 2 clear nights: one
    alert, open from the second night on; following each night alone, it flaps."""
    flapping = _nights("RR.RR..")
    [alert] = replay(flapping, Confirmation(2, 3, 2))
    assert (alert.opened_run, alert.nights, alert.resolved_at) == (101, 5, flapping[-1].at)
    assert len(replay(flapping, Confirmation())) == 2


@pytest.mark.parametrize("rule", [Confirmation(), Confirmation(2, 2, 1), Confirmation(2, 3, 2),
                                  Confirmation(1, 1, 2), Confirmation(3, 5, 1)])  # fmt: skip
def test_the_replay_opens_and_resolves_what_the_store_does(
    rule: Confirmation, store: Store
) -> None:
    """Random outcomes through ``Store.observe`` and through the replay: the same alerts, each
    opened and resolved after the same nights (one key per sequence)."""
    store.import_test_set("t", content(queries=2))
    store.add_config("c", "python", {"function": "json:loads"})
    rng = random.Random(7)
    for sequence in range(12):
        verdicts = "".join(rng.choice("R.R.J") for _ in range(14))
        seen = []
        for index, night in enumerate(_nights(verdicts)):
            for kind in ("regression", "needs_judgments"):
                seen += [(kind, event.event, index) for event in store.observe(
                    "c", "t", f"m{sequence}", None, None,
                    regressed=night.verdict == kind, confirm=rule, kind=kind,
                )]  # fmt: skip
        expected = []
        for alert in replay(_nights(verdicts), rule):
            opened = alert.opened_run - 100
            expected.append((alert.kind, "opened", opened))
            if alert.resolved_at is not None:
                expected.append((alert.kind, "resolved", opened + alert.nights))
        assert sorted(seen) == sorted(expected), verdicts
