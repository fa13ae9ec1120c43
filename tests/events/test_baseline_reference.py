"""``CONFIG@baseline`` names the config's offline baseline even once its online runs are scored:
a CI script comparing ``prod@baseline`` with a candidate keeps working after events arrive."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalplat.events.synthetic import Arm, write_ubi_log
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..nightly.small_project import write_project

Cli = Callable[..., Any]
GRADES = {"wing flutter": {"d1": 3, "d2": 1, "d3": 0}, "jet noise": {"d5": 2, "d6": 0, "d7": 3}}
ONLINE = """
[online]
baseline = "control"
metrics = ["online:CTR"]
"""


def _night(db_url: str, folder: Path) -> None:
    path = write_project(folder, {"control": "good", "treatment": "first20"}, extra_alerts=ONLINE)
    run_nightly(load_project(path), db_url=db_url, log=lambda step: None)


def test_at_baseline_names_the_offline_baseline_after_online_scoring(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    _night(db_url, tmp_path / "project")
    with Store.open(db_url) as store:
        offline = store.baseline("control", "topics")
        assert offline is not None
        rankings = {text: sorted(docs) for text, docs in GRADES.items()}
        arms = [Arm(name, rankings) for name in ("control", "treatment")]
        log = write_ubi_log(tmp_path / "day1.jsonl", arms, GRADES, sessions=300, seed=3,
                            start=datetime(2026, 3, 1, 8, tzinfo=UTC))  # fmt: skip
        store.import_events([log.path])
    _night(db_url, tmp_path / "project")  # scores the arms' online runs
    with Store.open(db_url) as store:
        online = store.baseline("control", "online")
        # the online run has a baseline of its own, adopted after the offline one
        assert online is not None and online.run_id != offline.run_id
    result = cli("compare", "control@baseline", "treatment@latest", "--db", db_url, "--json")
    assert result.exit_code == 0, result.stderr
    compared = json.loads(result.stdout)
    assert compared["baseline_run_id"] == offline.run_id
    shown = json.loads(cli("runs", "show", "control@baseline", "--db", db_url, "--json").stdout)
    assert shown["id"] == offline.run_id and shown["test_set"] == "topics"


def test_at_baseline_of_a_config_with_only_online_runs_says_so(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    rankings = {text: sorted(docs) for text, docs in GRADES.items()}
    log = write_ubi_log(tmp_path / "day1.jsonl", [Arm("arm", rankings)], GRADES, sessions=50,
                        seed=5, start=datetime(2026, 3, 1, 8, tzinfo=UTC))  # fmt: skip
    assert cli("config", "add", "arm", "-s", "builtin", "--db", db_url).exit_code == 0
    with Store.open(db_url) as store:
        store.import_events([log.path])
        [scored] = store.score_online(["arm"])
        assert store.baseline("arm", "online") is not None  # adopted: the arm's first run
    assert scored.test_set == "online"
    result = cli("runs", "show", "arm@baseline", "--db", db_url)
    assert result.exit_code == 2
    assert "config 'arm' has no offline baseline" in result.stderr
