"""Gates that let a calibrated judge's grades in, on the planted case of ``planted.py``, against
the tests' chat-completions server, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .chat_server import ChatServer
from .planted import UNJUDGED, Planted, build


@pytest.fixture
def planted(db_url: str, tmp_path: Path, cli: Callable[..., Any], server: ChatServer) -> Planted:
    return build(tmp_path, db_url, cli, server.url)


def _compare(cli: Callable[..., Any], p: Planted, *extra: str) -> Any:
    return cli("compare", str(p.baseline), str(p.candidate), "--metric", "nDCG@10",
               "--max-drop", "0.01", "--db", p.url, *extra)  # fmt: skip


def _judge_and_rescore(cli: Callable[..., Any], p: Planted) -> None:
    judged = cli("judge", "stub", "-t", "planted", "--unjudged-of", str(p.candidate),
                 "-p", str(p.project), "--db", p.url, "--json")  # fmt: skip
    assert judged.exit_code == 0, judged.stderr
    assert json.loads(judged.stdout)["added"] == UNJUDGED
    for run in (p.baseline, p.candidate):
        rescored = cli("rescore", str(run), "--testset", "planted@2", "--db", p.url)
        assert rescored.exit_code == 0, rescored.stderr


def _calibrate(cli: Callable[..., Any], p: Planted) -> dict[str, Any]:
    result = cli("judge", "calibrate", "stub", "-t", "planted", "--sample", "60",
                 "-p", str(p.project), "--db", p.url, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_a_calibrated_judge_turns_needs_judgments_into_a_regression_the_page_names(
    planted: Planted, cli: Callable[..., Any], tmp_path: Path, browser_page: Callable[[Path], Any]
) -> None:
    before = _compare(cli, planted, "--json")
    assert before.exit_code == 0, before.stderr
    assert json.loads(before.stdout)["verdict"] == "needs_judgments"

    _judge_and_rescore(cli, planted)
    calibration = _calibrate(cli, planted)
    assert calibration["gating"] is True and calibration["sources"][0]["weighted_kappa"] == 1.0

    # the version now holds model grades, but a gate that does not let them in ignores them
    plain = json.loads(_compare(cli, planted, "--json").stdout)
    row = plain["metrics"][0]
    assert plain["verdict"] == "needs_judgments" and plain["model_grades"] == []
    assert row["delta"] == pytest.approx(-1.0) and row["human_delta"] == pytest.approx(-1.0)
    assert (row["judge"], row["model_verdict"], row["model_decided"]) == (
        "stub",
        "regression",
        False,
    )

    page, junit = tmp_path / "page.html", tmp_path / "junit.xml"
    decided = _compare(cli, planted, "--unjudged", "judge", "--judge", "stub", "--json",
                       "--report", str(page), "--junit", str(junit),
                       "--fail-on-regression")  # fmt: skip
    assert decided.exit_code == 1, decided.stderr
    data = json.loads(decided.stdout)
    row = data["metrics"][0]
    assert data["verdict"] == "regression" and row["verdict"] == "regression"
    assert row["human_verdict"] == "needs_judgments" and row["model_decided"] is True
    # the baseline's top 10 holds 10 people's grades per query; the candidate's 3 of the judge's
    assert row["model_share"] == pytest.approx(UNJUDGED / (20 * 30))
    assert data["model_grades"] == ["nDCG@10: model grades: 15% of top-10 grades, judge stub"]
    # the figures shown stay the people's; the model's stand beside them
    assert row["delta"] == pytest.approx(-1.0) and row["model_delta"] == pytest.approx(-1.0)
    assert row["bound_verdict"] == "unchanged"

    failure = ET.parse(junit).getroot().find(".//testcase/failure")
    assert failure is not None and "model grades: 15% of top-10 grades, judge stub" in (
        failure.get("message") or ""
    )

    browser = browser_page(page)
    banner = browser.locator("section.banner[aria-label='verdict']").inner_text()
    assert "Model grades decided nDCG@10: judge stub's grades are 15.0 %" in banner
    # the figures are people's grades: the share of the candidate's top 10 people judged fell
    assert "judged" in browser.locator("section.op-facts").inner_text()
    assert "Scored on planted@2, people's grades." in browser.locator("main").inner_text()
    assert "needs judgments" in banner  # what people's grades alone would say
    table = browser.locator("table.model-views").inner_text()
    assert "model grades (judge)" in table


def test_counting_model_grades_as_grades_moves_the_figures_and_says_so(
    planted: Planted, cli: Callable[..., Any]
) -> None:
    _judge_and_rescore(cli, planted)
    _calibrate(cli, planted)
    result = _compare(cli, planted, "--unjudged", "grade", "--judge", "stub")
    assert result.exit_code == 0, result.stderr
    assert "people's grades only 1.0000 -> 0.0000" in result.stdout
    assert "nDCG@10: model grades: 15% of top-10 grades, judge stub decided the verdict" in (
        result.stdout
    )
    assert "verdict: regression" in result.stdout


def test_a_judge_below_its_floor_or_never_calibrated_is_refused_for_gating(
    planted: Planted, cli: Callable[..., Any], server: ChatServer
) -> None:
    _judge_and_rescore(cli, planted)
    never = _compare(cli, planted, "--unjudged", "judge", "--judge", "stub")
    assert never.exit_code == 2
    assert "judge stub was never calibrated" in never.stderr
    assert len(never.stderr.strip().splitlines()) == 1

    server.invert = True  # the judge now grades 3 - g: it disagrees with people
    calibration = _calibrate(cli, planted)
    assert calibration["gating"] is False
    refused = _compare(cli, planted, "--unjudged", "judge", "--judge", "stub")
    assert refused.exit_code == 2
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1
    assert "judge stub is refused for gating: weighted kappa" in line and "min_kappa" in line


def test_compare_refuses_a_model_mode_without_a_judge(
    planted: Planted, cli: Callable[..., Any]
) -> None:
    result = _compare(cli, planted, "--unjudged", "grade")
    assert result.exit_code == 2 and "--unjudged grade needs --judge NAME" in result.stderr
    result = _compare(cli, planted, "--unjudged", "sometimes")
    assert result.exit_code == 2 and "--unjudged must be one of" in result.stderr
