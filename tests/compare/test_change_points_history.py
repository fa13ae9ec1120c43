"""Change points through the real store, ``evalplat history`` and the history page: planted steps
land on their nights, a step on new judgments and a step every config takes on one night are
the test set's, a step of one config with a new version is the config's."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from evalplat.reports.gather import gather_history
from evalplat.reports.history_render import history_html
from evalplat.reports.site import history_path
from evalplat.store import EvaluationRecord, Store
from tests.compare.helpers import date_a_day_apart

from .helpers import one_query_content

NIGHTS = 30
JUDGMENTS_NIGHT = 10  # new judgments: both configs step
DENSE_NIGHT = 17  # a new dense version: dense alone steps
BOTH_NIGHT = 24  # both configs step on one night, on the same test set version
LAST = datetime(2026, 4, 30, 3, 0, tzinfo=UTC)


def _series(level: float, seed: int, steps: dict[int, float]) -> list[float]:
    values = np.random.default_rng(seed).normal(level, 0.004, NIGHTS)
    for night, size in steps.items():
        values[night:] += size
    return [float(v) for v in values]


def _season(store: Store) -> dict[str, list[int]]:
    """Thirty nights of bm25 and dense on ``small``, dated a day apart, with the planted steps."""
    store.import_test_set("small", one_query_content(0))
    store.add_config("bm25", "python", {"function": "json:loads"})
    store.add_config("dense", "python", {"function": "json:dumps"})
    values = {
        "bm25": _series(0.40, 1, {JUDGMENTS_NIGHT: -0.06, BOTH_NIGHT: 0.05}),
        "dense": _series(0.55, 2, {JUDGMENTS_NIGHT: -0.06, DENSE_NIGHT: 0.07, BOTH_NIGHT: 0.05}),
    }
    runs: dict[str, list[int]] = {"bm25": [], "dense": []}
    for night in range(NIGHTS):
        if night == JUDGMENTS_NIGHT:
            store.import_test_set("small", one_query_content(2))
        if night == DENSE_NIGHT:
            store.add_config("dense", "python", {"function": "json:dumps", "note": "v2"})
        version = store.test_set_version_id("small")
        for config in ("bm25", "dense"):
            run = store.create_run(store.config_version_id(config), version, depth=10,
                                   queries_total=1)  # fmt: skip
            value = values[config][night]
            scores = EvaluationRecord(version, [("nDCG@10", "q1", value)], {"nDCG@10": (value, 1)})
            store.finish_run(run, "complete", evaluation=scores)
            runs[config].append(run)
    for config_runs in runs.values():
        date_a_day_apart(store, config_runs, LAST)
    return runs


def test_change_points_land_on_the_planted_nights_and_are_labelled(
    store: Store, db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    runs = _season(store)
    found = store.change_points("small", ["nDCG@10"])
    labelled = {
        config: [(runs[config].index(c.run_id), c.owner, c.reason) for c in by_metric["nDCG@10"]]
        for config, by_metric in found.items()
    }
    assert labelled == {
        "bm25": [
            (JUDGMENTS_NIGHT, "test set", "judgments changed (v1 → v2)"),
            (BOTH_NIGHT, "test set", "every config stepped (2)"),
        ],
        "dense": [
            (JUDGMENTS_NIGHT, "test set", "judgments changed (v1 → v2)"),
            (DENSE_NIGHT, "config", "config v2"),
            (BOTH_NIGHT, "test set", "every config stepped (2)"),
        ],
    }
    # ``history --json``: the change point rides on the first run after it, null elsewhere
    rows = json.loads(cli("history", "dense", "--json", "--db", db_url).stdout)
    marked = {row["run_id"]: row["change_point"] for row in rows if row["change_point"]}
    assert sorted(marked) == [runs["dense"][n] for n in (JUDGMENTS_NIGHT, DENSE_NIGHT, BOTH_NIGHT)]
    step = marked[runs["dense"][DENSE_NIGHT]]
    assert step["night"] == "2026-04-18" and step["metric"] == "nDCG@10"
    assert step["size"] == step["after"] - step["before"] and 0.06 < step["size"] < 0.08
    assert all("change_point" in row for row in rows) and len(rows) == NIGHTS
    # the table marks the same runs, with the same words
    table = cli("history", "dense", "--db", db_url).stdout
    lines = {
        line.split("│")[1].strip(" *"): line for line in table.splitlines() if line.count("│") > 2
    }
    assert "config: config v2" in lines[str(runs["dense"][DENSE_NIGHT])]
    assert "test set: judgments changed" in lines[str(runs["dense"][JUDGMENTS_NIGHT])]
    assert sum("▲" in line or "▼" in line for line in lines.values()) == 3
    assert "change point ▲/▼" in table
    # the history page reads the same change points: a line on the chart, a row in the table
    [page] = gather_history(store, "dense")
    assert page.change_points["nDCG@10"] == tuple(found["dense"]["nDCG@10"])
    html = history_html(page)
    assert html.count('<g class="c-change">') == 3
    owners = re.findall(r'<tr data-run="(\d+)" data-owner="([^"]+)">', html)
    assert owners == [
        (str(runs["dense"][JUDGMENTS_NIGHT]), "test set"),
        (str(runs["dense"][DENSE_NIGHT]), "config"),
        (str(runs["dense"][BOTH_NIGHT]), "test set"),
    ]
    # the site ``report site`` writes: bm25's page marks its two steps, both the test set's
    written = cli("report", "site", "--out", str(tmp_path / "site"), "--db", db_url)
    assert written.exit_code == 0, written.stderr
    bm25 = (tmp_path / "site" / history_path("bm25", "small")).read_text(encoding="utf-8")
    assert bm25.count('<g class="c-change">') == 2
    assert re.findall(r'data-owner="([^"]+)"', bm25) == ["test set", "test set"]


def test_quiet_nights_have_no_change_point(
    store: Store, db_url: str, cli: Callable[..., Any]
) -> None:
    store.import_test_set("small", one_query_content(0))
    store.add_config("bm25", "python", {"function": "json:loads"})
    version = store.test_set_version_id("small")
    runs = []
    for value in _series(0.4, 3, {}):
        run = store.create_run(store.config_version_id("bm25"), version, depth=10, queries_total=1)
        scores = EvaluationRecord(version, [("nDCG@10", "q1", value)], {"nDCG@10": (value, 1)})
        store.finish_run(run, "complete", evaluation=scores)
        runs.append(run)
    date_a_day_apart(store, runs, LAST)
    rows = json.loads(cli("history", "bm25", "--json", "--db", db_url).stdout)
    assert [row["change_point"] for row in rows] == [None] * NIGHTS
    assert "change point ▲/▼" not in cli("history", "bm25", "--db", db_url).stdout
    [page] = gather_history(store, "bm25")
    assert page.change_points == {} and "Change points" not in history_html(page)
