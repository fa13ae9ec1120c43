"""``[nightly] judge``: the night's new unjudged documents are graded by a calibrated judge (the
tests' chat-completions server) before comparing, within the night's budget of requests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project

from ..alerts.servers import CaptureServer
from ..judging.chat_server import ChatServer, chat_server
from .small_project import ENGINE, QUERIES

pytestmark = pytest.mark.usefixtures("no_report_site")  # they read no page


@pytest.fixture
def judge_server() -> Iterator[ChatServer]:
    with chat_server() as state:
        yield state


def write_project(folder: Path, mode: str, judge_url: str, hook: str, nightly: str) -> Path:
    """Test set ``topics`` with documents whose text carries the grade the judge will read:
    ``dN`` relevant (1), ``n1``/``n2`` and the unjudged ``uN``/``vN`` not (0)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "engine.py").write_text(ENGINE, encoding="utf-8")
    topics = range(1, QUERIES + 1)
    (folder / "queries.tsv").write_text("".join(f"{n}\ttopic {n}\n" for n in topics))
    (folder / "qrels.txt").write_text(
        "".join(f"{n} 0 d{n} 1\n{n} 0 n1 0\n{n} 0 n2 0\n" for n in topics)
    )
    grades = {"n1": 0, "n2": 0} | {f"d{n}": 1 for n in topics}
    grades |= {f"{p}{n}": 0 for n in topics for p in "uv"}
    (folder / "docs.jsonl").write_text(
        "".join(
            json.dumps({"id": d, "title": d, "text": f"document {d} GRADE={g}"}) + "\n"
            for d, g in grades.items()
        )
    )
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "topics"
qrels = "qrels.txt"
queries = "queries.tsv"
docs = "docs.jsonl"

[[configs]]
name = "prod"
searcher = "python"
testsets = ["topics"]
concurrency = 2
[configs.params]
function = "engine:search"
path = "{folder}"
mode = "{mode}"

[metrics]
names = ["nDCG@10"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01
unjudged = "judge"

[[judges]]
name = "stub"
url = "{judge_url}"
model = "stub-model"
concurrency = 2
timeout = 5

[nightly]
{nightly}

[[alerts]]
type = "webhook"
url = "{hook}"
""",
        encoding="utf-8",
    )
    return path


Night = Callable[..., tuple[int, list[dict[str, Any]]]]


@pytest.fixture
def night(db_url: str, tmp_path: Path, judge_server: ChatServer, capture: CaptureServer) -> Night:
    def run(mode: str, nightly: str = 'judge = "stub"') -> tuple[int, list[dict[str, Any]]]:
        path = write_project(tmp_path / "p", mode, judge_server.url, f"{capture.url}/ok", nightly)
        steps: list[dict[str, Any]] = []
        outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
        return outcome.exit_code, steps

    return run


def _calibrate(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, judge_server: ChatServer
) -> None:
    """Import the test set as the night will, and calibrate the judge on it, before any night
    lets the judge's grades into a gate."""
    folder = tmp_path / "p"
    write_project(folder, "good", judge_server.url, "http://127.0.0.1:9/none", "")
    imported = cli("testset", "import", "topics", "--qrels", str(folder / "qrels.txt"),
                   "--queries", str(folder / "queries.tsv"), "--docs", str(folder / "docs.jsonl"),
                   "--db", db_url)  # fmt: skip
    assert imported.exit_code == 0, imported.stderr
    result = cli("judge", "calibrate", "stub", "-t", "topics", "-p", str(folder / "evalplat.toml"),
                 "--db", db_url)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "accepted for gating" in result.stdout


def test_the_night_judges_new_documents_and_the_verdict_says_model_grades_decided(
    night: Night,
    cli: Callable[..., Any],
    db_url: str,
    tmp_path: Path,
    judge_server: ChatServer,
    capture: CaptureServer,
) -> None:
    _calibrate(cli, db_url, tmp_path, judge_server)
    asked = len(judge_server.requests)
    assert night("good")[0] == 0  # the baseline: every top document judged, nothing to ask
    assert len(judge_server.requests) == asked

    code, steps = night("unjudged")
    judged = next(s for s in steps if s["step"] == "judge")
    assert (judged["pairs"], judged["asked"], judged["added"]) == (2 * QUERIES,) * 3
    assert len(judge_server.requests) - asked == 2 * QUERIES
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"]["nDCG@10"] == "regression"
    assert code == 1
    [message] = [a for r in capture.accepted("/ok") for a in r.body["alerts"]]
    assert message["kind"] == "regression"
    assert message["model_grades"] == "model grades: 40% of top-10 grades, judge stub"

    # the next night asks nothing again: the judge's ledger answers
    asked = len(judge_server.requests)
    night("unjudged")
    assert len(judge_server.requests) == asked


def test_the_night_budget_caps_the_requests_and_the_rest_waits(
    night: Night, cli: Callable[..., Any], db_url: str, tmp_path: Path, judge_server: ChatServer
) -> None:
    _calibrate(cli, db_url, tmp_path, judge_server)
    night("good", 'judge = "stub"\njudge_budget = 10')
    asked = len(judge_server.requests)
    code, steps = night("unjudged", 'judge = "stub"\njudge_budget = 10')
    judged = next(s for s in steps if s["step"] == "judge")
    assert len(judge_server.requests) - asked == 10
    assert (judged["added"], judged["budget_left"]) == (10, 0)
    assert "budget of 10 requests is spent" in judged["stopped"]
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"]["nDCG@10"] == "needs_judgments"  # 50 documents still unjudged
    assert code == 0


def test_a_night_whose_gates_let_in_an_uncalibrated_judge_stops_before_anything_runs(
    night: Night, judge_server: ChatServer, db_url: str
) -> None:
    with pytest.raises(InputError, match="judge stub was never calibrated"):
        night("good")
    assert judge_server.requests == []


@pytest.mark.parametrize(
    ("gate", "nightly", "where"),
    [
        ('unjudged = "judge"\njudge = "gpt"', "", "[[gates]] #1 key 'judge': gate nDCG@10: no "
         "judge named 'gpt' in [[judges]] (known: stub)"),
        ('unjudged = "sometimes"', "", "[[gates]] #1 key 'unjudged': gate nDCG@10: must be one "
         "of bound, needs_judgments, ignore, judge, grade"),
        ('judge = "stub"', "", "[[gates]] #1 key 'judge': gate nDCG@10: a judge counts only "
         'with unjudged = "judge" or "grade"'),
        ("", 'judge = "gpt"', "[nightly] key 'judge': no judge named 'gpt' in [[judges]]"),
        ("", "judge_budget = -1", "[nightly] key 'judge_budget': must be a whole number"),
        ("", "judge_budget = 1e3", "[nightly] key 'judge_budget': must be a whole number"),
        ("", "judge_budget = 10000001", "[nightly] key 'judge_budget': must be a whole number"),
    ],
)  # fmt: skip
def test_bad_judge_settings_name_the_file_table_and_key(
    tmp_path: Path, cli: Callable[..., Any], db_url: str, gate: str, nightly: str, where: str
) -> None:
    path = write_project(tmp_path, "good", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/", nightly)
    text = path.read_text().replace(
        'max_drop = 0.01\nunjudged = "judge"', f"max_drop = 0.01\n{gate}"
    )
    path.write_text(text)
    result = cli("nightly", "--project", str(path), "--db", db_url)
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {path} line ") and where in line


def test_a_gate_letting_a_judge_in_needs_one_when_the_project_has_several(
    tmp_path: Path, cli: Callable[..., Any], db_url: str
) -> None:
    path = write_project(tmp_path, "good", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/", "")
    text = path.read_text().replace('[[judges]]\nname = "stub"', '[[judges]]\nname = "a"\n'
                                    'url = "http://127.0.0.1:9/v1"\nmodel = "m"\n\n'
                                    '[[judges]]\nname = "stub"')  # fmt: skip
    path.write_text(text)
    result = cli("nightly", "--project", str(path), "--db", db_url)
    assert result.exit_code == 2
    assert "[[gates]] #1 key 'judge': gate nDCG@10: unjudged = \"judge\" needs judge" in (
        result.stderr
    )
