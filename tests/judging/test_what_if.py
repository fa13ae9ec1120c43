"""``judge calibrate`` replays recent comparisons with the model's grades, and writes a page.

Two runs of the world's test set, both fully judged by people: ``good`` ranks each query's
documents d3, d2, d1, d0 (grades 3, 2, 1, 0: the ideal order) and ``bad`` the reverse. People's
grades make ``bad`` a regression against ``good``; a judge that inverts every grade (3 - g)
makes it an improvement, and the replay must say the verdict changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .chat_server import ChatServer
from .world import HUMAN, QUERIES, JudgeWorld


def _compare_two_runs(w: JudgeWorld, cli: Callable[..., Any]) -> int:
    for name, order in (("good", range(HUMAN - 1, -1, -1)), ("bad", range(HUMAN))):
        lines = [
            f"q{q} Q0 q{q}-d{i} {rank} {10 - rank} {name}"
            for q in range(1, QUERIES + 1)
            for rank, i in enumerate(order, start=1)
        ]
        path = w.folder / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n")
        result = cli("import-run", str(path), "--config", name, "-t", "small", "--db", w.url)
        assert result.exit_code == 0, result.stderr
    compared = cli("compare", "good@latest", "bad@latest", "-m", "nDCG@10", "--json", "--db", w.url)
    assert compared.exit_code in (0, 1), compared.stderr
    data = json.loads(compared.stdout)
    [metric] = [m for m in data["metrics"] if m["metric"] == "nDCG@10"]
    assert metric["verdict"] == "regression"
    return int(data["id"])


def _calibrate(w: JudgeWorld, cli: Callable[..., Any], *extra: str) -> Any:
    args = ["judge", "calibrate", "stub", "-t", "small", "-p", str(w.project), "--db", w.url]
    return cli(*args, *extra)


def test_an_inverting_judge_would_turn_a_regression_into_an_improvement(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
    tmp_path: Path,
) -> None:
    w = make_world()
    comparison = _compare_two_runs(w, cli)
    server.invert = True
    page = tmp_path / "calibration.html"
    result = _calibrate(w, cli, "--json", "--report", str(page))
    assert result.exit_code == 0, result.stderr
    [replay] = json.loads(result.stdout)["what_if"]
    assert (replay["comparison_id"], replay["replaced"], replay["skipped"]) == (
        comparison,
        QUERIES * HUMAN,
        None,
    )
    [metric] = replay["metrics"]
    assert metric["metric"] == "nDCG@10"
    assert (metric["human_verdict"], metric["model_verdict"], metric["changed"]) == (
        "regression",
        "improvement",
        True,
    )
    # inverted grades mirror the two orders: the model's delta is the people's, negated
    assert metric["human_delta"] < 0 and metric["model_delta"] == -metric["human_delta"]
    html = page.read_text(encoding="utf-8")
    assert "refused for gating" in html and "<strong>changed</strong>" in html
    assert "run " in html and "good@1" in html

    text = _calibrate(w, cli).stdout
    assert "nDCG@10: " in text and "regression -> " in text and "improvement  CHANGED" in text


def test_a_faithful_judge_changes_no_verdict_and_zero_comparisons_replays_none(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
) -> None:
    w = make_world()
    _compare_two_runs(w, cli)
    data = json.loads(_calibrate(w, cli, "--json").stdout)
    [metric] = data["what_if"][0]["metrics"]
    assert metric["changed"] is False
    assert metric["human_delta"] == metric["model_delta"] < 0
    assert json.loads(_calibrate(w, cli, "--json", "--comparisons", "0").stdout)["what_if"] == []
    refused = _calibrate(w, cli, "--comparisons", "-1")
    assert refused.exit_code == 2 and "--comparisons must be at least 0, got -1" in refused.stderr
