"""``evalplat alerts list | ack | test | channels`` end to end, with a real local HTTP server."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.alerts.confirmation import Confirmation
from evalplat.store import EvaluationRecord, Store
from evalplat.testsets.content import TestSetContent

from .servers import CaptureServer, dead_url

Cli = Callable[..., Any]


@pytest.fixture
def alert_db(tmp_path: Path, sqlite_template: Path) -> tuple[str, int]:
    """A database with one open alert (AP of engine on small); returns its URL and the id."""
    path = tmp_path / "evalplat.db"
    shutil.copyfile(sqlite_template, path)
    url = f"sqlite:///{path}"
    with Store.open(url) as store:
        queries = pd.DataFrame(
            {"query_id": ["q1"], "text": ["a"], "weight": [float("nan")], "tags": [None]}
        )
        judgments = pd.DataFrame(
            {"query_id": ["q1"], "doc_id": ["d1"], "grade": [1], "source": [None]}
        )
        store.import_test_set("small", TestSetContent(queries=queries, judgments=judgments))
        store.add_config("engine", "python", {"function": "json:loads"})
        version = store.test_set_version_id("small")
        run = store.create_run(
            store.config_version_id("engine"), version, depth=10, queries_total=1
        )
        store.finish_run(
            run,
            "complete",
            evaluation=EvaluationRecord(version, [("AP", "q1", 1.0)], {"AP": (1.0, 1)}),
        )
        details = {"baseline": 0.5, "candidate": 0.25}
        [event] = store.observe("engine", "small", "AP", run, None, True, details=details)
    return url, event.alert.id


def test_list_shows_open_alerts_and_filters_by_state(cli: Cli, alert_db: tuple[str, int]) -> None:
    url, alert_id = alert_db
    listed = cli("alerts", "list", "--db", url, "--json")
    assert listed.exit_code == 0
    [alert] = json.loads(listed.stdout)
    assert (alert["id"], alert["state"], alert["config"], alert["metric"]) == (
        alert_id,
        "open",
        "engine",
        "AP",
    )
    table = cli("alerts", "list", "--db", url)
    assert "0.5000 → 0.2500" in table.stdout
    assert (
        json.loads(cli("alerts", "list", "--state", "resolved", "--db", url, "--json").stdout) == []
    )
    wrong = cli("alerts", "list", "--state", "closed", "--db", url)
    assert wrong.exit_code == 2 and "unknown alert state 'closed'" in wrong.stderr


def test_list_prints_bracketed_metrics_and_notes_as_written(
    cli: Cli, alert_db: tuple[str, int]
) -> None:
    """A segment gate's key and a note are stored text: their brackets are not Rich markup."""
    url, alert_id = alert_db
    with Store.open(url) as store:
        run = store.list_runs("engine")[0].id
        store.observe("engine", "small", "nDCG@10 [segment tail]", run, None, True, details={})
        store.resolve(alert_id, "[online] arm ended")
    table = cli("alerts", "list", "--db", url).stdout
    assert "nDCG@10 [segment tail]" in table
    assert "[online] arm ended" in table
    assert "\\[" not in table


def test_list_says_how_many_nights_regressed_under_a_confirmation_rule(
    cli: Cli, alert_db: tuple[str, int]
) -> None:
    url, _ = alert_db
    rule = Confirmation(2, 3, 2)
    with Store.open(url) as store:
        run = store.list_runs("engine")[0].id
        for held in (True, False, True):
            store.observe("engine", "small", "RR", run, None, held, rule, details={})
    table = cli("alerts", "list", "--db", url, "--state", "open").stdout
    assert "confirmed" in table and "regressed 2 nights of 3" in table
    listed = json.loads(cli("alerts", "list", "--db", url, "--json", "--state", "open").stdout)
    said = {alert["metric"]: alert["details"].get("confirmation") for alert in listed}
    # the alert of the default rule (each night alone) says none
    assert said == {
        "RR": "regressed 2 nights of 3 (opens at 2 of 3, resolves after 2 clear nights)",
        "AP": None,
    }


def test_ack_acknowledges_and_names_a_missing_alert(cli: Cli, alert_db: tuple[str, int]) -> None:
    url, alert_id = alert_db
    acked = cli("alerts", "ack", str(alert_id), "--db", url, "--json")
    assert acked.exit_code == 0
    assert json.loads(acked.stdout)["state"] == "acknowledged"
    assert json.loads(
        cli("alerts", "list", "--state", "acknowledged", "--db", url, "--json").stdout
    )
    missing = cli("alerts", "ack", "999", "--db", url)
    assert missing.exit_code == 2
    assert missing.stderr.strip() == ("error: no alert with id 999 (see `evalplat alerts list`)")


def test_test_posts_a_sample_alert_to_an_adhoc_url(cli: Cli, capture: CaptureServer) -> None:
    sent = cli("alerts", "test", "--url", f"{capture.url}/ok", "--json")
    assert sent.exit_code == 0, sent.stderr
    assert json.loads(sent.stdout)["status"] == "sent"
    [request] = capture.received("/ok")
    assert request.body["event"] == "test"
    assert request.body["title"].startswith("Test alert from evalplat")
    slack = cli("alerts", "test", "slack", "--url", f"{capture.url}/ok")
    assert slack.exit_code == 0
    assert "blocks" in capture.received("/ok")[1].body


def test_test_uses_a_channel_of_the_project_file_by_name_or_type(
    cli: Cli, capture: CaptureServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_HOOK", f"{capture.url}/ok")
    project = tmp_path / "evalplat.toml"
    project.write_text(
        '[[alerts]]\nname = "ops"\ntype = "teams"\nurl = "${EVALPLAT_TEST_HOOK}"\n\n'
        '[[alerts]]\ntype = "junit"\npath = "out/alerts.xml"\n'
    )
    assert cli("alerts", "test", "ops", "--project", str(project)).exit_code == 0
    [request] = capture.received("/ok")
    assert request.body["attachments"][0]["content"]["type"] == "AdaptiveCard"
    junit = cli("alerts", "test", "junit", "--project", str(project))
    assert junit.exit_code == 0, junit.stderr
    suite = ET.parse(tmp_path / "out" / "alerts.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    missing = cli("alerts", "test", "pager", "--project", str(project))
    assert missing.exit_code == 2
    assert "no alert channel 'pager' in the project file (channels: ops, junit)" in missing.stderr


def test_test_exits_3_when_the_channel_cannot_be_reached(cli: Cli) -> None:
    failed = cli("alerts", "test", "--url", dead_url(), "--attempts", "1")
    assert failed.exit_code == 3
    assert "could not deliver to webhook after 1 attempt: could not reach" in failed.stderr


def test_test_without_a_channel_or_url_says_what_to_give(cli: Cli) -> None:
    result = cli("alerts", "test")
    assert result.exit_code == 2
    assert "name a channel" in result.stderr


def test_channels_lists_every_type_with_its_parameters(cli: Cli) -> None:
    listed = json.loads(cli("alerts", "channels", "--json").stdout)
    assert [c["type"] for c in listed] == ["webhook", "slack", "teams", "email", "junit", "json"]
    email = next(c for c in listed if c["type"] == "email")
    security = next(p for p in email["params"] if p["name"] == "security")
    assert (security["default"], security["choices"]) == ("starttls", ["starttls", "ssl", "none"])


def test_an_empty_alert_list_says_so_on_stderr(cli: Cli, db_url: str) -> None:
    result = cli("alerts", "list", "--state", "open", "--db", db_url)
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.strip() == "no alerts in state open"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("email", "--url", "http://127.0.0.1:9/x"), "--url works with webhook, slack, teams"),
        ((), "name a channel from the project file's [[alerts]] tables, or give --url"),
    ],
)
def test_alerts_test_needs_a_channel_or_a_url_kind(
    cli: Cli, args: tuple[str, ...], message: str
) -> None:
    result = cli("alerts", "test", *args)
    assert result.exit_code == 2
    assert message in result.stderr
