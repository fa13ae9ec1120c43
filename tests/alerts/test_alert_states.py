"""The alert state machine in the store, on SQLite and PostgreSQL.

A night is one ``observe`` call per (config, test set, metric, baseline run) with its verdict.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select

from evalplat.alerts import build_channel, deliver
from evalplat.alerts.confirmation import Confirmation
from evalplat.alerts.message import AlertMessage
from evalplat.db.evaluations import Comparison, Evaluation
from evalplat.errors import InputError, NotFoundError
from evalplat.store import EvaluationRecord, Store
from evalplat.store.base import utcnow
from evalplat.testsets.content import TestSetContent

from .messages import regression


def _content() -> TestSetContent:
    queries = pd.DataFrame(
        {
            "query_id": ["q1", "q2"],
            "text": ["a", "b"],
            "weight": [float("nan")] * 2,
            "tags": [None] * 2,
        }
    )
    judgments = pd.DataFrame(
        [("q1", "d1", 1, None), ("q2", "d2", 1, None)],
        columns=["query_id", "doc_id", "grade", "source"],
    )
    judgments["grade"] = judgments["grade"].astype("int64")
    return TestSetContent(queries=queries, judgments=judgments)


def _finished_run(store: Store, value: float = 0.5) -> int:
    version_id = store.test_set_version_id("small")
    run_id = store.create_run(
        store.config_version_id("engine"), version_id, depth=10, queries_total=2
    )
    record = EvaluationRecord(
        version_id, [("AP", "q1", value), ("AP", "q2", value)], {"AP": (value, 2)}
    )
    store.finish_run(run_id, "complete", evaluation=record)
    return run_id


@pytest.fixture
def baseline(store: Store) -> int:
    """A config ``engine`` and a test set ``small`` with one finished run: the baseline."""
    store.import_test_set("small", _content())
    store.add_config("engine", "python", {"function": "json:loads"})
    return _finished_run(store)


def night(
    store: Store, baseline: int, regressed: bool, consecutive: int = 1, metric: str = "AP"
) -> list[str]:
    rule = Confirmation(consecutive, consecutive)
    events = store.observe("engine", "small", metric, baseline, None, regressed, rule,
                           {"night": "x"})  # fmt: skip
    return [e.event for e in events]


def test_regression_opens_once_stays_quiet_then_resolves_once(store: Store, baseline: int) -> None:
    assert night(store, baseline, True) == ["opened"]
    assert night(store, baseline, True) == []
    assert night(store, baseline, True) == []
    [alert] = store.list_alerts()
    assert (alert.state, alert.streak, alert.config, alert.test_set) == (
        "open",
        3,
        "engine",
        "small",
    )
    assert night(store, baseline, False) == ["resolved"]
    assert night(store, baseline, False) == []
    [alert] = store.list_alerts()
    assert alert.state == "resolved" and alert.resolved_at is not None


def test_a_later_regression_opens_a_new_alert(store: Store, baseline: int) -> None:
    night(store, baseline, True)
    night(store, baseline, False)
    assert night(store, baseline, True) == ["opened"]
    assert [a.state for a in store.list_alerts()] == ["open", "resolved"]


def test_consecutive_nights_are_needed_before_opening(store: Store, baseline: int) -> None:
    assert night(store, baseline, True, consecutive=3) == []
    assert night(store, baseline, True, consecutive=3) == []
    [pending] = store.list_alerts("pending")
    assert pending.streak == 2
    assert night(store, baseline, True, consecutive=3) == ["opened"]
    assert store.list_alerts("pending") == []
    assert [a.streak for a in store.list_alerts("open")] == [3]


def test_a_clean_night_resets_a_pending_streak_silently(store: Store, baseline: int) -> None:
    night(store, baseline, True, consecutive=2)
    assert night(store, baseline, False, consecutive=2) == []
    assert store.list_alerts() == []
    assert night(store, baseline, True, consecutive=2) == []
    assert night(store, baseline, True, consecutive=2) == ["opened"]


def test_acknowledged_alert_stays_quiet_and_still_announces_its_resolution(
    store: Store, baseline: int
) -> None:
    night(store, baseline, True)
    [alert] = store.list_alerts()
    acked = store.ack(alert.id)
    assert acked.state == "acknowledged" and acked.acknowledged_at is not None
    assert store.ack(alert.id).acknowledged_at == acked.acknowledged_at  # idempotent
    assert night(store, baseline, True) == []
    assert night(store, baseline, False) == ["resolved"]
    with pytest.raises(InputError, match=f"alert {alert.id} is resolved"):
        store.ack(alert.id)
    with pytest.raises(NotFoundError, match="no alert with id 999"):
        store.ack(999)


def test_each_metric_and_baseline_has_its_own_alert(store: Store, baseline: int) -> None:
    other_baseline = _finished_run(store, 0.7)
    assert night(store, baseline, True, metric="AP") == ["opened"]
    assert night(store, baseline, True, metric="P@10") == ["opened"]
    assert night(store, other_baseline, True, metric="AP") == ["opened"]
    assert night(store, baseline, False, metric="AP") == ["resolved"]
    states = {(a.metric, a.baseline_run_id): a.state for a in store.list_alerts()}
    assert states == {
        ("AP", baseline): "resolved",
        ("P@10", baseline): "open",
        ("AP", other_baseline): "open",
    }


def test_opened_event_carries_the_stored_details_and_comparison(
    store: Store, baseline: int
) -> None:
    candidate = _finished_run(store, 0.25)
    with store.session() as session:
        base_eval, cand_eval = (
            session.scalar(select(Evaluation.id).where(Evaluation.run_id == run))
            for run in (baseline, candidate)
        )
        comparison = Comparison(
            baseline_evaluation_id=base_eval,
            candidate_evaluation_id=cand_eval,
            options={},
            verdict="regression",
            created_at=utcnow(),
        )
        session.add(comparison)
        session.flush()
        comparison_id = comparison.id
    details = regression().to_dict()
    [event] = store.observe("engine", "small", "AP", baseline, comparison_id, True, details=details)
    assert event.event == "opened"
    assert event.alert.last_comparison_id == comparison_id
    assert store.alert_info(event.alert.id).details == details


def test_deliveries_are_recorded_per_channel(store: Store, baseline: int, tmp_path: Path) -> None:
    [event] = store.observe("engine", "small", "AP", baseline, None, True)
    good = build_channel({"type": "json", "path": str(tmp_path / "a.jsonl")})
    bad = build_channel({"type": "webhook", "url": "${EVALPLAT_TEST_UNSET_HOOK}", "name": "ops"})
    for channel in (good, bad):
        store.record_delivery(event.alert.id, deliver(channel, regression()))
    rows = [(d.channel, d.event, d.status, d.attempts) for d in store.deliveries(event.alert.id)]
    assert rows == [("json", "opened", "sent", 1), ("ops", "opened", "failed", 1)]
    assert "EVALPLAT_TEST_UNSET_HOOK" in (store.deliveries(event.alert.id)[1].error or "")


def test_listing_filters_by_state_and_config_and_refuses_unknown_names(
    store: Store, baseline: int
) -> None:
    night(store, baseline, True, metric="AP")
    night(store, baseline, True, metric="RR")
    night(store, baseline, False, metric="RR")
    assert [a.metric for a in store.list_alerts("open")] == ["AP"]
    assert [a.metric for a in store.list_alerts(config="engine")] == ["RR", "AP"]
    with pytest.raises(InputError, match="unknown alert state 'closed'"):
        store.list_alerts("closed")
    with pytest.raises(NotFoundError, match="no config named 'nope'"):
        store.observe("nope", "small", "AP", baseline, None, True)
    with pytest.raises(InputError, match="unknown alert kind 'flap'"):
        store.observe("engine", "small", "AP", baseline, None, True, kind="flap")


def test_two_of_three_opens_one_alert_over_a_flapping_week(store: Store, baseline: int) -> None:
    rule = Confirmation(2, 3, 2)
    nights = [True, True, False, True, True, False, False]
    observed = [
        store.observe("engine", "small", "AP", baseline, None, held, rule, {"night": str(n)})
        for n, held in enumerate(nights)
    ]
    events = [[e.event for e in night] for night in observed]
    assert events == [[], ["opened"], [], [], [], [], ["resolved"]]
    [alert] = store.list_alerts()
    # the regressed nights of the alert, and the outcomes the rule still reads
    assert (alert.state, alert.streak) == ("resolved", 4)
    assert alert.details is not None and alert.details["night"] == "4"
    assert alert.details["confirmation"] == (
        "regressed 2 nights of 3 (opens at 2 of 3, resolves after 2 clear nights)"
    )
    message = AlertMessage.from_dict(
        {"event": "opened", "config": "engine", "test_set": "small", "metric": "AP",
         **alert.details}
    )  # fmt: skip
    assert "Confirmed  regressed 2 nights of 3 (opens at 2 of 3," in message.text()


def test_a_pending_key_remembers_its_nights_until_they_cannot_open_it(
    store: Store, baseline: int
) -> None:
    rule = Confirmation(2, 3, 1)

    def one(held: bool) -> list[str]:
        return [e.event for e in store.observe("engine", "small", "AP", baseline, None, held, rule)]

    assert (one(True), one(False)) == ([], [])
    [pending] = store.list_alerts("pending")
    assert one(True) == ["opened"]  # 2 of the last 3, a clear night between
    assert store.alert_info(pending.id).state == "open"
    assert (one(False), one(True), one(False), one(False)) == (["resolved"], [], [], [])
    assert store.list_alerts("pending") == []  # 1 of 3 and two clear nights: forgotten


def test_outcomes_kept_elsewhere_file_no_pending_alert(store: Store, baseline: int) -> None:
    rule = Confirmation(2, 3, 2)

    def day(days: list[bool]) -> list[str]:
        events = store.observe("engine", "small", "AP", None, None, days[-1], rule, {},
                               recent=days, unit="day")  # fmt: skip
        return [e.event for e in events]

    assert day([True]) == [] and store.list_alerts() == []
    assert day([True, True]) == ["opened"]
    assert day([True, True, False]) == []
    assert day([True, True, False, True]) == []
    assert day([True, True, False, True, False, False]) == ["resolved"]
    [alert] = store.list_alerts()  # with the figures of its latest regressed day, the 4th
    assert alert.details is not None and alert.details["confirmation"].startswith(
        "regressed 2 days of 3"
    )
    assert alert.state == "resolved"
