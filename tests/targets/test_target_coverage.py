"""Targets honour judged coverage as gates do: a miss that would not be one if the unjudged
documents in the run's top k were relevant (the optimistic bound) is ``needs_judgments``, kept
as such, passes ``--fail-on-target`` and opens no target alert; a miss on judged documents stays
``missed``. On both databases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.comparison.targets import parse_target
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer
from ..compare.helpers import content, store_run
from ..nightly.small_project import write_project

QUERIES = 30
METRICS = ["P@5", "P@10", "nDCG@10"]


def ranked(docs: list[str]) -> dict[str, list[str]]:
    """The same ranking shape for every query: ``d0`` is judged relevant, ``nI`` judged not
    relevant, ``uI`` unjudged."""
    return {f"q{n:02d}": [f"q{n:02d}-{d}" for d in docs] for n in range(QUERIES)}


def test_a_miss_on_unjudged_documents_needs_judgments_and_a_judged_miss_is_missed(
    db_url: str, cli: Callable[..., Any]
) -> None:
    with Store.open(db_url) as store:
        store.import_test_set("shop", content(QUERIES, relevant=1))
        base = store_run(store, "engine", "shop", ranked(["d0", "n0", "n1", "n2", "n3"]),
                         metrics=METRICS)  # fmt: skip
        # P@5 = 0.2 on the stored scores either way; 1.0 if the four unjudged were relevant
        sparse = store_run(store, "engine", "shop", ranked(["d0", "u1", "u2", "u3", "u4"]),
                           label="v2", metrics=METRICS)  # fmt: skip
        [judged] = store.check_targets(base, [parse_target("P@5>=0.9")], record=True)
        [unjudged] = store.check_targets(sparse, [parse_target("P@5>=0.9")], record=True)
        kept = store.target_verdicts([base, sparse])
    assert (judged.verdict, judged.value) == ("missed", pytest.approx(0.2))
    assert (unjudged.verdict, unjudged.value) == ("needs_judgments", pytest.approx(0.2))
    assert unjudged.ci_high == pytest.approx(0.2)  # the figures shown stay the stored ones
    assert [kept[base][0].verdict, kept[sparse][0].verdict] == ["missed", "needs_judgments"]
    # a target the bound itself misses stays missed: P@10 is at most 0.5 with five results
    with Store.open(db_url) as store:
        [beyond] = store.check_targets(sparse, [parse_target("P@10>=0.9")])
    assert (beyond.verdict, beyond.value) == ("missed", pytest.approx(0.1))

    def compare(candidate: int) -> tuple[int, dict[str, Any]]:
        result = cli("compare", str(base), str(candidate), "--target", "P@5>=0.9",
                     "--fail-on-target", "--json", "--db", db_url)  # fmt: skip
        [row] = json.loads(result.stdout)["targets"]
        return result.exit_code, row

    code, row = compare(sparse)
    assert (code, row["target_verdict"]) == (0, "needs_judgments")
    code, row = compare(base)
    assert (code, row["target_verdict"]) == (1, "missed")


def test_a_night_whose_miss_turns_on_unjudged_documents_opens_no_target_alert(
    db_url: str, tmp_path: Path, capture: CaptureServer
) -> None:
    """``unjudged`` answers two documents nobody judged: nDCG@10 0 on the stored scores, 0.77
    if they were relevant. ``bad`` answers two judged non-relevant ones: a miss either way."""
    targets = '\n[[targets]]\nmetric = "nDCG@10"\nmin = 0.7\n'

    def night(mode: str) -> tuple[int, str]:
        path = write_project(tmp_path / "project", {"alpha": mode}, hook=f"{capture.url}/ok",
                             extra_alerts=targets)  # fmt: skip
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append,
                              fail_on_target=True)  # fmt: skip
        [step] = [s for s in steps if s["step"] == "target"]
        return outcome.exit_code, str(step["target_verdict"])

    def target_events() -> list[str]:
        return [a["event"] for r in capture.accepted("/ok") for a in r.body["alerts"]
                if a["kind"] == "target"]  # fmt: skip

    assert night("unjudged") == (0, "needs_judgments")
    assert target_events() == []
    index = (tmp_path / "project" / "site" / "index.html").read_text(encoding="utf-8")
    assert "0 met · 0 at risk · 0 missed · " in index and ">1 need judgments<" in index
    assert night("bad") == (1, "missed")
    assert target_events() == ["opened"]
    # the miss turning on unjudged documents neither confirms nor ends the open alert
    assert night("unjudged") == (0, "needs_judgments")
    with Store.open(db_url) as store:
        [alert] = [a for a in store.list_alerts() if a.kind == "target"]
        assert alert.state == "open"
    assert night("good") == (0, "met")
    assert target_events() == ["opened", "resolved"]
