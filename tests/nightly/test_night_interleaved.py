"""Nights over interleaved logs: ``online:Preference`` scored per day from merged lists, gated
by its interval over sessions, alerted on once, resolved, and retired when the traffic ends."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from ..events.interleaved import write_interleaved_log
from .small_project import write_project

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

ONLINE = """
[[gates]]
metric = "online:Preference"
max_drop = 0.02

[online]
baseline = "control"
metrics = ["online:CTR"]
retire_after_days = 2
{rule}
{more}
"""
EXPERIMENT = '\n[[online.interleaving]]\ncandidate = "treatment"\n'
DAILY = "open_days = 1\nopen_window = 1\nresolve_days = 1"  # each day's verdict alone


Night = Callable[..., tuple[int, list[dict[str, Any]]]]


@pytest.fixture
def night(db_url: str, tmp_path: Path, capture: CaptureServer) -> Night:
    def run(more: str = EXPERIMENT, rule: str = DAILY) -> tuple[int, list[dict[str, Any]]]:
        arms = {"control": "good", "treatment": "good"}
        path = write_project(tmp_path / "project", arms, hook=f"{capture.url}/ok",
                             extra_alerts=ONLINE.format(more=more, rule=rule))  # fmt: skip
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        return outcome.exit_code, steps

    return run


def _import(db_url: str, path: Path, lean: float, day: int, sessions: int = 600) -> None:
    log = write_interleaved_log(path, "treatment", "control", sessions=sessions, lean=lean,
                                seed=day, day=datetime(2026, 3, day, 8, tzinfo=UTC))  # fmt: skip
    with Store.open(db_url) as store:
        outcome = store.import_events([log])
    assert outcome.unknown_configs == {} and outcome.interleaved == outcome.searches > 0


def _alerts(capture: CaptureServer) -> list[tuple[str, str, str, str]]:
    return [
        (a["kind"], a["event"], a["config"], a["metric"])
        for request in capture.accepted("/ok")
        for a in request.body["alerts"]
    ]


def _judged(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in steps if s["step"] == "interleaving"]


def test_a_credibly_worse_candidate_opens_one_alert_resolved_then_retired(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    assert night()[0] == 0  # the configs are registered; no logs yet
    _import(db_url, tmp_path / "d1.jsonl", lean=0.35, day=1)
    code, steps = night()
    assert code == 1
    [judged] = _judged(steps)
    assert judged["verdict"] == "regression" and judged["interval"][1] < -0.02
    assert (judged["candidate"], judged["baseline"], judged["day"]) == (
        "treatment@1", "control@1", "2026-03-01"
    )  # fmt: skip
    assert _alerts(capture) == [("regression", "opened", "treatment", "online:Preference")]
    [message] = capture.accepted("/ok")[0].body["alerts"]
    assert message["test_set"] == "online" and message["candidate"] < 0
    assert "sessions" in message["changes"][0] and "quer" not in message["changes"][0]
    assert "worst_queries" not in message  # sessions, not queries: the changes count them
    assert night()[0] == 1  # the same day again: still open, nothing new sent
    assert len(_alerts(capture)) == 1
    with Store.open(db_url) as store:
        [point] = store.history("treatment", "online")
        assert point.verdict == "regression" and point.means["online:Preference"] < 0
    _import(db_url, tmp_path / "d2.jsonl", lean=0.5, day=2)  # an A/A day
    code, steps = night()
    assert code == 0 and _judged(steps)[0]["verdict"] == "unchanged"
    assert _alerts(capture)[1:] == [("regression", "resolved", "treatment", "online:Preference")]
    # the experiment's traffic ends while the A/B arm goes on: its alert retires
    _import(db_url, tmp_path / "d3.jsonl", lean=0.35, day=3)
    assert night()[0] == 1
    from evalplat.events.synthetic import Arm, write_ubi_log

    rankings = {"wing": ["d1", "d2"]}
    log = write_ubi_log(tmp_path / "ab.jsonl", [Arm("control", rankings, attention=1.0)],
                        {"wing": {"d1": 1}}, sessions=40, seed=5,
                        start=datetime(2026, 3, 5, 8, tzinfo=UTC))  # fmt: skip
    with Store.open(db_url) as store:
        store.import_events([log.path])
    code, steps = night()
    assert code == 0
    assert _alerts(capture)[2:] == [
        ("regression", "opened", "treatment", "online:Preference"),
        ("regression", "retired", "treatment", "online:Preference"),
    ]
    code, steps = night()  # ended: its last day is not judged again, nothing reopens
    assert code == 0 and _judged(steps)[0]["verdict"] == "ended"
    assert len(_alerts(capture)) == 4


def test_a_day_whose_interval_touches_zero_neither_resolves_nor_reopens(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    """The default day rule (2 regressed days of 3 open, 2 clear days resolve) over regressed,
    A/A, regressed, A/A, A/A days: one alert opened on day 3 and resolved on day 5, two
    announcements where each day's verdict alone made four."""
    night(rule="")
    leans = {1: 0.35, 2: 0.5, 3: 0.35, 4: 0.5, 5: 0.5}
    codes, verdicts = [], []
    for day, lean in leans.items():
        _import(db_url, tmp_path / f"d{day}.jsonl", lean=lean, day=day)
        code, steps = night(rule="")
        codes.append(code)
        verdicts.append(_judged(steps)[0]["verdict"])
        assert len(_alerts(capture)) == {1: 0, 2: 0, 3: 1, 4: 1, 5: 2}[day], day
    assert verdicts == ["regression", "unchanged", "regression", "unchanged", "unchanged"]
    assert codes == [0, 0, 1, 1, 0]
    assert _alerts(capture) == [
        ("regression", "opened", "treatment", "online:Preference"),
        ("regression", "resolved", "treatment", "online:Preference"),
    ]
    opened = capture.accepted("/ok")[0].body["alerts"][0]
    assert opened["confirmation"] == (
        "regressed 2 days of 3 (opens at 2 of 3, resolves after 2 clear days)"
    )


def test_an_a_a_interleaved_log_never_alerts(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    night()
    for day in (1, 2, 3):
        _import(db_url, tmp_path / f"aa{day}.jsonl", lean=0.5, day=day)
        code, steps = night()
        assert code == 0 and _judged(steps)[0]["verdict"] == "unchanged"
    assert _alerts(capture) == []


def test_too_few_sessions_is_insufficient_and_leaves_the_alert(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    night()
    _import(db_url, tmp_path / "few.jsonl", lean=0.0, day=1, sessions=12)
    code, steps = night()
    assert code == 0 and _judged(steps)[0]["verdict"] == "insufficient data"
    assert _alerts(capture) == []


@pytest.mark.parametrize(
    ("more", "named"),
    [
        ('\n[[online.interleaving]]\ncandidate = "nobody"\n', "nobody"),
        ('\n[[online.interleaving]]\ncandidate = "control"\n', "two configs"),
        ('\n[[online.interleaving]]\ncandidate = "treatment"\nb = "control"\n', "unknown key"),
        ("", "[[online.interleaving]]"),
    ],
)
def test_a_wrong_experiment_is_refused_in_one_line(
    db_url: str, tmp_path: Path, capture: CaptureServer, more: str, named: str
) -> None:
    arms = {"control": "good", "treatment": "good"}
    path = write_project(tmp_path / "project", arms, hook=f"{capture.url}/ok",
                         extra_alerts=ONLINE.format(more=more, rule=DAILY))  # fmt: skip
    with pytest.raises(InputError) as refused:
        load_project(path)
    message = str(refused.value)
    assert named in message and "\n" not in message and "evalplat.toml" in message
