"""Operational facts travel with the comparison: a candidate whose engine returns nothing for
most queries is said so by ``compare`` (text and JSON), on the comparison page and in the
alert a real webhook receives; a healthy pair says nothing of the kind."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project

from ..alerts.servers import CaptureServer
from .small_project import QUERIES, write_project

# ``sparse``: the relevant document for topics 1..5, nothing at all for the other topics;
# ``unjudged``: two documents nobody judged, for every topic
SPARSE_ENGINE = """

def search(query, depth, mode="good", **params):
    topic = int(query.split()[-1])
    if mode == "sparse" and topic > 5:
        return []
    if mode == "unjudged":
        return [("u" + str(topic), 2.0), ("v" + str(topic), 1.0)]
    return [("d" + str(topic), 3.0), ("n1", 2.0), ("n2", 1.0)]
"""


Night = Callable[[dict[str, str]], tuple[int, list[dict[str, Any]]]]


@pytest.fixture
def night(db_url: str, tmp_path: Path, capture: CaptureServer) -> Night:
    def run(modes: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
        folder = tmp_path / "project"
        path = write_project(folder, modes, hook=f"{capture.url}/ok")
        (folder / "engine.py").write_text(SPARSE_ENGINE, encoding="utf-8")
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        return outcome.exit_code, steps

    return run


def compared(steps: list[dict[str, Any]], config: str) -> dict[str, Any]:
    return next(s for s in steps if s["step"] == "compare" and s["config"] == config)


def test_a_candidate_that_returns_nothing_is_said_so_everywhere(
    night: Night,
    capture: CaptureServer,
    tmp_path: Path,
    db_url: str,
    cli: Callable[..., Any],
) -> None:
    assert night({"shop": "good", "steady": "good"})[0] == 0
    code, steps = night({"shop": "sparse", "steady": "good"})
    assert code == 1
    shop, steady = compared(steps, "shop"), compared(steps, "steady")
    empty = QUERIES - 5
    sentence = f"{empty} of {QUERIES} queries returned nothing (run {shop['candidate_run']})"

    # the alert, as the webhook received it: the details' facts and the rendered text
    [request] = capture.accepted("/ok")
    [alert] = request.body["alerts"]
    assert (alert["kind"], alert["event"], alert["config"]) == ("regression", "opened", "shop")
    [fact] = alert["facts"]
    assert (fact["kind"], fact["sentence"], fact["side"], fact["new"]) == (
        "zero_results", sentence, "candidate", True
    )  # fmt: skip
    assert (fact["figures"]["empty"], fact["figures"]["answered"]) == (empty, QUERIES)
    assert f"Run facts  {sentence}; new in the candidate" in alert_text(request.body["text"])

    # the comparison page the nightly wrote, and the healthy config's page
    site = tmp_path / "project" / "site" / "compare"
    page = (site / f"compare-{shop['comparison']}.html").read_text(encoding="utf-8")
    block = re.search(r'<section[^>]*aria-label="operational facts".*?</section>', page, re.S)
    assert block is not None
    assert 'data-fact-kind="zero_results" data-fact-side="candidate"' in block.group(0)
    assert sentence in block.group(0)
    healthy = (site / f"compare-{steady['comparison']}.html").read_text(encoding="utf-8")
    assert "operational facts" not in healthy and "data-fact-kind" not in healthy

    # compare, text and JSON, on the same two runs; and on the healthy pair
    runs = (str(shop["baseline_run"]), str(shop["candidate_run"]))
    text = cli("compare", *runs, "--db", db_url)
    assert text.exit_code == 0, text.stderr
    assert f"facts     {sentence}; new in the candidate" in text.stdout
    as_json = cli("compare", *runs, "--db", db_url, "--json")
    assert as_json.exit_code == 0, as_json.stderr
    [fact] = json.loads(as_json.stdout)["facts"]
    assert (fact["kind"], fact["sentence"], fact["run"]) == (
        "zero_results", sentence, shop["candidate_run"]
    )  # fmt: skip
    calm = (str(steady["baseline_run"]), str(steady["candidate_run"]))
    assert "facts" not in cli("compare", *calm, "--db", db_url).stdout
    assert json.loads(cli("compare", *calm, "--db", db_url, "--json").stdout)["facts"] == []


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_a_judged_share_that_collapses_is_said_in_the_alert_and_by_compare(
    night: Night, capture: CaptureServer, db_url: str, cli: Callable[..., Any]
) -> None:
    assert night({"fresh": "good"})[0] == 0
    code, steps = night({"fresh": "unjudged"})
    assert code == 0  # a drop only unjudged documents explain is not a regression
    fresh = compared(steps, "fresh")
    runs = (fresh["baseline_run"], fresh["candidate_run"])
    # the baseline showed three judged documents per topic, the candidate two unjudged ones
    sentence = f"judged share of the top 10 fell from 1.00 to 0.00 (run {runs[0]} → run {runs[1]})"
    [request] = capture.accepted("/ok")
    [alert] = request.body["alerts"]
    assert (alert["kind"], alert["event"]) == ("needs_judgments", "opened")
    [fact] = alert["facts"]
    assert (fact["kind"], fact["sentence"], fact["new"]) == ("judged_fell", sentence, True)
    assert (fact["figures"]["baseline"], fact["figures"]["candidate"]) == (1.0, 0.0)
    shown = cli("compare", *map(str, runs), "--db", db_url)
    assert f"facts     {sentence}; new in the candidate" in shown.stdout


def alert_text(text: str) -> str:
    """The webhook's text with runs of spaces after a label squeezed to two."""
    return re.sub(r"(Run facts) +", r"\1  ", text)
