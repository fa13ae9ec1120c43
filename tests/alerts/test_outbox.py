"""The alert outbox in the store and its delivery, on SQLite and PostgreSQL, against a real
webhook server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import StatementError

from evalplat.alerts import DeliveryPolicy, build_channel
from evalplat.nightly.delivery import deliver_outbox
from evalplat.store import Store

from .servers import CaptureServer
from .test_alert_states import baseline  # noqa: F401  (fixture)

FAST = DeliveryPolicy(attempts=2, backoff=0.01, max_backoff=0.02)


def regress(store: Store, baseline_run: int, channels: list[str], metric: str = "AP") -> None:
    store.observe(
        "engine",
        "small",
        metric,
        baseline_run,
        None,
        True,
        details={"config": "engine", "test_set": "small", "metric": metric, "baseline": 0.5},
        channels=channels,
    )


def test_an_opened_alert_and_one_delivery_per_channel_are_written_together(
    store: Store,
    baseline: int,  # noqa: F811
) -> None:
    regress(store, baseline, ["hook", "mail"])
    rows = store.outbox()
    assert [(r.channel, r.event, r.status) for r in rows] == [
        ("hook", "opened", "pending"),
        ("mail", "opened", "pending"),
    ]
    assert len({r.idempotency_key for r in rows}) == 2
    # A resolution whose outbox rows cannot be written is not written either.
    with pytest.raises((StatementError, TypeError), match="not JSON serializable"):
        store.observe(
            "engine",
            "small",
            "AP",
            baseline,
            None,
            False,
            details={"unserialisable": object()},
            channels=["hook"],
        )
    [alert] = store.list_alerts()
    assert alert.state == "open"
    assert len(store.outbox()) == 2


def test_pending_events_go_out_as_one_notice_per_channel_and_leave_the_outbox(
    store: Store,
    baseline: int,  # noqa: F811
    capture: CaptureServer,
) -> None:
    regress(store, baseline, ["webhook"], "AP")
    regress(store, baseline, ["webhook"], "P@10")
    channel = build_channel({"type": "webhook", "url": f"{capture.url}/ok"})
    [outcome] = deliver_outbox(store, [channel], policy=FAST)
    assert (outcome.status, outcome.events) == ("sent", ("opened", "opened"))
    [request] = capture.received("/ok")
    metrics = [a["metric"] for a in request.body["alerts"]]
    assert metrics == ["AP", "P@10"]
    keys = [r.idempotency_key for r in store.outbox("sent")]
    assert [a["idempotency_key"] for a in request.body["alerts"]] == keys
    assert deliver_outbox(store, [channel], policy=FAST) == []  # nothing left to send
    [alert] = [a for a in store.list_alerts() if a.metric == "AP"]
    assert [d.status for d in store.deliveries(alert.id)] == ["sent"]


def test_a_failed_notice_is_retried_later_with_the_same_key(
    store: Store,
    baseline: int,  # noqa: F811
    capture: CaptureServer,
) -> None:
    regress(store, baseline, ["webhook"])
    down = build_channel({"type": "webhook", "url": f"{capture.url}/bad"})
    [failed] = deliver_outbox(store, [down], policy=FAST)
    assert failed.status == "failed" and "HTTP 400" in (failed.error or "")
    regress(store, baseline, ["webhook"], "P@10")  # a later event joins a batch of its own
    up = build_channel({"type": "webhook", "url": f"{capture.url}/ok"})
    first, second = deliver_outbox(store, [up], policy=FAST)
    assert (first.batch, first.events, second.events) == (failed.batch, ("opened",), ("opened",))
    [tried] = capture.received("/bad")
    retried, later = capture.received("/ok")
    assert tried.headers["Idempotency-Key"] == retried.headers["Idempotency-Key"]
    assert later.headers["Idempotency-Key"] != retried.headers["Idempotency-Key"]
    assert store.outbox("pending") == []


def test_a_channel_no_longer_configured_keeps_its_events_waiting(
    store: Store,
    baseline: int,  # noqa: F811
) -> None:
    regress(store, baseline, ["old-hook"])
    [outcome] = deliver_outbox(store, [], policy=FAST)
    assert outcome.status == "no_channel" and "old-hook" in (outcome.error or "")
    assert len(store.outbox("pending")) == 1


Cli = Callable[..., Any]


def test_alerts_deliver_sends_what_waits_and_says_so(
    cli: Cli,
    db_url: str,
    store: Store,
    baseline: int,  # noqa: F811
    capture: CaptureServer,
    tmp_path: Path,
) -> None:
    regress(store, baseline, ["webhook"])
    project = tmp_path / "evalplat.toml"
    project.write_text(f'[[alerts]]\ntype = "webhook"\nurl = "{capture.url}/bad"\n')
    refused = cli("alerts", "deliver", "--project", str(project), "--db", db_url, "--json")
    assert refused.exit_code == 3
    [outcome] = json.loads(refused.stdout)
    assert (outcome["channel"], outcome["status"]) == ("webhook", "failed")
    assert refused.stderr.count("\n") == 1 and "still wait" in refused.stderr
    project.write_text(f'[[alerts]]\ntype = "webhook"\nurl = "{capture.url}/ok"\n')
    sent = cli("alerts", "deliver", "--project", str(project), "--db", db_url)
    assert sent.exit_code == 0, sent.stderr
    assert sent.stdout == "sent 1 alert event to webhook (1 attempt)\n"
    again = cli("alerts", "deliver", "--project", str(project), "--db", db_url)
    assert (again.exit_code, again.stdout) == (0, "nothing to deliver: the outbox is empty\n")
    assert len(capture.accepted("/ok")) == 1
