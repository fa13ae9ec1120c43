"""``[[sweeps]]`` in the nightly: a due sweep runs after the configs and logs one ``sweep``
line, is not due again until a week has passed (or its weekday comes), never alerts, and a
sweep that fails makes the night exit 3 with the night's other work kept."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import NightlyOutcome, run_nightly
from evalplat.nightly.project import SweepSpec, load_project
from evalplat.nightly.sweeps import is_due
from evalplat.store import Store

from .small_project import write_project

SWEEP = """
[[sweeps]]
config = "web"
testset = "topics"
grid = {{ mode = ["first10", "good", "first20"] }}
folds = {folds}
seed = 3
"""


def _project(folder: Path, folds: int = 2) -> Path:
    path = write_project(folder, {"web": "first15"})
    path.write_text(path.read_text() + SWEEP.format(folds=folds), encoding="utf-8")
    return path


def _night(path: Path, db_url: str, **options: Any) -> tuple[NightlyOutcome, list[dict[str, Any]]]:
    steps: list[dict[str, Any]] = []
    outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append, **options)
    return outcome, steps


def _sweeps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [step for step in steps if step["step"] == "sweep"]


def test_a_due_sweep_runs_once_a_week_and_never_alerts(tmp_path: Path, db_url: str) -> None:
    path = _project(tmp_path)
    outcome, steps = _night(path, db_url, dry_run=True)
    assert [(s["due"], s["last_run"]) for s in _sweeps(steps)] == [(True, None)]

    outcome, steps = _night(path, db_url)
    assert outcome.exit_code == 0
    [line] = _sweeps(steps)
    assert line["testset"] == "topics@1" and line["settings"] == 3 and line["searched"] == 3
    assert line["winner"] == "mode=good" and line["baseline"] == "web@1"
    # first15 scores 0.5 on 30 queries, good 1.0: the gain is half on and off the tuning queries
    assert line["in_sample_gain"] == pytest.approx(0.5)
    assert line["held_out_gain"] == pytest.approx(0.5)
    assert line["beats_baseline"] is True and line["verdict"] == "improvement"
    assert outcome.alerts == []
    order = [s["step"] for s in steps]
    assert order.index("sweep") > max(i for i, s in enumerate(order) if s == "run")
    assert order.index("sweep") < order.index("report")
    site = tmp_path / "site"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "web~" not in index and 'href="leaderboard/topics.html"' in index
    board = (site / "leaderboard" / "topics.html").read_text(encoding="utf-8")
    assert all(f"web~mode={mode}" in board for mode in ("first10", "good", "first20"))
    assert len(list((site / "history").glob("web_mode_*--topics.html"))) == 3

    outcome, steps = _night(path, db_url)
    assert outcome.exit_code == 0 and _sweeps(steps) == []
    _, steps = _night(path, db_url, dry_run=True)
    assert [s["due"] for s in _sweeps(steps)] == [False]

    spec = load_project(path).sweeps[0]
    with Store.open(db_url) as store:
        last = store.last_sweep("web", spec.key)
        assert last is not None and datetime.now(UTC) - last < timedelta(minutes=10)
        store.note_sweep(spec.key, line["winner_run"], last - timedelta(days=7))
    outcome, steps = _night(path, db_url)
    [again] = _sweeps(steps)
    assert outcome.exit_code == 0 and again["searched"] == 0 and again["cached"] == 3
    assert again["winner_run"] == line["winner_run"] and outcome.alerts == []
    with Store.open(db_url) as store:
        assert [a for a in store.list_alerts()] == []


def test_a_failing_sweep_exits_3_and_keeps_the_nights_work(tmp_path: Path, db_url: str) -> None:
    path = _project(tmp_path, folds=31)  # more folds than the 30 queries: refused at night
    outcome, steps = _night(path, db_url)
    assert outcome.exit_code == 3
    [line] = _sweeps(steps)
    assert "more than the test set's 30 queries" in line["error"]
    assert [run["status"] for run in outcome.runs] == ["complete"]
    assert outcome.report is not None and outcome.report.is_file()
    assert steps[-1]["step"] == "done" and steps[-1]["exit_code"] == 3
    # nothing recorded: the sweep is due again the next night
    _, steps = _night(path, db_url, dry_run=True)
    assert [s["due"] for s in _sweeps(steps)] == [True]


def test_a_weekday_sweep_is_due_on_that_day_once() -> None:
    spec = SweepSpec("web", "topics", ("mode=[1]",), every="sunday")
    sunday = datetime(2026, 11, 29, 2, tzinfo=UTC)
    assert is_due(spec, None, sunday)
    assert not is_due(spec, None, sunday - timedelta(days=1))
    assert not is_due(spec, sunday - timedelta(hours=1), sunday)
    assert is_due(spec, sunday - timedelta(days=7), sunday)
    weekly = SweepSpec("web", "topics", ("mode=[1]",))
    assert not is_due(weekly, sunday - timedelta(days=6, hours=23), sunday)
    assert is_due(weekly, sunday - timedelta(days=7), sunday)


def test_cli_dry_run_names_the_due_sweeps(
    tmp_path: Path, cli: Callable[..., Any], db_url: str
) -> None:
    path = _project(tmp_path)
    result = cli("nightly", "--dry-run", "--project", str(path), "--db", db_url)
    assert result.exit_code == 0, result.stderr
    assert "nightly sweep" in result.stdout and "due=true" in result.stdout.lower()
