"""Two deliverers at once never send the same outbox row: each batch is claimed before it is
sent. Real processes (``evalplat alerts deliver``) against a real webhook receiver on 127.0.0.1,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from evalplat.alerts import DeliveryPolicy, build_channel
from evalplat.nightly.delivery import CLAIM_SECONDS, claim_seconds, deliver_outbox
from evalplat.store import Store

from .servers import capture_server
from .test_alert_states import baseline  # noqa: F401  (fixture)
from .test_outbox import FAST, regress

CHANNELS = ("hook1", "hook2", "hook3")
ROUNDS = 6


def _keys_received(requests: list) -> Counter[str]:  # type: ignore[type-arg]
    """How many times each outbox row (its idempotency key) reached the receiver."""
    seen: Counter[str] = Counter()
    for request in requests:
        for alert in request.body["alerts"]:
            seen[alert["idempotency_key"]] += 1
    return seen


def test_two_deliver_processes_at_once_send_every_row_exactly_once(
    db_url: str,
    store: Store,
    baseline: int,  # noqa: F811
    tmp_path: Path,
) -> None:
    for number in range(ROUNDS):  # each round sealed apart: ROUNDS batches per channel
        regress(store, baseline, list(CHANNELS), f"M{number}")
        store.seal_outbox()
    rows = store.outbox("pending")
    assert len(rows) == ROUNDS * len(CHANNELS)
    with capture_server() as server:
        project = tmp_path / "evalplat.toml"
        project.write_text(
            "".join(
                f'[[alerts]]\ntype = "webhook"\nname = "{name}"\nurl = "{server.url}/delay"\n'
                for name in CHANNELS
            )
        )
        evalplat = str(Path(sys.executable).with_name("evalplat"))
        command = [evalplat, "alerts", "deliver", "--project", str(project), "--db", db_url]
        processes = [
            subprocess.Popen([*command, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)
        ]
        results = [process.communicate(timeout=120) for process in processes]
        requests = server.received("/delay")
    for process, (_, stderr) in zip(processes, results, strict=True):
        assert process.returncode == 0, stderr.decode()
    received = _keys_received(requests)
    assert received == Counter({row.idempotency_key: 1 for row in rows})
    assert store.outbox("pending") == []
    outcomes = [o for stdout, _ in results for o in json.loads(stdout)]
    sent = [o for o in outcomes if o["status"] == "sent"]
    assert len(sent) == ROUNDS * len(CHANNELS)  # each batch sent by one of the two
    assert {o["status"] for o in outcomes} <= {"sent", "claimed"}
    # Both really ran at once: each found batches the other was sending or had sent.
    assert all(json.loads(stdout) for stdout, _ in results)


def test_a_live_deliverers_claim_is_respected_a_dead_or_lapsed_one_taken_over(
    store: Store,
    baseline: int,  # noqa: F811
) -> None:
    import os
    import socket

    regress(store, baseline, ["hook"])
    store.seal_outbox()
    [batch] = store.pending_batches()
    alive = f"{socket.gethostname()}:{os.getppid()}:dabc"  # the test runner's parent: alive
    assert store.claim_batch(batch, alive, CLAIM_SECONDS) is None
    refused = store.claim_batch(batch, "elsewhere:1:dxyz", CLAIM_SECONDS)
    assert refused == f"being delivered by {alive}"
    with capture_server() as server:
        channel = build_channel({"type": "webhook", "name": "hook", "url": f"{server.url}/ok"})
        [outcome] = deliver_outbox(store, [channel], policy=FAST)
        assert (outcome.status, outcome.error) == ("claimed", refused)
        assert server.received("/ok") == []
        # Claimed by a process of this host that has exited: taken over at once.
        with subprocess.Popen([sys.executable, "-c", "pass"]) as gone:
            gone.wait()
        _claim_as(store, batch.entries[0].id, f"{socket.gethostname()}:{gone.pid}:dabc", 3600)
        [outcome] = deliver_outbox(store, [channel], policy=FAST)
        assert outcome.status == "sent"
        assert len(server.received("/ok")) == 1
        # Claimed on another host: waits until the claim lapses, then taken over.
        regress(store, baseline, ["hook"], "P@10")
        store.seal_outbox()
        [later] = store.pending_batches()
        _claim_as(store, later.entries[0].id, "elsewhere:1:dxyz", 3600)
        [outcome] = deliver_outbox(store, [channel], policy=FAST)
        assert outcome.status == "claimed" and "elsewhere:1:dxyz" in (outcome.error or "")
        _claim_as(store, later.entries[0].id, "elsewhere:1:dxyz", -1)
        [outcome] = deliver_outbox(store, [channel], policy=FAST)
        assert outcome.status == "sent"
        assert len(server.received("/ok")) == 2
    assert store.outbox("pending") == []


def _claim_as(store: Store, row_id: int, owner: str, seconds: float) -> None:
    """Give the row's claim to ``owner`` until ``seconds`` from now (as if that deliverer had
    claimed it and then died, or were still sending)."""
    from datetime import timedelta

    from sqlalchemy import update

    from evalplat.db.operations import AlertOutbox
    from evalplat.store.base import utcnow

    with store.session() as session:
        session.execute(
            update(AlertOutbox)
            .where(AlertOutbox.id == row_id)
            .values(claimed_by=owner, claimed_until=utcnow() + timedelta(seconds=seconds))
        )


def test_a_claim_outlasts_the_longest_send_of_its_channel() -> None:
    hook = build_channel({"type": "webhook", "url": "http://127.0.0.1:9/hook"})
    assert claim_seconds(hook, DeliveryPolicy()) == CLAIM_SECONDS
    slow = build_channel({"type": "webhook", "url": "http://127.0.0.1:9/hook", "timeout": 100})
    patient = DeliveryPolicy(attempts=5, max_backoff=30)
    # five attempts, each up to six steps of 100 s and a 30 s wait
    assert claim_seconds(slow, patient) == 5 * (6 * 100 + 30)
