"""Targets on stored runs: ``compare --target``, ``runs show``, kept verdicts, and drift over the
runs of a window, on both databases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalplat.comparison.targets import Target, parse_target
from evalplat.errors import InputError
from evalplat.store import Store
from evalplat.store.base import utcnow

from ..compare.helpers import content, date_a_day_apart, store_run

QUERIES = 250


def first_k_relevant(k: int, queries: int = QUERIES) -> dict[str, list[str]]:
    """The relevant document first for the first ``k`` queries (nDCG@10 1), none for the rest
    (nDCG@10 0): the run's nDCG@10 is k / queries."""
    ids = [f"q{n:02d}" for n in range(queries)]
    return {q: ([f"{q}-d0"] if i < k else []) + [f"{q}-n0", f"{q}-n1"] for i, q in enumerate(ids)}


def two_runs(db_url: str, queries: int = 40) -> tuple[int, int]:
    with Store.open(db_url) as store:
        store.import_test_set("small", content(queries, relevant=1))
        base = store_run(store, "engine", "small", first_k_relevant(30, queries))
        cand = store_run(store, "engine", "small", first_k_relevant(20, queries), label="v2")
    return base, cand


def test_compare_fails_on_a_missed_target_and_passes_a_met_one(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    base, cand = two_runs(db_url)  # candidate nDCG@10 = 20/40 = 0.5
    junit = tmp_path / "gate.xml"
    missed = cli("compare", str(base), str(cand), "--target", "nDCG@10>=0.8", "--target",
                 "P@5<=0.9", "--fail-on-target", "--json", "--junit", str(junit), "--db",
                 db_url)  # fmt: skip
    assert "lower-is-better" not in missed.stderr
    assert missed.exit_code == 2 and "P@5 is higher-is-better" in missed.stderr
    assert not junit.exists()  # refused before anything is written
    missed = cli("compare", str(base), str(cand), "--target", "nDCG@10>=0.8",
                 "--fail-on-target", "--json", "--junit", str(junit), "--db", db_url)  # fmt: skip
    assert missed.exit_code == 1, missed.stderr
    [row] = json.loads(missed.stdout)["targets"]
    assert row["target"] == "nDCG@10>=0.8" and row["target_verdict"] == "missed"
    assert row["value"] == pytest.approx(0.5) and row["ci_low"] < 0.5 < row["ci_high"] < 0.8
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["nDCG@10>=0.8"].find("failure")
    assert failure is not None and failure.get("type") == "target"
    assert int(suite.get("failures") or 0) >= 1
    met = cli("compare", str(base), str(cand), "--target", "nDCG@10>=0.5", "--fail-on-target",
              "--db", db_url)  # fmt: skip
    assert met.exit_code == 0, met.stderr
    assert "target nDCG@10>=0.5" in met.stdout and " met" in met.stdout
    at_risk = cli("compare", str(base), str(cand), "--target", "nDCG@10>=0.55",
                  "--fail-on-target", "--json", "--db", db_url)  # fmt: skip
    assert at_risk.exit_code == 0  # only a credible miss fails CI
    assert json.loads(at_risk.stdout)["targets"][0]["target_verdict"] == "at_risk"


def test_runs_show_reports_kept_and_given_targets(db_url: str, cli: Callable[..., Any]) -> None:
    _, cand = two_runs(db_url)
    with Store.open(db_url) as store:
        store.check_targets(cand, [parse_target("P@5>=0.9")], record=True)
        assert store.target_verdicts([cand])[cand][0].verdict == "missed"
    shown = cli("runs", "show", str(cand), "--target", "nDCG@10>=0.4", "--json", "--db", db_url)
    assert shown.exit_code == 0, shown.stderr
    rows = {r["metric"]: r for r in json.loads(shown.stdout)["targets"]}
    assert rows["P@5"]["target_verdict"] == "missed" and rows["P@5"]["target"] == "P@5>=0.9"
    assert rows["nDCG@10"]["target_verdict"] == "met"
    assert {"target", "target_verdict", "ci_low", "ci_high"} <= set(rows["nDCG@10"])
    text = cli("runs", "show", str(cand), "--db", db_url)
    assert "target P@5>=0.9" in text.stdout and "missed" in text.stdout


def test_a_target_on_a_metric_the_run_lacks_says_how_to_score_it(db_url: str) -> None:
    _, cand = two_runs(db_url)
    with Store.open(db_url) as store, pytest.raises(InputError, match="has no scores of RR"):
        store.check_targets(cand, [parse_target("RR>=0.5")])


def _nights(store: Store, figures: list[int]) -> None:
    """One run a night for each figure, the last of them now: the trend is a slope against
    start times."""
    store.import_test_set("big", content(QUERIES, relevant=1))
    stored = [
        store_run(store, "slider", "big", first_k_relevant(k), metrics=["nDCG@10"]) for k in figures
    ]
    date_a_day_apart(store, stored, utcnow().replace(microsecond=0))


SLIDE = Target("nDCG@10", "min", 0.5, max_slide=0.02, window="30d")


def test_a_slide_of_0_004_a_night_over_30_runs_is_flagged_as_drift(db_url: str) -> None:
    noise = np.random.default_rng(5).integers(-2, 3, 30)  # ± 0.008 around the line
    with Store.open(db_url) as store:
        _nights(store, [int(225 - n + e) for n, e in enumerate(noise)])  # 0.9 → 0.784
        trend = store.target_drift("slider", "big", SLIDE)
    assert trend.runs == 30 and trend.drifting
    assert trend.slope_per_day < 0 and trend.change == pytest.approx(-0.116, abs=0.02)
    assert trend.p_value < 1e-6


def test_thirty_runs_of_pure_noise_are_not_drift(db_url: str) -> None:
    noise = np.random.default_rng(5).integers(-5, 6, 30)  # ± 0.02, no trend
    with Store.open(db_url) as store:
        _nights(store, [int(200 + e) for e in noise])
        trend = store.target_drift("slider", "big", SLIDE)
    assert trend.runs == 30 and not trend.drifting
    assert abs(trend.change) < 0.02


@pytest.mark.parametrize(
    ("target", "expected", "code"),
    [("ZeroResult<=0.01", "missed", 1), ("Coverage>=0.1", "met", 0)],
)
def test_compare_judges_a_target_on_a_measure_of_run_records_on_its_figure(
    db_url: str, cli: Callable[..., Any], target: str, expected: str, code: int
) -> None:
    queries = 40
    metrics = ["nDCG@10", "ZeroResult", "Coverage"]
    answered = first_k_relevant(30, queries)
    half_empty = {q: (docs if i % 2 else []) for i, (q, docs) in enumerate(answered.items())}
    with Store.open(db_url) as store:
        store.import_test_set("small", content(queries, relevant=1))
        base = store_run(store, "engine", "small", answered, metrics=metrics)
        cand = store_run(store, "engine", "small", half_empty, label="v2", metrics=metrics)
    result = cli("compare", str(base), str(cand), "--metric", "nDCG@10", "--target", target,
                 "--fail-on-target", "--json", "--db", db_url)  # fmt: skip
    assert result.exit_code == code, result.stderr
    assert "Traceback" not in result.stderr
    [row] = json.loads(result.stdout)["targets"]
    assert row["target"] == target and row["target_verdict"] == expected
    assert row["value"] == pytest.approx(0.5)  # half the queries answered nothing
