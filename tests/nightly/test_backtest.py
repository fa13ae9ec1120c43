"""``gates backtest`` replays a project's gates over stored nights: the alerts it reports are
the ones the nights opened, the A/A nights give the false-alarm rate, and ``--suggest`` finds a
threshold that silences them and still catches the planted step.

The history: one config searched ten nights. Its index moves under it (a file the engine reads:
how many of the 30 topics it finds), so nights 2 to 8, runs of the baseline's own config
version, are A/A nights; on night 4 it lost six topics (nDCG@10 -0.2, a credible drop), on
night 7 three (-0.1, not credible on 30 queries). On night 9 the config changes to find ten
topics only (-0.67): the planted step, still there on night 10.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..contract.dump import dump
from .small_project import write_project

ENGINE = """
import pathlib


def search(query, depth, mode="index", **params):
    topic = int(query.split()[-1])
    if mode == "index":
        found = int(pathlib.Path({index!r}).read_text())
    else:
        found = int(mode[5:])
    if topic <= found:
        return [("d%d" % topic, 3.0), ("n1", 2.0), ("n2", 1.0)]
    return [("n1", 2.0), ("n2", 1.0)]
"""
# (topics the index finds, the config's mode) per night
NIGHTS = [(30, "index")] * 3 + [(24, "index")] + [(30, "index")] * 2 + [(27, "index")]
NIGHTS += [(30, "index"), (30, "first10"), (30, "first10")]

Cli = Callable[..., Any]


def test_backtest_of_a_stored_history(cli: Cli, db_url: str, tmp_path: Path) -> None:
    """One history, built once (ten nights), read four ways."""
    history = _history(tmp_path / "project", db_url)
    before = dump(db_url)
    _the_replay_opens_what_the_nights_opened(cli, history)
    _a_proposed_file_replays_its_own_rule(cli, history, tmp_path)
    _suggest_silences_the_aa_nights_and_keeps_the_step(cli, history)
    _the_table_and_bad_options(cli, history)
    assert dump(db_url) == before  # a replay writes nothing


def _history(folder: Path, db_url: str) -> tuple[Path, str]:
    for found, mode in NIGHTS:
        path = write_project(folder, {"main": mode}, reports="")
        (folder / "index.txt").write_text(str(found), encoding="utf-8")
        (folder / "engine.py").write_text(
            ENGINE.format(index=str(folder / "index.txt")), encoding="utf-8"
        )
        outcome = run_nightly(load_project(path), db_url=db_url, log=lambda _step: None)
        assert outcome.exit_code in (0, 1)
    return path, db_url


def _replays(cli: Cli, *args: str) -> list[dict[str, Any]]:
    result = cli("gates", "backtest", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _the_replay_opens_what_the_nights_opened(cli: Cli, history: tuple[Path, str]) -> None:
    path, url = history
    (replay,) = _replays(cli, "--project", str(path), "--db", url)
    assert (replay["config"], replay["test_set"], replay["gate"]) == ("main", "topics", "nDCG@10")
    assert replay["nights"] == len(NIGHTS) - 1  # the first night adopted the baseline
    store = Store.open(url)
    try:
        stored = store.list_alerts(config="main")
    finally:
        store.close()
    opened = sorted((a for a in stored if a.kind != "operational"), key=lambda a: a.id)
    assert len(replay["alerts"]) == len(opened) == 2
    for replayed, alert in zip(replay["alerts"], opened, strict=True):
        assert replayed["kind"] == alert.kind == "regression"
        assert (replayed["resolved_at"] is None) == (alert.resolved_at is None)
    false, step = replay["alerts"]
    assert false["false_alarm"] and false["nights"] == 1
    assert not step["false_alarm"] and step["nights"] == 2 and step["resolved_at"] is None
    assert replay["persisted"] == 1
    alarms = replay["false_alarms"]
    assert (alarms["alarms"], alarms["nights"]) == (1, 7)
    assert alarms["low"] < 1 / 7 < alarms["high"]


def _a_proposed_file_replays_its_own_rule(
    cli: Cli, history: tuple[Path, str], tmp_path: Path
) -> None:
    path, url = history
    proposed = tmp_path / "proposed.toml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("max_drop = 0.01", "max_drop = 0.01\nconsecutive = 2")
    proposed.write_text(text.replace('qrels = "', f'qrels = "{path.parent}/').replace(
        'queries = "', f'queries = "{path.parent}/'), encoding="utf-8")  # fmt: skip
    (replay,) = _replays(cli, "--project", str(proposed), "--db", url)
    # one night of A/A noise no longer opens; the step, two nights long, does
    assert [a["false_alarm"] for a in replay["alerts"]] == [False]
    assert replay["false_alarms"]["alarms"] == 1  # the night still regressed; no alert came of it


def _suggest_silences_the_aa_nights_and_keeps_the_step(cli: Cli, history: tuple[Path, str]) -> None:
    path, url = history
    result = cli("gates", "backtest", "--project", str(path), "--db", url, "--suggest",
                 "--target", "0", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (found,) = json.loads(result.stdout)
    assert found["key"] == "max_drop"
    assert found["value"] == pytest.approx(0.2)  # the A/A night's drop: 6 of 30 topics lost
    assert found["before"]["false_alarms"]["alarms"] == 1
    after = found["after"]
    assert after["threshold"]["max_drop"] == found["value"]
    assert after["false_alarms"]["alarms"] == 0
    assert [a["false_alarm"] for a in after["alerts"]] == [False]  # the step is still caught


def _the_table_and_bad_options(cli: Cli, history: tuple[Path, str]) -> None:
    path, url = history
    shown = cli("gates", "backtest", "--project", str(path), "--db", url)
    assert shown.exit_code == 0
    assert "nDCG@10" in shown.stdout and "1 of 7" in shown.stdout
    refused = cli("gates", "backtest", "--project", str(path), "--db", url, "--target", "0.1")
    assert refused.exit_code == 2 and "--suggest" in refused.stderr
    unknown = cli("gates", "backtest", "--project", str(path), "--db", url, "--config", "nope")
    assert unknown.exit_code == 2 and "nope" in unknown.stderr
