"""One run, one figure: a night whose judge adds model grades to the test set, and the index,
``history``, ``runs show``, ``runs list``, the comparison page and ``compare --json`` all show
the night's run with the same nDCG@10, scored on people's grades, each saying so."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project

from ..judging.chat_server import ChatServer, chat_server
from .small_project import QUERIES
from .test_night_judge import write_project

PEOPLE = "people's grades"


@pytest.fixture
def judge_server() -> Iterator[ChatServer]:
    with chat_server() as state:
        yield state


def _project(folder: Path, mode: str, judge_url: str) -> Path:
    """The judge's project, with the judge finding the odd topics' unjudged ``uN`` relevant:
    model grades that would lift the candidate's figure if they counted as grades."""
    path = write_project(folder, mode, judge_url, "http://127.0.0.1:9/none", 'judge = "stub"')
    docs = folder / "docs.jsonl"
    rows = [json.loads(line) for line in docs.read_text().splitlines()]
    for row in rows:
        if row["id"].startswith("u") and int(row["id"][1:]) % 2:
            row["text"] = row["text"].replace("GRADE=0", "GRADE=1")
    docs.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _json(cli: Callable[..., Any], *args: str) -> Any:
    result = cli(*args)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_one_run_shows_one_figure_on_every_surface_with_a_nightly_judge(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, judge_server: ChatServer
) -> None:
    folder = tmp_path / "p"
    path = _project(folder, "good", judge_server.url)
    imported = cli("testset", "import", "topics", "--qrels", str(folder / "qrels.txt"),
                   "--queries", str(folder / "queries.tsv"), "--docs", str(folder / "docs.jsonl"),
                   "--db", db_url)  # fmt: skip
    assert imported.exit_code == 0, imported.stderr
    calibrated = cli("judge", "calibrate", "stub", "-t", "topics", "-p", str(path),
                     "--db", db_url)  # fmt: skip
    assert calibrated.exit_code == 0, calibrated.stderr
    for mode in ("good", "unjudged"):
        steps: list[dict[str, Any]] = []
        run_nightly(load_project(_project(folder, mode, judge_server.url)), db_url=db_url,
                    log=steps.append)  # fmt: skip
    judged = next(s for s in steps if s["step"] == "judge")
    assert judged["added"] == 2 * QUERIES  # the model grades are in the compared version

    [candidate, baseline] = _json(cli, "runs", "list", "prod", "--json", "--db", db_url)[:2]
    # people graded none of the candidate's documents: 0 on their grades, 0.5 with the judge's
    expected = 0.0
    figures: dict[str, tuple[float, str]] = {}
    figures["runs list"] = (candidate["means"]["nDCG@10"], candidate["scored_on"])
    shown = _json(cli, "runs", "show", str(candidate["id"]), "--json", "--db", db_url)
    figures["runs show"] = (shown["means"]["nDCG@10"], shown["scored_on"])
    point = _json(cli, "history", "prod", "--json", "--db", db_url)[-1]
    assert point["run_id"] == candidate["id"]
    figures["history"] = (point["means"]["nDCG@10"], point["scored_on"])
    compared = _json(cli, "compare", str(baseline["id"]), str(candidate["id"]),
                     "--metric", "nDCG@10", "--json", "--db", db_url)  # fmt: skip
    row = compared["metrics"][0]
    figures["compare --json"] = (row["candidate"], compared["scored_on"])

    site = tmp_path / "site"
    written = cli("report", "site", "--out", str(site), "--db", db_url)
    assert written.exit_code == 0, written.stderr
    index = html.unescape((site / "index.html").read_text())
    cell = re.search(r'title="scored on ([^"]*)" data-scored-on="[^"]*">nDCG@10 ([0-9.]+)</td>',
                     index)  # fmt: skip
    assert cell is not None, index
    figures["index"] = (float(cell.group(2)), cell.group(1))
    link = re.search(r'<a href="(compare/[^"]+)">', index)
    assert link is not None
    page = html.unescape((site / link.group(1)).read_text())
    said = re.search(r"Scored on ([^<]*)\.</p>", page)
    value = re.search(r'>nDCG@10</abbr>.*?</th>\s*<td class="num">[^<]*</td>\s*'
                      r'<td class="num">([^<]*)</td>', page, re.S)  # fmt: skip
    assert said is not None and value is not None
    figures["comparison page"] = (float(value.group(1)), said.group(1))

    for surface, (figure, scored_on) in figures.items():
        assert figure == pytest.approx(expected, abs=5e-5), surface
        assert scored_on.startswith("topics@") and scored_on.endswith(PEOPLE), (surface, scored_on)
    # each names the version it read: the night's, and the judge's for what reads the latest
    assert figures["history"][1] == figures["index"][1]
    assert figures["runs show"][1] == figures["runs list"][1] == figures["compare --json"][1]
