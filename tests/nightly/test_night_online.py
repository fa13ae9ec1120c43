"""Nights over interaction logs: the project's A/B arms scored per day from imported events,
compared over sessions, and alerted on through the outbox like any regression."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.events.synthetic import Arm, write_ubi_log
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from .small_project import write_project

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

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
{gate}
[online]
baseline = "control"
metrics = ["online:CTR", "online:MRR", "online:Abandonment"]
{more}
"""


DAILY = "open_days = 1\nopen_window = 1\nresolve_days = 1"  # each day's verdict alone


Night = Callable[..., tuple[int, list[dict[str, Any]]]]


@pytest.fixture
def night(db_url: str, tmp_path: Path, capture: CaptureServer) -> Night:
    def run(
        more: str = DAILY, treatment: str = "good", gate: str = ""
    ) -> tuple[int, list[dict[str, Any]]]:
        arms = {"control": "good", "treatment": treatment}
        online = ONLINE.format(more=more, gate=gate)
        path = write_project(
            tmp_path / "project", arms, hook=f"{capture.url}/ok", extra_alerts=online
        )
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        return outcome.exit_code, steps

    return run


def _import(db_url: str, path: Path, attention: dict[str, float], *, sessions: int,
            seed: int, day: int = 1) -> None:  # fmt: skip
    arms = [Arm(config, RANKINGS, attention=a) for config, a in attention.items()]
    log = write_ubi_log(path, arms, GRADES, sessions=sessions, seed=seed,
                        start=datetime(2026, 3, day, 8, tzinfo=UTC))  # fmt: skip
    with Store.open(db_url) as store:
        outcome = store.import_events([log.path])
    assert outcome.unknown_configs == {} and outcome.searches == sum(log.searches.values())


def _alerts(capture: CaptureServer) -> list[list[tuple[str, str, str, str]]]:
    return [
        [(a["kind"], a["event"], a["config"], a["metric"]) for a in request.body["alerts"]]
        for request in capture.accepted("/ok")
    ]


def test_a_planted_ctr_drop_opens_exactly_one_online_alert(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    code, steps = night()  # the configs are registered; no events yet
    assert code == 0
    assert any(s["step"] == "online" and s["compared"] == 0 for s in steps)
    _import(db_url, tmp_path / "day1.jsonl", {"control": 1.0, "treatment": 0.9}, sessions=2500,
            seed=11)  # fmt: skip
    code, steps = night()
    assert code == 1, [s for s in steps if "error" in s]
    [compared] = [s for s in steps if s["step"] == "online_compare"]
    assert (compared["baseline"], compared["candidate"]) == ("control@1", "treatment@1")
    assert compared["verdicts"] == {"online:CTR": "regression"}
    assert _alerts(capture) == [[("regression", "opened", "treatment", "online:CTR")]]
    [alert] = capture.accepted("/ok")[0].body["alerts"]
    assert alert["test_set"] == "online" and alert["test"] == "bootstrap"
    assert alert["relative_delta"] == pytest.approx(-0.1, abs=0.03)
    assert "worst_queries" not in alert  # its units are sessions: the changes count them
    assert re.fullmatch(r"A/B arms: \d+ sessions \(\d+ searches\) against \d+ "
                        r"\(\d+ searches\) on 2026-03-01", alert["changes"][-1])  # fmt: skip
    assert "confirmation" not in alert  # each day alone: no rule to say
    assert night()[0] == 1  # the same day again: still open, nothing new sent
    assert len(capture.received("/ok")) == 1
    # the next day the arms are alike again: the alert resolves, once
    _import(db_url, tmp_path / "day2.jsonl", {"control": 1.0, "treatment": 1.0}, sessions=2500,
            seed=12, day=2)  # fmt: skip
    code, steps = night()
    assert code == 0
    assert [s["day"] for s in steps if s["step"] == "online_compare"] == ["2026-03-02"]
    assert _alerts(capture)[1] == [("regression", "resolved", "treatment", "online:CTR")]


def test_two_versions_of_one_config_online_at_once_share_one_verdict(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    night()  # treatment@1
    night(treatment="first30")  # treatment@2: the same rankings, a new param
    # version 1 is alike the control, version 2 has the planted drop
    _import(db_url, tmp_path / "two.jsonl",
            {"control": 1.0, "treatment@1": 1.0, "treatment@2": 0.9}, sessions=2500,
            seed=11)  # fmt: skip
    for _ in range(2):  # the same day twice: one alert, opened once, never resolved between
        code, steps = night(treatment="first30")
        assert code == 1
        compared = {s["candidate"]: s["verdicts"] for s in steps if s["step"] == "online_compare"}
        assert compared == {
            "treatment@1": {"online:CTR": "unchanged"},
            "treatment@2": {"online:CTR": "regression"},
        }
    online = [a for batch in _alerts(capture) for a in batch if a[3] == "online:CTR"]
    assert online == [("regression", "opened", "treatment", "online:CTR")]
    [alert] = [a for r in capture.accepted("/ok") for a in r.body["alerts"]
               if a["metric"] == "online:CTR"]  # fmt: skip
    assert alert["changes"][0].endswith("treatment@2 against control@1")
    assert any("treatment@1" in change for change in alert["changes"][1:])


def test_an_ab_alert_opens_on_two_regressed_days_of_three_and_resolves_on_two_clear(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    """The default day rule on A/B days: dropped, alike, dropped, alike, alike: opened once on
    day 3, held through day 4's clear verdict, resolved on day 5."""
    night("")
    drops = {1: 0.9, 2: 1.0, 3: 0.9, 4: 1.0, 5: 1.0}
    codes, verdicts = [], []
    for day, attention in drops.items():
        _import(db_url, tmp_path / f"d{day}.jsonl", {"control": 1.0, "treatment": attention},
                sessions=2500, seed=20 + day, day=day)  # fmt: skip
        code, steps = night("")
        codes.append(code)
        [compared] = [s for s in steps if s["step"] == "online_compare"]
        verdicts.append(compared["verdicts"]["online:CTR"])
    assert verdicts == ["regression", "unchanged", "regression", "unchanged", "unchanged"]
    assert codes == [0, 0, 1, 1, 0]
    assert _alerts(capture) == [
        [("regression", "opened", "treatment", "online:CTR")],
        [("regression", "resolved", "treatment", "online:CTR")],
    ]
    [alert] = capture.accepted("/ok")[0].body["alerts"]
    assert alert["confirmation"].startswith("regressed 2 days of 3")


def test_a_gate_of_its_own_rule_opens_one_alert_over_flapping_days(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    """The gate's own rule, 2 regressed days of 3 and 2 clear days, over [online]'s daily one:
    days 1, 2, 4 and 5 dropped, day 3 alike: one alert, opened on day 2 and open through day 3
    (each day alone would open it, resolve it and open it again)."""
    rule = "consecutive = 2\nwithin = 3\nclear = 2\n"
    night(gate=rule)
    drops = {1: 0.9, 2: 0.9, 3: 1.0, 4: 0.9, 5: 0.9}
    codes, verdicts = [], []
    for day, attention in drops.items():
        _import(db_url, tmp_path / f"d{day}.jsonl", {"control": 1.0, "treatment": attention},
                sessions=2500, seed=40 + day, day=day)  # fmt: skip
        code, steps = night(gate=rule)
        codes.append(code)
        [compared] = [s for s in steps if s["step"] == "online_compare"]
        verdicts.append(compared["verdicts"]["online:CTR"])
    assert verdicts == ["regression", "regression", "unchanged", "regression", "regression"]
    assert codes == [0, 1, 1, 1, 1]
    assert _alerts(capture) == [[("regression", "opened", "treatment", "online:CTR")]]
    [alert] = capture.accepted("/ok")[0].body["alerts"]
    assert alert["confirmation"] == (
        "regressed 2 days of 2 (opens at 2 of 3, resolves after 2 clear days)"
    )


def test_an_a_a_log_raises_no_alert(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    night()
    _import(db_url, tmp_path / "aa.jsonl", {"control": 1.0, "treatment": 1.0}, sessions=2500,
            seed=5)  # fmt: skip
    code, steps = night()
    assert code == 0
    [compared] = [s for s in steps if s["step"] == "online_compare"]
    assert compared["verdicts"] == {"online:CTR": "unchanged"}
    assert capture.received("/ok") == []
    with Store.open(db_url) as store:
        assert [a for a in store.list_alerts() if a.test_set == "online"] == []


def test_too_few_sessions_is_insufficient_data_and_never_gated(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    night()
    # a drop of a half, but only 20 sessions an arm: below min_sessions, so no verdict
    _import(db_url, tmp_path / "few.jsonl", {"control": 1.0, "treatment": 0.5}, sessions=20,
            seed=2)  # fmt: skip
    code, steps = night("min_sessions = 30")
    assert code == 0
    [compared] = [s for s in steps if s["step"] == "online_compare"]
    assert compared["verdicts"] == {"online:CTR": "insufficient data"}
    assert capture.received("/ok") == []


def test_an_online_gate_needs_an_online_table(tmp_path: Path) -> None:
    path = write_project(tmp_path, {"control": "good"},
                         extra_alerts='[[gates]]\nmetric = "online:CTR"\n')  # fmt: skip
    with pytest.raises(InputError, match=r"\[\[gates\]\] #2 key 'metric'.*\[online\] table"):
        load_project(path)
    path = write_project(tmp_path, {"control": "good"},
                         extra_alerts='[online]\nbaseline = "ghost"\n')  # fmt: skip
    with pytest.raises(InputError, match="baseline names 'ghost'"):
        load_project(path)
    for table, problem in (
        ('baseline = "control"\nwindow = "week"', "unknown key"),
        ('baseline = "control"\nmin_sessions = 0', "whole number of sessions"),
        ('baseline = "control"\nmetrics = ["nDCG@10"]', "not an online measure"),
        ('baseline = "control"\nopen_days = 3\nopen_window = 2', "open_days.*≤ 2"),
        ('baseline = "control"\nresolve_days = 0', "resolve_days.*≥ 1"),
        ('baseline = "control"\nopen_window = true', "open_window.*whole number of days"),
    ):
        path = write_project(tmp_path, {"control": "good"}, extra_alerts=f"[online]\n{table}\n")
        with pytest.raises(InputError, match=rf"\[online\] key .*{problem}"):
            load_project(path)


def test_a_test_set_may_not_be_named_online(tmp_path: Path) -> None:
    path = write_project(tmp_path, {"control": "good"})
    text = path.read_text(encoding="utf-8").replace('"topics"', '"online"')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=r"\[\[testsets\]\] #1 key 'name'.*reserved"):
        load_project(path)


def test_a_dry_run_says_what_the_online_step_would_compare(tmp_path: Path) -> None:
    path = write_project(tmp_path, {"control": "good", "treatment": "good"},
                         extra_alerts=ONLINE.format(more="", gate=""))  # fmt: skip
    steps: list[dict[str, Any]] = []
    url = f"sqlite:///{tmp_path / 'none.db'}"
    assert (
        run_nightly(load_project(path), db_url=url, dry_run=True, log=steps.append).exit_code == 0
    )
    [online] = [s for s in steps if s["step"] == "online"]
    assert online["baseline"] == "control" and online["gates"] == ["online:CTR"]
    assert online["metrics"] == ["online:CTR", "online:MRR", "online:Abandonment"]
    assert not (tmp_path / "none.db").exists()


def test_pages_lead_with_the_first_gated_online_kpi_else_ctr(
    night: Night, db_url: str, tmp_path: Path
) -> None:
    from evalplat.reports.gather import gather_history

    gated = ONLINE.replace('"online:CTR"\nmax_relative', '"online:MRR"\nmax_relative').format(
        more="", gate=""
    )
    path = write_project(tmp_path / "gated", {"control": "good"}, extra_alerts=gated)
    assert load_project(path).online_metrics()[0] == "online:MRR"
    ungated = '[online]\nbaseline = "control"\nmetrics = ["online:Abandonment", "online:CTR"]\n'
    path = write_project(tmp_path / "ungated", {"control": "good"}, extra_alerts=ungated)
    assert load_project(path).online_metrics() == ["online:CTR", "online:Abandonment"]
    # a night scores the arms: their history pages (and the index) lead with the gated KPI,
    # not the alphabetically first online:Abandonment
    night()
    _import(db_url, tmp_path / "day1.jsonl", {"control": 1.0, "treatment": 1.0}, sessions=300,
            seed=11)  # fmt: skip
    night()
    with Store.open(db_url) as store:
        [page] = gather_history(store, "treatment", "online")
    assert page.metrics[0] == "online:CTR" and "online:Abandonment" in page.metrics
