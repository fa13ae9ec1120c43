"""A night's judge that is misconfigured is refused before the night writes anything (exit 2);
one that fails during the night is a logged line, and the night goes on to compare, report and
deliver, then exits 3."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..alerts.servers import CaptureServer
from ..judging.chat_server import ChatServer, chat_server
from .db_counts import table_counts
from .test_night_judge import write_project


@pytest.fixture
def judge_server() -> Iterator[ChatServer]:
    with chat_server() as state:
        yield state


def _project(folder: Path, judge_url: str, hook: str, mode: str = "good", judge: str = "") -> Path:
    """The nightly judge project, its gate deciding without model grades (no calibration
    needed), with ``judge`` added to its ``[[judges]]`` table."""
    path = write_project(folder, mode, judge_url, hook, 'judge = "stub"')
    text = path.read_text().replace('unjudged = "judge"', 'unjudged = "needs_judgments"')
    path.write_text(text.replace("timeout = 5\n", f"timeout = 5\nretries = 0\n{judge}\n"))
    return path


def _judge_line(path: Path, key: str) -> int:
    return next(
        n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(key)
    )


@pytest.mark.parametrize(
    ("judge", "key", "problem"),
    [
        ("temperature = inf", "temperature", "temperature must be a finite number, got 'inf'"),
        ("timeout_s = 3", "timeout_s", "unknown key"),
        ('headers = { X-Trace = "a\\r\\nb" }', "headers", "header X-Trace: the value holds"),
    ],
)
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_misconfigured_judge_is_refused_before_the_night_writes_anything(
    tmp_path: Path,
    cli: Callable[..., Any],
    db_url: str,
    judge_server: ChatServer,
    judge: str,
    key: str,
    problem: str,
    dry_run: bool,
) -> None:
    path = _project(tmp_path / "p", judge_server.url, "http://127.0.0.1:9/", judge=judge)
    assert cli("init", "--db", db_url).exit_code == 0
    before = table_counts(db_url)
    result = cli("nightly", "--project", str(path), "--db", db_url, *(["--dry-run"] * dry_run))
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    where = f"error: {path} line {_judge_line(path, key)}: [[judges]] #1 key '{key}': "
    assert line.startswith(where) and problem in line
    assert table_counts(db_url) == before and judge_server.requests == []


@pytest.mark.parametrize("dry_run", [False, True])
def test_an_unset_variable_of_the_judge_is_refused_before_the_night_writes_anything(
    tmp_path: Path, cli: Callable[..., Any], db_url: str, judge_server: ChatServer, dry_run: bool
) -> None:
    path = _project(tmp_path / "p", judge_server.url, "http://127.0.0.1:9/",
                    judge='api_key = "${EVALPLAT_TEST_NO_SUCH_KEY}"')  # fmt: skip
    assert cli("init", "--db", db_url).exit_code == 0
    before = table_counts(db_url)
    result = cli("nightly", "--project", str(path), "--db", db_url, *(["--dry-run"] * dry_run))
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {path} line {_judge_line(path, '[[judges]]')}: [[judges]] #1:")
    assert "EVALPLAT_TEST_NO_SUCH_KEY" in line
    assert table_counts(db_url) == before


def test_dry_run_refuses_a_gate_letting_in_a_judge_never_calibrated(
    tmp_path: Path, cli: Callable[..., Any], db_url: str, judge_server: ChatServer
) -> None:
    path = write_project(tmp_path / "p", "good", judge_server.url, "http://127.0.0.1:9/", "")
    for database in (db_url, f"sqlite:///{tmp_path / 'none-yet.db'}"):
        result = cli("nightly", "--project", str(path), "--db", database, "--dry-run")
        assert result.exit_code == 2
        assert "[[gates]] let judge stub decide verdicts: judge stub was never calibrated" in (
            result.stderr
        )
    assert not (tmp_path / "none-yet.db").exists()


@pytest.mark.parametrize("fault", ["refused key", "nested body", "down"])
def test_a_judge_failing_during_the_night_is_logged_and_the_night_goes_on(
    tmp_path: Path,
    cli: Callable[..., Any],
    db_url: str,
    judge_server: ChatServer,
    capture: CaptureServer,
    fault: str,
) -> None:
    folder = tmp_path / "p"
    url = "http://127.0.0.1:9/v1" if fault == "down" else judge_server.url
    path = _project(folder, url, f"{capture.url}/ok")
    assert cli("nightly", "--project", str(path), "--db", db_url).exit_code == 0
    if fault == "refused key":
        judge_server.status = 401
    judge_server.nested = 1000
    path = _project(folder, url, f"{capture.url}/ok", mode="unjudged")
    if fault == "nested body":
        docs = folder / "docs.jsonl"
        docs.write_text(docs.read_text().replace("GRADE=0", "GRADE=0 NESTED"))
    result = cli("nightly", "--project", str(path), "--db", db_url, "--json")
    assert result.exit_code == 3, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    [judged] = [s for s in steps if s["step"] == "judge"]
    wanted = {"refused key": "HTTP 401", "nested body": "not a chat-completions response",
              "down": "cannot reach http://127.0.0.1:9/v1"}[fault]  # fmt: skip
    assert "JudgeUnavailableError" in judged["error"] and wanted in judged["error"]
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"]["nDCG@10"] == "needs_judgments"
    assert any(s["step"] == "report" and "path" in s for s in steps)
    [message] = [a for r in capture.accepted("/ok") for a in r.body["alerts"]]
    assert message["kind"] == "needs_judgments"
    assert steps[-1]["step"] == "done" and steps[-1]["exit_code"] == 3
