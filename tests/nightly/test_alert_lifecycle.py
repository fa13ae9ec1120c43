"""Every alert can end: retired when its subject leaves the project (announced once), resolved by
hand with a note, acknowledged ones no longer failing the night, and one exit-code table for
``nightly`` and ``alerts deliver``: 3 while a channel of the project has not accepted an event."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evalplat.events.synthetic import Arm, write_ubi_log
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from .small_project import write_project

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

P5_GATE = '\n[[gates]]\nmetric = "P@5"\nmax_drop = 0.01\n'


Night = Callable[..., tuple[int, list[dict[str, Any]]]]
Cli = Callable[..., Any]


@pytest.fixture
def night(db_url: str, tmp_path: Path, capture: CaptureServer) -> Night:
    def run(
        modes: dict[str, str], hook: str = "/ok", **options: Any
    ) -> tuple[int, list[dict[str, Any]]]:
        path = write_project(tmp_path / "project", modes, hook=f"{capture.url}{hook}", **options)
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        done = steps[-1]
        assert done["step"] == "done" and done["exit_code"] == outcome.exit_code
        return outcome.exit_code, steps

    return run


def events_sent(capture: CaptureServer, path: str = "/ok") -> list[tuple[str, str, str, str]]:
    """(kind, event, config, metric) of every alert event a receiver acted on, in order."""
    return [
        (a["kind"], a["event"], a["config"], a["metric"])
        for request in capture.accepted(path)
        for a in request.body["alerts"]
    ]


def alerts(db_url: str, **filters: Any) -> list[Any]:
    with Store.open(db_url) as store:
        return store.list_alerts(**filters)


def test_a_config_removed_from_the_file_retires_its_alert_once(
    night: Night, capture: CaptureServer, db_url: str
) -> None:
    assert night({"alpha": "good", "beta": "good"})[0] == 0
    assert night({"alpha": "bad", "beta": "good"})[0] == 1
    assert events_sent(capture) == [("regression", "opened", "alpha", "nDCG@10")]
    code, steps = night({"beta": "good"})  # alpha left the project file
    assert code == 0, [s for s in steps if "error" in s]
    assert events_sent(capture)[1:] == [("regression", "retired", "alpha", "nDCG@10")]
    [retired] = capture.accepted("/ok")[1].body["alerts"]
    assert retired["title"] == "Retired: nDCG@10 of alpha on topics"
    assert "config alpha is no longer in evalplat.toml" in retired["note"]
    text = capture.accepted("/ok")[1].body["text"]
    assert "Retired" in text and "no longer in evalplat.toml" in text
    [alert] = alerts(db_url, config="alpha")
    assert alert.state == "retired" and alert.retired_at is not None
    assert alert.note == retired["note"]
    code, steps = night({"beta": "good"})  # the next night: nothing more about alpha
    assert code == 0
    assert len(capture.received("/ok")) == 2
    assert not any(s["step"] == "alert" for s in steps)


def test_a_removed_gate_retires_its_alert_and_leaves_the_others_open(
    night: Night, capture: CaptureServer, db_url: str
) -> None:
    night({"alpha": "good"}, extra_alerts=P5_GATE)
    assert night({"alpha": "bad"}, extra_alerts=P5_GATE)[0] == 1
    assert sorted(events_sent(capture)) == [
        ("regression", "opened", "alpha", "P@5"),
        ("regression", "opened", "alpha", "nDCG@10"),
    ]
    code, steps = night({"alpha": "bad"})  # the P@5 gate is gone; nDCG@10 still regresses
    assert code == 1
    assert events_sent(capture)[2:] == [("regression", "retired", "alpha", "P@5")]
    assert "no gate on P@5" in capture.accepted("/ok")[1].body["alerts"][0]["note"]
    states = {a.metric: a.state for a in alerts(db_url)}
    assert states == {"P@5": "retired", "nDCG@10": "open"}
    assert steps[-1]["open_alerts"] == 1
    assert night({"alpha": "bad"})[0] == 1
    assert len(capture.received("/ok")) == 2  # retired once, never again


def test_a_test_set_a_config_no_longer_runs_retires_its_operational_alert(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    night({"alpha": "good", "beta": "good"})
    assert night({"alpha": "down", "beta": "good"})[0] == 3
    assert events_sent(capture) == [("operational", "opened", "alpha", "")]
    # alpha moves to another test set: its outage on topics can never be observed to end
    more = '\n[[testsets]]\nname = "more"\nqrels = "qrels.txt"\nqueries = "queries.tsv"\n'
    path = write_project(tmp_path / "project", {"alpha": "good", "beta": "good"},
                         hook=f"{capture.url}/ok", extra_alerts=more)  # fmt: skip
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('testsets = ["topics"]', 'testsets = ["more"]', 1), "utf-8")
    steps: list[dict[str, Any]] = []
    outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
    assert outcome.exit_code == 0, [s for s in steps if "error" in s]
    assert events_sent(capture)[1:] == [("operational", "retired", "alpha", "")]
    assert "test set topics is no longer run for alpha" in (
        alerts(db_url, config="alpha")[0].note or ""
    )


GRADES = {
    "wing flutter": {"d1": 3, "d2": 1, "d3": 0, "d4": 2},
    "jet noise": {"d5": 2, "d6": 0, "d7": 3},
    "boundary layer": {"d8": 1, "d9": 0, "d10": 2, "d11": 0},
}
RANKINGS = {text: sorted(docs) for text, docs in GRADES.items()}
ONLINE = """
[[gates]]
metric = "online:CTR"
max_relative_drop = 0.05

[online]
baseline = "control"
metrics = ["online:CTR"]
retire_after_days = 3
open_days = 1
open_window = 1
"""


def _import(db_url: str, path: Path, attention: dict[str, float], day: int) -> None:
    arms = [Arm(config, RANKINGS, attention=a) for config, a in attention.items()]
    log = write_ubi_log(path, arms, GRADES, sessions=2500, seed=day,
                        start=datetime(2026, 3, day, 8, tzinfo=UTC))  # fmt: skip
    with Store.open(db_url) as store:
        assert store.import_events([log.path]).unknown_configs == {}


def test_an_arm_without_searches_for_retire_after_days_has_its_alert_retired(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    arms = {"control": "good", "treatment": "good"}
    night(arms, extra_alerts=ONLINE)
    _import(db_url, tmp_path / "day1.jsonl", {"control": 1.0, "treatment": 0.9}, day=1)
    assert night(arms, extra_alerts=ONLINE)[0] == 1
    assert events_sent(capture) == [("regression", "opened", "treatment", "online:CTR")]
    # the treatment arm was switched off: only the control has searches from now on
    _import(db_url, tmp_path / "day3.jsonl", {"control": 1.0}, day=3)
    assert night(arms, extra_alerts=ONLINE)[0] == 1  # two days without: not yet
    assert len(capture.received("/ok")) == 1
    _import(db_url, tmp_path / "day4.jsonl", {"control": 1.0}, day=4)
    code, steps = night(arms, extra_alerts=ONLINE)  # three days without: retired
    assert code == 0, [s for s in steps if "error" in s]
    assert events_sent(capture)[1:] == [("regression", "retired", "treatment", "online:CTR")]
    note = capture.accepted("/ok")[1].body["alerts"][0]["note"]
    assert "no searches since 2026-03-01" in note and "retire_after_days = 3" in note
    assert night(arms, extra_alerts=ONLINE)[0] == 0
    assert len(capture.received("/ok")) == 2


def test_retire_after_days_must_be_a_whole_number_of_days(
    night: Night, cli: Cli, tmp_path: Path, db_url: str
) -> None:
    path = write_project(tmp_path / "bad", {"control": "good", "treatment": "good"},
                         extra_alerts=ONLINE.replace("= 3", "= 0"))  # fmt: skip
    result = cli("nightly", "--project", str(path), "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "retire_after_days" in result.stderr and "evalplat.toml" in result.stderr
    assert alerts(db_url) == []


def test_alerts_resolve_closes_an_alert_by_hand_with_its_note(
    night: Night, capture: CaptureServer, db_url: str, cli: Cli, tmp_path: Path
) -> None:
    night({"alpha": "good", "beta": "good"})
    assert night({"alpha": "bad", "beta": "bad"}, hook="/ok")[0] == 1
    first, second = sorted(a.id for a in alerts(db_url, state="open"))
    project = str(tmp_path / "project" / "evalplat.toml")
    assert cli("alerts", "ack", str(second), "--db", db_url).exit_code == 0
    for alert_id in (first, second):  # open and acknowledged ones can be resolved
        done = cli("alerts", "resolve", str(alert_id), "--note", "accepted: a planned change",
                   "--project", project, "--db", db_url)  # fmt: skip
        assert done.exit_code == 0, done.stderr
        assert "resolved" in done.stdout
    listed = json.loads(cli("alerts", "list", "--db", db_url, "--json").stdout)
    assert {a["id"]: (a["state"], a["note"]) for a in listed} == {
        first: ("resolved", "accepted: a planned change"),
        second: ("resolved", "accepted: a planned change"),
    }
    table = cli("alerts", "list", "--db", db_url).stdout  # the note column, wrapped to fit
    assert "note" in table and table.count("planned") == 2
    again = cli("alerts", "resolve", str(first), "--note", "x", "--project", project,
                "--db", db_url)  # fmt: skip
    assert again.exit_code == 2 and again.stderr.count("\n") == 1
    assert f"alert {first} is resolved" in again.stderr
    unknown = cli("alerts", "resolve", "999", "--note", "x", "--project", project, "--db", db_url)
    assert unknown.exit_code == 2 and "no alert with id 999" in unknown.stderr
    blank = cli("alerts", "resolve", str(second), "--note", " ", "--project", project,
                "--db", db_url)  # fmt: skip
    assert blank.exit_code == 2 and "--note" in blank.stderr
    # the hand resolutions are announced once, by the next delivery, with the note
    sent = cli("alerts", "deliver", "--project", project, "--db", db_url)
    assert sent.exit_code == 0, sent.stderr
    resolved = capture.accepted("/ok")[1].body["alerts"]
    assert [(a["event"], a["note"]) for a in resolved] == [
        ("resolved", "accepted: a planned change")
    ] * 2
    assert cli("alerts", "deliver", "--project", project, "--db", db_url).exit_code == 0
    assert len(capture.received("/ok")) == 2


def test_alerts_resolve_refuses_a_pending_or_retired_alert(
    night: Night, db_url: str, cli: Cli, tmp_path: Path
) -> None:
    two_nights = {"extra_alerts": '\n[[gates]]\nmetric = "P@5"\nmax_drop = 0.01\nconsecutive = 2\n'}
    night({"alpha": "good", "beta": "good"}, **two_nights)
    night({"alpha": "bad", "beta": "good"}, **two_nights)
    project = str(tmp_path / "project" / "evalplat.toml")
    [pending] = alerts(db_url, state="pending")
    refused = cli("alerts", "resolve", str(pending.id), "--note", "x", "--project", project,
                  "--db", db_url)  # fmt: skip
    assert refused.exit_code == 2 and f"alert {pending.id} is pending" in refused.stderr
    night({"beta": "good"}, **two_nights)  # alpha leaves: its open alert retires, pending goes
    [retired] = alerts(db_url, config="alpha")
    assert retired.state == "retired"
    refused = cli("alerts", "resolve", str(retired.id), "--note", "x", "--project", project,
                  "--db", db_url)  # fmt: skip
    assert refused.exit_code == 2 and f"alert {retired.id} is retired" in refused.stderr
    assert cli("alerts", "ack", str(retired.id), "--db", db_url).exit_code == 2
    assert alerts(db_url, config="alpha")[0].state == "retired"


def test_an_acknowledged_regression_no_longer_fails_the_night(
    night: Night, db_url: str, cli: Cli
) -> None:
    night({"alpha": "good", "beta": "good"})
    assert night({"alpha": "bad", "beta": "good"})[0] == 1
    [alert] = alerts(db_url, state="open")
    assert cli("alerts", "ack", str(alert.id), "--db", db_url).exit_code == 0
    code, steps = night({"alpha": "bad", "beta": "good"})
    assert code == 0
    assert (steps[-1]["open_alerts"], steps[-1]["acknowledged_alerts"]) == (0, 1)
    assert night({"alpha": "bad", "beta": "bad"})[0] == 1  # a new, unacknowledged one fails


def test_a_channel_that_refuses_makes_the_night_and_deliver_exit_3_until_it_accepts(
    night: Night, capture: CaptureServer, db_url: str, cli: Cli, tmp_path: Path
) -> None:
    night({"alpha": "good"}, hook="/down")
    code, steps = night({"alpha": "bad"}, hook="/down")
    assert code == 3  # 3 beats 1: the regression's alert did not reach its channel
    assert [s["status"] for s in steps if s["step"] == "deliver"] == ["failed"]
    code, _ = night({"alpha": "good"}, hook="/down")  # resolved, and still nothing delivered
    assert code == 3
    project = str(tmp_path / "project" / "evalplat.toml")
    refused = cli("alerts", "deliver", "--project", project, "--db", db_url)
    assert refused.exit_code == 3 and "still wait" in refused.stderr
    write_project(tmp_path / "project", {"alpha": "good"}, hook=f"{capture.url}/ok")
    accepted = cli("alerts", "deliver", "--project", project, "--db", db_url)
    assert accepted.exit_code == 0, accepted.stderr
    assert events_sent(capture) == [
        ("regression", "opened", "alpha", "nDCG@10"),
        ("regression", "resolved", "alpha", "nDCG@10"),
    ]
    assert cli("alerts", "deliver", "--project", project, "--db", db_url).exit_code == 0
    assert night({"alpha": "good"})[0] == 0


def test_open_alerts_in_the_done_line_counts_every_open_alert_of_the_project(
    night: Night, db_url: str
) -> None:
    night({"alpha": "good", "beta": "good", "gamma": "good"})
    code, steps = night({"alpha": "bad", "beta": "down", "gamma": "unjudged"})
    assert code == 3
    opened = [s for s in steps if s["step"] == "alert" and s["event"] == "opened"]
    assert len(opened) == 3  # a regression, a run failed, a drop that needs judgments
    open_now = alerts(db_url, state="open")
    assert steps[-1]["open_alerts"] == len(open_now) == 3
