"""Targets over nights: a credible miss opens one ``target`` alert, kept while the miss lasts
and resolved once a config version meets the target; a figure within noise of its target never
alerts; ``--fail-on-target`` turns a miss into exit 1. On both databases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from .db_counts import table_counts
from .small_project import write_project

Night = Callable[..., tuple[int, list[dict[str, Any]]]]


def targets_toml(value: float, consecutive: int = 1) -> str:
    return f'\n[[targets]]\nmetric = "nDCG@10"\nmin = {value}\nconsecutive = {consecutive}\n'


@pytest.fixture
def night(db_url: str, tmp_path: Path, capture: CaptureServer) -> Night:
    def run(mode: str, targets: str, **options: Any) -> tuple[int, list[dict[str, Any]]]:
        path = write_project(
            tmp_path / "project", {"alpha": mode}, hook=f"{capture.url}/ok", extra_alerts=targets
        )
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append, **options)
        assert [t["target_verdict"] for t in outcome.targets] == [
            s["target_verdict"] for s in steps if s["step"] == "target"
        ]
        return outcome.exit_code, steps

    return run


def target_alerts(capture: CaptureServer) -> list[tuple[str, str]]:
    return [
        (a["event"], a["target"])
        for request in capture.accepted("/ok")
        for a in request.body["alerts"]
        if a["kind"] == "target"
    ]


def verdict_of(steps: list[dict[str, Any]]) -> str:
    [step] = [s for s in steps if s["step"] == "target"]
    assert step["target"] == "nDCG@10>=0.9" or step["target"].startswith("nDCG@10>=")
    return str(step["target_verdict"])


def test_a_credible_miss_opens_one_alert_kept_until_a_version_meets_the_target(
    night: Night, capture: CaptureServer, db_url: str, tmp_path: Path
) -> None:
    targets = targets_toml(0.9)
    code, steps = night("first15", targets)  # 0.5, interval about [0.32, 0.68]: missed
    assert code == 0 and verdict_of(steps) == "missed"
    code, steps = night("first15", targets, fail_on_target=True)
    assert code == 1 and verdict_of(steps) == "missed"
    night("first16", targets)  # a new version, still missing
    assert [event for event, _ in target_alerts(capture)] == ["opened"]
    opened = target_alerts(capture)[0][1]
    assert opened.startswith("nDCG@10>=0.9: 0.5000 [") and opened.endswith("] missed")
    code, steps = night("first28", targets, fail_on_target=True)  # 0.933: met
    assert code == 0 and verdict_of(steps) == "met"
    assert [event for event, _ in target_alerts(capture)] == ["opened", "resolved"]
    with Store.open(db_url) as store:
        alerts = [a for a in store.list_alerts() if a.kind == "target"]
        assert [(a.state, a.metric, a.config) for a in alerts] == [("resolved", "nDCG@10", "alpha")]
        runs = [r.id for r in store.list_runs("alpha")]
        kept = store.target_verdicts(runs)
        assert sorted(v[0].verdict for v in kept.values()) == ["met"] + ["missed"] * 3
    site = tmp_path / "project" / "site"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert '<th scope="col">Targets</th>' in index and "1 met · 0 at risk · 0 missed" in index
    [history] = (site / "history").glob("alpha--*.html")
    page = history.read_text(encoding="utf-8")
    assert page.count('class="c-target"') == 1 and page.count('class="c-miss"') == 1
    assert "target: at least 0.9" in page and "target missed" in page


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_a_figure_within_noise_of_its_target_never_alerts_over_ten_nights(
    night: Night, capture: CaptureServer
) -> None:
    verdicts = []
    for k in (15, 13, 16, 14, 17, 13, 15, 16, 14, 15):  # 0.43 .. 0.57 around 0.5
        _, steps = night(f"first{k}", targets_toml(0.5))
        verdicts.append(verdict_of(steps))
        assert not [s for s in steps if s["step"] == "alert" and s["kind"] == "target"]
    assert set(verdicts) == {"met", "at_risk"}
    assert target_alerts(capture) == []


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_at_risk_holds_a_streak_and_an_open_alert_as_they_are(
    night: Night, capture: CaptureServer, db_url: str
) -> None:
    targets = targets_toml(0.6, consecutive=2)
    assert verdict_of(night("first10", targets)[1]) == "missed"  # streak 1
    assert verdict_of(night("first16", targets)[1]) == "at_risk"  # held, not reset
    assert verdict_of(night("first10", targets)[1]) == "missed"  # streak 2: opens
    assert [event for event, _ in target_alerts(capture)] == ["opened"]
    assert verdict_of(night("first17", targets)[1]) == "at_risk"  # still open
    with Store.open(db_url) as store:
        [alert] = [a for a in store.list_alerts() if a.kind == "target"]
        assert alert.state == "open" and alert.streak == 2
    assert verdict_of(night("first20", targets)[1]) == "met"
    assert [event for event, _ in target_alerts(capture)] == ["opened", "resolved"]


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_cli_nightly_takes_targets_and_reports_them_as_json(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    path = write_project(tmp_path, {"alpha": "first15"})
    result = cli("nightly", "--project", str(path), "--db", db_url, "--json", "--target",
                 "nDCG@10>=0.9", "--target", "P@5>=0.1", "--fail-on-target")  # fmt: skip
    assert result.exit_code == 1, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    rows = {s["metric"]: s for s in steps if s["step"] == "target"}
    assert rows["nDCG@10"]["target_verdict"] == "missed"
    assert rows["P@5"]["target_verdict"] == "met"
    assert {"target", "target_verdict", "ci_low", "ci_high"} <= set(rows["nDCG@10"])
    assert steps[-1]["targets_missed"] == 1
    shown = cli("runs", "show", str(rows["P@5"]["run"]), "--db", db_url)
    assert "target nDCG@10>=0.9" in shown.stdout and "missed" in shown.stdout


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('metric = "Frobnicate"\nmin = 0.5', "[[targets]] #1 key 'metric': unknown metric"),
        ('metric = "nDCG@10"\nmin = 0.5\nmax = 0.9', "key 'max': target nDCG@10: has both"),
        ('metric = "nDCG@10"\nmax = 0.9', "key 'max': nDCG@10 is higher-is-better"),
        ('metric = "Latency(p=95)"\nmin = 100', "key 'min': Latency(p=95) is lower-is-better"),
        ('metric = "nDCG@10"', "[[targets]] #1: target nDCG@10: needs min = ... or max = ..."),
        ('metric = "nDCG@10"\nmin = "high"', "key 'min': target nDCG@10: must be a number"),
        ('metric = "P@5"\nmin = 0.5\nwindow = "30m"', "key 'window': target P@5: window '30m'"),
        ('metric = "P@5"\nmin = 0.5\nconfig = "nope"', "key 'config': target P@5: 'nope' is"),
        ('metric = "P@5"\nmin = 0.5\ngoal = 1', "[[targets]] #1 key 'goal': unknown key"),
    ],
)
def test_a_bad_target_table_is_refused_before_anything_is_written(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, table: str, message: str
) -> None:
    path = write_project(tmp_path, {"alpha": "good"}, extra_alerts=f"\n[[targets]]\n{table}\n")
    before = table_counts(db_url)
    result = cli("nightly", "--project", str(path), "--db", db_url)
    assert result.exit_code == 2, result.stdout
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {path} line "), line
    assert message in line, line
    assert table_counts(db_url) == before


def test_a_malformed_target_option_is_refused_before_anything_is_written(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    path = write_project(tmp_path, {"alpha": "good"})
    before = table_counts(db_url)
    result = cli("nightly", "--project", str(path), "--db", db_url, "--target", "nDCG@10>0.8")
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert "--target 'nDCG@10>0.8': expected METRIC>=VALUE" in line
    assert table_counts(db_url) == before


@pytest.mark.parametrize(
    ("metric", "bound", "expected"),
    [
        ("Coverage", "min = 0.99", "missed"),  # an engine that answers nothing covers nothing
        ("ZeroResult", "max = 0.01", "missed"),  # ... and every query is a zero-result one
        ("Latency(p=95)", "max = 0.000001", "missed"),  # no engine answers in a nanosecond
        ("ZeroResult", "max = 1.0", "met"),
    ],
)
@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_a_target_on_a_measure_that_reads_no_judgments_is_judged_on_its_figure(
    night: Night, capture: CaptureServer, metric: str, bound: str, expected: str
) -> None:
    targets = f'\n[[targets]]\nmetric = "{metric}"\n{bound}\n'
    code, steps = night("empty", targets, fail_on_target=True)
    [step] = [s for s in steps if s["step"] == "target"]
    assert step["metric"] == metric and step["target_verdict"] == expected
    assert code == (1 if expected == "missed" else 0)
    assert [e for e, _ in target_alerts(capture)] == (["opened"] if expected == "missed" else [])
