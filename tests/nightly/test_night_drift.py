"""Drift through the nightly job: a slide of 0.004 a night over 30 nights, that no night's
gate catches, opens a ``drift`` alert; 30 nights of pure noise do not. On both databases.

Nights 1 to 29 are stored through the store's API (the rankings a searcher answering the first
K topics gives, scored as a run is), so that the test stays fast, and dated a day apart, as
nightly runs are; night 30 is a real nightly over the project file, whose target step reads the
trend of all 30 and feeds the alert. The trend is a slope against the runs' start times, so
stored nights left at the moments they were written would give a change that depends on how
busy the machine was."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store
from evalplat.store.base import utcnow
from evalplat.testsets.content import load_testset

from ..alerts.servers import CaptureServer
from ..compare.helpers import date_a_day_apart, store_run
from .small_project import write_project

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page

TOPICS = 250  # one topic more or less moves nDCG@10 by 0.004
DRIFT = """
[[targets]]
metric = "nDCG@10"
min = 0.5
max_slide = 0.02
window = "30d"
"""


def first_k(k: int) -> dict[str, list[str]]:
    """What the project's searcher answers in mode ``first{k}``: nDCG@10 = k / TOPICS."""
    return {str(n): ([f"d{n}"] if n <= k else []) + ["n1", "n2"] for n in range(1, TOPICS + 1)}


def thirty_nights(
    folder: Path, db_url: str, hook: str, answered: list[int]
) -> tuple[int, list[dict[str, Any]]]:
    """Store nights 1..29 answering ``answered[:29]`` topics, then run night 30 for real."""
    path = write_project(folder, {"alpha": f"first{answered[-1]}"}, hook=hook, extra_alerts=DRIFT)
    (folder / "queries.tsv").write_text(
        "".join(f"{n}\ttopic {n}\n" for n in range(1, TOPICS + 1)), encoding="utf-8"
    )
    (folder / "qrels.txt").write_text(
        "".join(f"{n} 0 d{n} 1\n{n} 0 n1 0\n{n} 0 n2 0\n" for n in range(1, TOPICS + 1)),
        encoding="utf-8",
    )
    # a baseline gate that tolerates any drop: only the trend can say something is wrong
    path.write_text(path.read_text(encoding="utf-8").replace("max_drop = 0.01", "max_drop = 0.99"))
    with Store.open(db_url) as store:
        store.import_test_set(
            "topics", load_testset(folder / "qrels.txt", queries=folder / "queries.tsv")
        )
        stored = [
            store_run(store, "alpha", "topics", first_k(k), metrics=["nDCG@10", "P@5"])
            for k in answered[:-1]
        ]
        # night n of 30 ran 30 - n days before the real night 30
        date_a_day_apart(store, stored, utcnow().replace(microsecond=0) - timedelta(days=1))
    steps: list[dict[str, Any]] = []
    outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
    return outcome.exit_code, steps


def drift_alerts(capture: CaptureServer) -> list[tuple[str, str]]:
    return [
        (a["event"], a["target"])
        for request in capture.accepted("/ok")
        for a in request.body["alerts"]
        if a["kind"] == "drift"
    ]


def test_a_slide_of_0_004_a_night_opens_a_drift_alert(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    noise = np.random.default_rng(5).integers(-2, 3, 30)  # ± 0.008 around the line
    answered = [int(225 - n + e) for n, e in enumerate(noise)]  # 0.9 → 0.784
    code, steps = thirty_nights(tmp_path, db_url, f"{capture.url}/ok", answered)
    assert code == 0  # no gate failed: the baseline gate tolerates the drop
    [compare] = [s for s in steps if s["step"] == "compare"]
    assert compare["verdicts"]["nDCG@10"] != "regression"
    [drift] = [s for s in steps if s["step"] == "drift"]
    assert drift["runs"] == 30 and drift["drifting"] is True
    assert drift["change"] == pytest.approx(-0.116, abs=0.02) and drift["p_value"] < 1e-6
    [(event, text)] = drift_alerts(capture)
    assert event == "opened"
    assert text.startswith("nDCG@10>=0.5, max slide 0.02 over 30d: -0.1") and "30 runs" in text
    with Store.open(db_url) as store:
        [alert] = [a for a in store.list_alerts() if a.kind == "drift"]
        assert (alert.state, alert.metric, alert.config) == ("open", "nDCG@10", "alpha")


def test_thirty_nights_of_pure_noise_open_no_drift_alert(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    noise = np.random.default_rng(5).integers(-5, 6, 30)  # ± 0.02, no trend
    code, steps = thirty_nights(
        tmp_path, db_url, f"{capture.url}/ok", [200 + int(e) for e in noise]
    )
    assert code == 0
    [drift] = [s for s in steps if s["step"] == "drift"]
    assert drift["runs"] == 30 and drift["drifting"] is False and abs(drift["change"]) < 0.02
    assert drift_alerts(capture) == []
    with Store.open(db_url) as store:
        assert [a for a in store.list_alerts() if a.kind == "drift"] == []
