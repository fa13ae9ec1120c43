"""``evalplat judge`` against answers no parser can take and settings no request can carry: a
per-request failure or one refusal line, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from evalplat.store import Store

from .chat_server import ChatServer
from .test_judge_cli import _judge, _llm_grades
from .world import UNJUDGED, JudgeWorld


def test_a_body_nested_too_deeply_is_a_broken_answer_retried_like_a_5xx(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world(markers={"q1-d5": "NESTED"}, judge="retries = 2")
    result = _judge(cli, w, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["added"], data["failed"], data["requests"]) == (UNJUDGED, 0, UNJUDGED + 1)
    assert server.nested_sent == ["q1-d5"]


def test_a_body_always_nested_too_deeply_stops_the_command_in_one_line(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world(markers={"q6-d7": "NESTED"}, judge="retries = 1")
    server.nested = 100
    result = _judge(cli, w)
    assert result.exit_code == 3
    [line] = result.stderr.strip().splitlines()
    assert "not a chat-completions response (gave up after 1 retries)" in line
    assert server.nested_sent == ["q6-d7", "q6-d7"]
    assert _llm_grades(w.url) == {}  # no version written; the other answers wait in the ledger


def test_an_answer_nested_too_deeply_is_a_recorded_failure(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world(markers={"q2-d6": "DEEPJSON"})
    result = _judge(cli, w, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["asked"], data["failed"], data["added"]) == (UNJUDGED, 1, UNJUDGED - 1)
    assert ("q2", "q2-d6") not in _llm_grades(w.url)


def _versions(url: str) -> int:
    with Store.open(url) as store:
        return len(store.test_set_versions("small"))


@pytest.mark.parametrize(
    ("setting", "line", "problem"),
    [
        ("temperature = inf", 6, "key 'temperature': temperature must be a finite number"),
        ("timeout = 0", 6, "key 'timeout': timeout must be more than 0, got 0"),
        ('headers = { X-Trace = "a\\nb" }', 6, "key 'headers': header X-Trace: the value"),
    ],
)
def test_a_misconfigured_judge_is_refused_before_anything_is_sent(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
    setting: str,
    line: int,
    problem: str,
) -> None:
    w = make_world(judge=setting)
    before = _versions(w.url)
    result = _judge(cli, w)
    assert result.exit_code == 2
    [message] = result.stderr.strip().splitlines()
    assert message.startswith(f"error: {w.project} line {line}: [[judges]] #1 {problem}")
    assert server.requests == [] and _versions(w.url) == before


def test_a_header_whose_variable_holds_a_line_break_is_refused_unsent(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRACE_TOKEN", "secret\r\nX-Injected: 1")
    w = make_world(judge='headers = { X-Trace = "${TRACE_TOKEN}" }')
    result = _judge(cli, w)
    assert result.exit_code == 2
    [message] = result.stderr.strip().splitlines()
    assert "judge 'stub': header X-Trace: the value holds a line break" in message
    assert "secret" not in message
    assert server.requests == []


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--k", "0"], "--k must be at least 1, got 0"),
        (["--k", "9" * 400], "--k must be at most 100000, got 9999"),
        (["--limit", "-1"], "--limit must be at least 0, got -1"),
        (["calibrate", "--seed", "-1"], "--seed must be at least 0, got -1"),
        (["calibrate", "--sample", "0"], "--sample must be at least 1, got 0"),
        (["calibrate", "--comparisons", "9" * 30], "--comparisons must be at most 2.14748e+09"),
    ],
)
def test_a_numeric_option_out_of_range_is_named(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
    args: list[str],
    problem: str,
) -> None:
    w = make_world()
    where = ["-t", "small", "-p", str(w.project), "--db", w.url]
    if args[0] == "calibrate":
        result = cli("judge", "calibrate", "stub", *where, *args[1:])
    else:
        result = cli("judge", "stub", *where, "--unjudged-of", str(w.run), *args)
    assert result.exit_code == 2
    [message] = result.stderr.strip().splitlines()
    assert message.startswith(f"error: {problem}")
    assert server.requests == []
