"""History charts draw a metric's target and shade the side that misses it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalplat.reports.charts import LinePoint, line_chart


def _points(values: list[float]) -> list[LinePoint]:
    return [LinePoint(label=f"05-{i + 1:02d}", value=v) for i, v in enumerate(values)]


def _y(svg: str, css: str, attribute: str) -> float:
    match = re.search(rf'class="{css}"[^>]* {attribute}="([0-9.]+)"', svg)
    assert match is not None, svg
    return float(match.group(1))


def test_a_min_target_shades_below_its_line_and_widens_the_axis() -> None:
    svg = line_chart(_points([0.6, 0.62, 0.61]), label="nDCG@10", target=("min", 0.85),
                     floor=0.0, ceiling=1.0, height=200)  # fmt: skip
    line_y = _y(svg, "c-target", "y1")
    shade_top = _y(svg, "c-miss", "y")
    shade_height = _y(svg, "c-miss", "height")
    assert shade_top == line_y and shade_top + shade_height == 200 - 28  # down to the x axis
    assert "target: at least 0.85" in svg
    assert ">0.8<" in svg or ">0.9<" in svg  # the axis reaches the target, above the data


def test_a_max_target_shades_above_its_line() -> None:
    svg = line_chart(_points([120.0, 150.0, 240.0]), label="Latency(p=95)",
                     target=("max", 200.0), floor=0.0)  # fmt: skip
    assert _y(svg, "c-miss", "y") == 12  # from the top of the plot
    assert _y(svg, "c-miss", "height") == _y(svg, "c-target", "y1") - 12
    assert "target: at most 200" in svg


def test_no_target_draws_nothing_extra() -> None:
    svg = line_chart(_points([0.6, 0.62]), label="nDCG@10")
    assert "c-target" not in svg and "c-miss" not in svg


def test_history_draws_only_the_targets_in_force_now() -> None:
    from evalplat.comparison.targets import Target, TargetVerdict
    from evalplat.reports.data import HistoryRun, RunHeader
    from evalplat.reports.gather import with_targets

    header = RunHeader(1, "prod", 1, None, "python", "topics", 1, "complete", "nightly",
                       "2026-05-01 03:00 UTC", None, 30, 0)  # fmt: skip
    runs = [HistoryRun(header, {"nDCG@10": 0.6, "P@5": 0.4}, False, None)]
    kept = {1: [TargetVerdict(Target("nDCG@10", "min", 0.85), 0.6, 0.5, 0.7, "missed"),
                TargetVerdict(Target("P@5", "min", 0.3), 0.4, 0.3, 0.5, "met")]}  # fmt: skip
    assert set(with_targets(runs, kept)) == {"nDCG@10", "P@5"}  # no project: every kept one
    # the project dropped its nDCG@10 target: its kept verdicts draw no line any more
    assert set(with_targets(runs, kept, {"P@5"})) == {"P@5"}
    assert with_targets(runs, kept, set()) == {}


def test_a_target_removed_from_the_project_leaves_the_history_page(
    db_url: str, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    from evalplat.nightly.job import run_nightly
    from evalplat.nightly.project import load_project

    from ..nightly.small_project import write_project

    target = '\n[[targets]]\nmetric = "nDCG@10"\nmin = 0.7\n'
    folder = tmp_path / "project"
    path = write_project(folder, {"alpha": "good"}, extra_alerts=target)
    assert run_nightly(load_project(path), db_url=db_url).exit_code == 0
    page = folder / "site" / "history" / "alpha--topics.html"
    assert "c-target" in page.read_text(encoding="utf-8")
    write_project(folder, {"alpha": "good"})  # the team dropped the target
    site = tmp_path / "again"
    written = cli("report", "site", "--out", str(site), "--project", str(path), "--db", db_url)
    assert written.exit_code == 0, written.stderr
    text = (site / "history" / "alpha--topics.html").read_text(encoding="utf-8")
    assert "c-target" not in text and "target: at least 0.7" not in text
