"""Webhook, Slack and Teams channels against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import pytest

from evalplat.alerts import DeliveryPolicy, build_channel, deliver
from evalplat.alerts.notice import Notice
from evalplat.errors import InputError

from .messages import regression
from .servers import CaptureServer, dead_url

FAST = DeliveryPolicy(attempts=3, backoff=0.01, max_backoff=0.05)


def test_webhook_posts_the_alert_fields_with_headers_from_the_environment(
    capture: CaptureServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_URL", f"{capture.url}/ok")
    monkeypatch.setenv("HOOK_TOKEN", "s3cret")
    channel = build_channel(
        {
            "type": "webhook",
            "url": "${HOOK_URL}",
            "headers": {"Authorization": "Bearer ${HOOK_TOKEN}"},
        }
    )
    result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts, result.error) == ("sent", 1, None)
    [request] = capture.received("/ok")
    assert request.headers["Authorization"] == "Bearer s3cret"
    body = request.body
    assert body["event"] == "opened"
    assert body["title"] == "Regression: nDCG@10 of docs-bm25 on cranfield"
    [alert] = body["alerts"]
    assert "Idempotency-Key" not in request.headers  # a sample message has no outbox key
    assert (alert["config"], alert["test_set"], alert["metric"]) == (
        "docs-bm25",
        "cranfield",
        "nDCG@10",
    )
    assert (alert["baseline"], alert["candidate"], alert["p_value"]) == (0.412, 0.387, 0.0031)
    assert alert["worst_queries"][0]["query_id"] == "q12"
    assert alert["worst_queries"][0]["delta"] == pytest.approx(-0.6)
    assert alert["report"] == "https://ci.example/r/7.html"
    # the placeholder, not the secret, is what the channel keeps
    assert "s3cret" not in repr(channel.params)


def test_webhook_sends_one_request_per_night_with_its_idempotency_key(
    capture: CaptureServer,
) -> None:
    night = Notice((regression("opened"), regression("resolved")), ("key-1", "key-2"))
    channel = build_channel({"type": "webhook", "url": f"{capture.url}/ok"})
    assert deliver(channel, night, FAST).ok
    assert deliver(channel, night, FAST).ok  # a retry: same key, so the receiver drops it
    first, second = capture.received("/ok")
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"] == night.key
    assert first.body["idempotency_key"] == night.key
    assert first.body["title"] == "evalplat: 1 regression opened, 1 regression resolved"
    events = [(a["event"], a["idempotency_key"]) for a in first.body["alerts"]]
    assert events == [("opened", "key-1"), ("resolved", "key-2")]
    assert len(capture.accepted("/ok")) == 1


def test_slack_payload_has_fallback_text_fields_and_escaped_queries(capture: CaptureServer) -> None:
    channel = build_channel({"type": "slack", "url": f"{capture.url}/ok"})
    assert deliver(channel, regression(), FAST).ok
    [request] = capture.received("/ok")
    body = request.body
    assert body["text"] == "Regression: nDCG@10 of docs-bm25 on cranfield"
    kinds = [block["type"] for block in body["blocks"]]
    assert kinds == ["header", "section", "section", "context"]
    fields = [f["text"] for f in body["blocks"][1]["fields"]]
    assert "*Baseline → candidate*\n0.4120 → 0.3870" in fields
    assert any(f.startswith("*p-value*\n0.0031 (randomization)") for f in fields)
    queries = body["blocks"][2]["text"]["text"]
    assert "&lt;transition&gt; &amp; drag" in queries and "<transition>" not in queries
    assert (
        body["blocks"][3]["elements"][0]["text"] == "<https://ci.example/r/7.html|Open the report>"
    )


def test_teams_adaptive_card_and_message_card_shapes(capture: CaptureServer) -> None:
    adaptive = build_channel({"type": "teams", "url": f"{capture.url}/ok"})
    legacy = build_channel(
        {"type": "teams", "url": f"{capture.url}/ok", "format": "messagecard", "name": "old"}
    )
    assert deliver(adaptive, regression("resolved"), FAST).ok
    assert deliver(legacy, regression(), FAST).ok
    first, second = (r.body for r in capture.received("/ok"))
    attachment = first["attachments"][0]
    assert first["type"] == "message"
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard"
    assert card["body"][0]["text"] == "Resolved: nDCG@10 of docs-bm25 on cranfield"
    facts = {f["title"]: f["value"] for f in card["body"][1]["facts"]}
    assert facts["Delta"] == "-0.0250 (-6.07%)"
    assert card["actions"][0]["url"] == "https://ci.example/r/7.html"
    assert second["@type"] == "MessageCard"
    assert second["themeColor"] == "D70000"
    assert {f["name"]: f["value"] for f in second["sections"][0]["facts"]}["Metric"] == "nDCG@10"
    assert second["potentialAction"][0]["targets"][0]["uri"] == "https://ci.example/r/7.html"


def test_server_error_is_retried_until_it_answers(capture: CaptureServer) -> None:
    channel = build_channel({"type": "webhook", "url": f"{capture.url}/flaky"})
    result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts) == ("sent", 3)
    assert len(capture.received("/flaky")) == 3


def test_retries_give_up_after_the_last_attempt_and_keep_the_error(capture: CaptureServer) -> None:
    channel = build_channel({"type": "webhook", "url": f"{capture.url}/flaky"})
    result = deliver(channel, regression(), DeliveryPolicy(attempts=2, backoff=0.01))
    assert (result.status, result.attempts) == ("failed", 2)
    assert result.error is not None and "HTTP 500" in result.error


def test_rate_limited_answer_is_retried(capture: CaptureServer) -> None:
    channel = build_channel({"type": "slack", "url": f"{capture.url}/busy"})
    result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts) == ("failed", 3)
    assert len(capture.received("/busy")) == 3


def test_client_error_is_not_retried(capture: CaptureServer) -> None:
    channel = build_channel({"type": "slack", "url": f"{capture.url}/bad"})
    result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts) == ("failed", 1)
    assert result.error is not None and "HTTP 400: invalid_payload" in result.error


def test_dead_webhook_fails_after_retries_without_raising() -> None:
    channel = build_channel({"type": "webhook", "url": dead_url()})
    waits: list[float] = []
    result = deliver(
        channel, regression(), DeliveryPolicy(attempts=3, backoff=0.5), sleep=waits.append
    )
    assert (result.status, result.attempts) == ("failed", 3)
    assert waits == [0.5, 1.0]  # backoff doubles between attempts
    assert result.error is not None and "could not reach http://127.0.0.1:" in result.error


@pytest.mark.parametrize(
    ("table", "waits"),
    [({}, [1.0, 2.0]), ({"backoff": 0.25}, [0.25, 0.5]), ({"backoff": 0}, [0.0, 0.0])],
)
def test_a_channel_waits_its_own_backoff_between_attempts(
    table: dict[str, float], waits: list[float]
) -> None:
    channel = build_channel({"type": "webhook", "url": dead_url(), **table})
    slept: list[float] = []
    result = deliver(channel, regression(), DeliveryPolicy(attempts=3), sleep=slept.append)
    assert (result.status, result.attempts) == ("failed", 3)
    assert slept == waits  # 1 s, then 2 s, unless the table sets another backoff
    chosen = DeliveryPolicy(attempts=3, backoff=0.5)  # a policy's own backoff wins
    slept.clear()
    deliver(channel, regression(), chosen, sleep=slept.append)
    assert slept == [0.5, 1.0]


@pytest.mark.parametrize("kind", ["webhook", "slack", "teams", "email"])
@pytest.mark.parametrize("backoff", [-0.5, 30.5, True, "1s"])
def test_a_backoff_out_of_range_or_not_a_number_is_refused(kind: str, backoff: object) -> None:
    needs = {"host": "h", "from": "a@b", "to": "c@d"} if kind == "email" else {"url": "http://x"}
    table = {"type": kind, **needs}
    with pytest.raises(InputError, match=f"{kind} channel: backoff"):
        build_channel({**table, "backoff": backoff})


def test_timeout_is_reported_with_the_limit(capture: CaptureServer) -> None:
    # /slow answers only after the test, so a delivery that returns can only have timed out.
    channel = build_channel({"type": "webhook", "url": f"{capture.url}/slow", "timeout": 1.5})
    result = deliver(channel, regression(), DeliveryPolicy(attempts=1))
    assert result.status == "failed"
    assert result.error == f"no answer from {capture.url} within 1.5s"
    assert len(capture.received("/slow")) == 1  # it was sent, and the answer never came


def test_unset_environment_variable_fails_once_and_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_SUCH_HOOK", raising=False)
    channel = build_channel({"type": "webhook", "url": "${NO_SUCH_HOOK}"})
    result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts) == ("failed", 1)
    assert result.error is not None and "NO_SUCH_HOOK is not set" in result.error


def test_error_messages_do_not_reveal_the_webhook_path(capture: CaptureServer) -> None:
    channel = build_channel({"type": "slack", "url": f"{capture.url}/bad?token=T0PSECRET"})
    result = deliver(channel, regression(), FAST)
    assert result.error is not None and "T0PSECRET" not in result.error


def test_slack_and_teams_list_every_alert_of_the_night_in_one_message(
    capture: CaptureServer,
) -> None:
    night = Notice((regression("opened"), regression("resolved")), ("key-1", "key-2"))
    for table in (
        {"type": "slack", "url": f"{capture.url}/ok"},
        {"type": "teams", "url": f"{capture.url}/ok"},
        {"type": "teams", "url": f"{capture.url}/ok", "format": "messagecard", "name": "old"},
    ):
        assert deliver(build_channel(table), night, FAST).ok
    slack, adaptive, legacy = (r.body for r in capture.received("/ok"))
    title = "evalplat: 1 regression opened, 1 regression resolved"
    assert slack["text"] == slack["blocks"][0]["text"]["text"] == title
    headings = [b["text"]["text"] for b in slack["blocks"] if b.get("text", {}).get("text", "")]
    assert "*Regression: nDCG@10 of docs-bm25 on cranfield*" in headings
    assert "*Resolved: nDCG@10 of docs-bm25 on cranfield*" in headings
    body = adaptive["attachments"][0]["content"]["body"]
    texts = [b.get("text") for b in body if b["type"] == "TextBlock"]
    assert texts[0] == title
    assert "Resolved: nDCG@10 of docs-bm25 on cranfield" in texts
    assert legacy["title"] == title
    assert [s["activityTitle"] for s in legacy["sections"]] == [
        "Regression: nDCG@10 of docs-bm25 on cranfield",
        "Resolved: nDCG@10 of docs-bm25 on cranfield",
    ]
    assert all(r.headers["Idempotency-Key"] == night.key for r in capture.received("/ok"))


def test_each_event_links_its_own_page_and_the_index_is_a_second_link(
    capture: CaptureServer,
) -> None:
    from dataclasses import replace

    index = "https://ci.example/r/index.html"
    first = replace(regression("opened", "https://ci.example/r/compare-7.html"), index=index)
    second = replace(regression("resolved", "https://ci.example/r/compare-8.html"), index=index)
    for table in (
        {"type": "slack", "url": f"{capture.url}/ok"},
        {"type": "teams", "url": f"{capture.url}/ok"},
        {"type": "teams", "url": f"{capture.url}/ok", "format": "messagecard", "name": "old"},
    ):
        assert deliver(build_channel(table), Notice((first, second)), FAST).ok
        assert deliver(build_channel(table), Notice.of(first), FAST).ok
    night, alone, adaptive, _, legacy, _ = (r.body for r in capture.received("/ok"))
    links = [e["text"] for b in night["blocks"] if b["type"] == "context" for e in b["elements"]]
    assert links == [
        "<https://ci.example/r/compare-7.html|Open the report>",
        "<https://ci.example/r/compare-8.html|Open the report>",
        f"<{index}|All reports>",
    ]
    [context] = [b for b in alone["blocks"] if b["type"] == "context"]
    assert [e["text"] for e in context["elements"]] == [
        "<https://ci.example/r/compare-7.html|Open the report>",
        f"<{index}|All reports>",
    ]
    actions = adaptive["attachments"][0]["content"]["actions"]
    assert [(a["title"], a["url"]) for a in actions] == [
        ("Open the report", "https://ci.example/r/compare-7.html"),
        ("All reports", index),
    ]
    assert [a["targets"][0]["uri"] for a in legacy["potentialAction"]] == [
        "https://ci.example/r/compare-7.html",
        index,
    ]
    # the index is not repeated when it is the report itself (the site had no page to link)
    assert Notice.of(replace(first, report=index)).index() is None
