"""The e-mail channel against a real SMTP server (aiosmtpd) on 127.0.0.1."""

from __future__ import annotations

from email.message import Message
from pathlib import Path

import pytest

from evalplat.alerts import DeliveryPolicy, build_channel, deliver
from evalplat.alerts.notice import Notice

from .messages import regression
from .servers import free_port, openssl_available, self_signed_certificate, smtp_server

pytest.importorskip("aiosmtpd", reason="aiosmtpd (a dev dependency) runs the test SMTP server")

FAST = DeliveryPolicy(attempts=2, backoff=0.01)


@pytest.fixture
def smtp_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMTP_USER", "alerts")
    monkeypatch.setenv("SMTP_PASSWORD", "correct horse")


def email_table(port: int | str, **extra: object) -> dict[str, object]:
    return {
        "type": "email",
        "host": "127.0.0.1",
        "port": port,
        "from": "evalplat@example.org",
        "to": ["search-team@example.org", "oncall@example.org"],
        **extra,
    }


def test_plain_smtp_with_login_delivers_the_alert_text(smtp_env: None) -> None:
    with smtp_server(credentials=("alerts", "correct horse")) as server:
        channel = build_channel(
            email_table(
                server.port,
                security="none",
                username="${SMTP_USER}",
                password="${SMTP_PASSWORD}",
            )
        )
        result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts) == ("sent", 1), result.error
    assert server.logins == ["alerts"]
    [(sender, recipients)] = server.envelopes
    assert sender == "evalplat@example.org"
    assert recipients == ["search-team@example.org", "oncall@example.org"]
    [mail] = server.messages
    assert mail["Subject"] == "[evalplat] Regression: nDCG@10 of docs-bm25 on cranfield"
    body = part(mail, "plain")
    assert "0.4120 → 0.3870" in body
    assert "q12  0.8000 → 0.2000 (-0.6000)  boundary layer <transition> & drag" in body


def part(mail: Message, subtype: str) -> str:
    [found] = [p for p in mail.walk() if p.get_content_type() == f"text/{subtype}"]
    payload = found.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def test_a_night_is_one_mail_with_an_escaped_html_body_and_a_message_id_kept_on_retry() -> None:
    night = Notice((regression("opened"), regression("resolved", report=None)), ("key-1", "key-2"))
    with smtp_server() as server:
        channel = build_channel(email_table(server.port, security="none"))
        assert deliver(channel, night, FAST).ok
        assert deliver(channel, night, FAST).ok  # a retry after a crash before it was recorded
    first, second = server.messages
    assert first.get_content_type() == "multipart/alternative"
    assert first["Subject"] == "[evalplat] evalplat: 1 regression opened, 1 regression resolved"
    assert first["Message-ID"] == second["Message-ID"] == f"<{night.key}@evalplat>"
    text, html = part(first, "plain"), part(first, "html")
    assert "Regression: nDCG@10" in text and "Resolved: nDCG@10" in text
    assert "<h2" in html and "Resolved: nDCG@10 of docs-bm25 on cranfield" in html
    assert "boundary layer &lt;transition&gt; &amp; drag" in html
    assert "<transition>" not in html
    assert '<a href="https://ci.example/r/7.html">Open the report</a>' in html
    assert "All reports" not in html  # the messages did not know the site's index


def test_the_html_body_links_the_index_after_the_report() -> None:
    from dataclasses import replace

    from evalplat.alerts.email_html import render_html

    message = replace(regression("opened"), index="https://ci.example/r/index.html")
    html = render_html(Notice.of(message))
    report = html.index('<a href="https://ci.example/r/7.html">Open the report</a>')
    assert report < html.index('<a href="https://ci.example/r/index.html">All reports</a>')


@pytest.mark.skipif(
    not openssl_available(), reason="the openssl command makes the test certificate"
)
def test_starttls_with_login_verifies_the_server_certificate(
    smtp_env: None, tmp_path: Path
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    with smtp_server(tls_files=(cert, key), credentials=("alerts", "correct horse")) as server:
        trusting = build_channel(
            email_table(
                server.port,
                username="${SMTP_USER}",
                password="${SMTP_PASSWORD}",
                cafile=str(cert),
                name="trusting",
            )
        )
        distrusting = build_channel(
            email_table(server.port, username="${SMTP_USER}", password="${SMTP_PASSWORD}")
        )
        sent = deliver(trusting, regression("resolved"), FAST)
        refused = deliver(distrusting, regression(), FAST)
    assert (sent.status, sent.attempts) == ("sent", 1), sent.error
    assert server.logins == ["alerts"]
    assert [m["Subject"] for m in server.messages] == [
        "[evalplat] Resolved: nDCG@10 of docs-bm25 on cranfield"
    ]
    # an unknown certificate is a permanent failure: no retry, nothing sent
    assert (refused.status, refused.attempts) == ("failed", 1)
    assert refused.error is not None and "certificate verify failed" in refused.error


def test_starttls_required_but_not_offered_is_refused_without_sending() -> None:
    with smtp_server() as server:
        channel = build_channel(email_table(server.port))  # security defaults to starttls
        result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts) == ("failed", 1)
    assert result.error is not None and "does not offer STARTTLS" in result.error
    assert server.messages == []


def test_wrong_password_is_a_permanent_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMTP_PASSWORD", "wrong")
    with smtp_server(credentials=("alerts", "correct horse")) as server:
        channel = build_channel(
            email_table(
                server.port, security="none", username="alerts", password="${SMTP_PASSWORD}"
            )
        )
        result = deliver(channel, regression(), FAST)
    assert (result.status, result.attempts) == ("failed", 1)
    assert result.error is not None and result.error.startswith("SMTP login refused: 535")
    assert server.messages == []


def test_host_and_port_come_from_the_environment_at_send_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    channel = build_channel(
        email_table("${SMTP_PORT}", host="${SMTP_HOST}", security="none", to="a@example.org")
    )
    with smtp_server() as server:
        monkeypatch.setenv("SMTP_HOST", "127.0.0.1")
        monkeypatch.setenv("SMTP_PORT", str(server.port))
        result = deliver(channel, regression(), FAST)
    assert result.ok, result.error
    assert server.envelopes == [("evalplat@example.org", ["a@example.org"])]


def test_unreachable_smtp_server_is_retried_then_recorded_as_failed() -> None:
    channel = build_channel(email_table(free_port(), security="none"))
    result = deliver(channel, regression(), DeliveryPolicy(attempts=3, backoff=0.01))
    assert (result.status, result.attempts) == ("failed", 3)
    assert result.error is not None and "Connection refused" in result.error
