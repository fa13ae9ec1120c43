"""``evalplat judge`` against the tests' chat-completions server, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store

from .chat_server import ChatServer
from .world import HUMAN, QUERIES, UNJUDGED, JudgeWorld, build


def _judge(cli: Callable[..., Any], w: JudgeWorld, *extra: str) -> Any:
    return cli(
        "judge",
        "stub",
        "-t",
        "small",
        "--unjudged-of",
        str(w.run),
        "-p",
        str(w.project),
        "--db",
        w.url,
        *extra,
    )


def _llm_grades(url: str) -> dict[tuple[str, str], int]:
    with Store.open(url) as store:
        judgments = store.load_test_set("small").judgments
    llm = judgments[judgments["source"] == "llm:stub"]
    return {
        (q, d): int(g) for q, d, g in zip(llm["query_id"], llm["doc_id"], llm["grade"], strict=True)
    }


def test_judge_adds_model_grades_as_a_new_version_with_provenance(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world()
    result = _judge(cli, w, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["version"], data["added"], data["asked"], data["failed"]) == (
        2,
        UNJUDGED,
        UNJUDGED,
        0,
    )
    assert data["requests"] == UNJUDGED and data["prompt_tokens"] > 0
    grades = _llm_grades(w.url)
    assert len(grades) == UNJUDGED
    assert all(grades[q, d] == int(d[-1]) % 4 for q, d in grades)
    with Store.open(w.url) as store:
        version = store.test_set_version("small@2")
        human = store.load_test_set("small@2").judgments
    assert (human["source"] == "human").sum() == QUERIES * HUMAN
    source = version.source or {}
    assert (source["judge"], source["model"], source["temperature"]) == ("stub", "stub-model", 0.0)
    assert (
        len(source["prompt_hash"]) == 64
        and source["date"]
        and source["completion_tokens"] == 9 * UNJUDGED
    )
    # structured output was asked for, with the key from ${JUDGE_KEY}
    assert {(s, a) for _, s, a in server.requests} == {(True, "Bearer sekrit")}


def test_the_cache_never_pays_for_a_pair_twice(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world()
    assert _judge(cli, w, "--limit", "5").exit_code == 0
    assert len(server.requests) == 5
    # the first five are now judged in small@2; a version-1 reference still lists them
    again = json.loads(
        cli(
            "judge",
            "stub",
            "-t",
            "small@1",
            "--unjudged-of",
            str(w.run),
            "-p",
            str(w.project),
            "--db",
            w.url,
            "--limit",
            "8",
            "--json",
        ).stdout
    )
    assert (again["cached"], again["asked"], again["requests"]) == (5, 3, 3)
    assert len(server.requests) == 8


def test_the_budget_bounds_the_requests_and_the_rest_resumes(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world(judge="budget = 7")
    server.busy = 2  # two 429s spend two requests of the budget
    first = json.loads(_judge(cli, w, "--json").stdout)
    assert first["requests"] == 7 and len(server.requests) == 7
    assert first["added"] == 5 and first["left"] == UNJUDGED - 5
    assert "budget of 7 requests is spent" in first["stopped"]
    plain = _judge(cli, w)
    assert "stopped: the budget of 7 requests is spent" in plain.stdout
    assert len(_llm_grades(w.url)) == 12
    assert len(server.requests) == 14


def test_answers_without_a_grade_are_recorded_failures_not_guesses(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world(markers={"q1-d5": "MALFORMED", "q2-d6": "OUTSIDE"})
    data = json.loads(_judge(cli, w, "--json").stdout)
    assert (data["asked"], data["failed"], data["added"]) == (UNJUDGED, 2, UNJUDGED - 2)
    grades = _llm_grades(w.url)
    assert ("q1", "q1-d5") not in grades and ("q2", "q2-d6") not in grades
    with Store.open(w.url) as store:
        from sqlalchemy import select

        from evalplat.db.judge_grades import JudgeGrade

        with store.session() as session:
            failures = {
                row.error
                for row in session.scalars(select(JudgeGrade).where(JudgeGrade.grade.is_(None)))
            }
    assert failures == {
        "no grade in the answer: 'The document is'",
        "grade 7 is outside the scale 0-3",
    }
    # a failure is recorded: asking again does not send it again
    before = len(server.requests)
    assert json.loads(_judge(cli, w, "--json").stdout)["asked"] == 0
    assert len(server.requests) == before


@pytest.mark.parametrize("status", [400, 422, 500])
def test_an_endpoint_refusing_the_schema_is_asked_in_plain_text(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer, status: int
) -> None:
    w = make_world(judge="concurrency = 1")
    server.refuse_schema = status  # 500: llama-cpp-python's server, naming response_format
    data = json.loads(_judge(cli, w, "--limit", "4", "--json").stdout)
    assert (data["added"], data["structured"]) == (4, False)
    assert [s for _, s, _ in server.requests] == [True, False, False, False, False]
    assert sorted(_llm_grades(w.url).values()) == [0, 1, 2, 3]


def test_429_slow_answers_and_dropped_connections_are_retried(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world(markers={"q1-d4": "DROP", "q3-d7": "SLOW"}, judge="timeout = 5\nretries = 6")
    server.busy = 3
    result = _judge(cli, w, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["added"], data["failed"]) == (UNJUDGED, 0)
    assert data["requests"] == UNJUDGED + 3 + 1
    assert server.dropped == {"q1-d4"} and server.answered.count("q1-d4") == 1
    assert server.answered.count("q3-d7") == 1


def test_an_endpoint_that_never_answers_in_time_stops_the_command_with_answers_kept(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world(markers={"q6-d7": "SLOW"}, judge="retries = 1")
    result = _judge(cli, w)
    assert result.exit_code == 3
    assert "did not answer within 1 s (gave up after 1 retries)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert _llm_grades(w.url) == {}  # no version written
    with Store.open(w.url) as store:
        from evalplat.judging.prompts import load_prompt
        from evalplat.judging.spec import find_judge
        from evalplat.nightly.project import load_project

        project = load_project(w.project)
        spec = find_judge(project.judges, "stub", w.project)
        kept = store.judge_ledger("stub", load_prompt(spec).hash)
    assert len(kept) >= UNJUDGED - 2


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "the API key was refused (HTTP 401)"),
        (404, "model 'stub-model' is not served there, or the URL is wrong"),
    ],
)
def test_a_refused_key_or_a_missing_model_is_one_line_and_exit_3(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
    status: int,
    message: str,
) -> None:
    w = make_world()
    server.status = status
    result = _judge(cli, w)
    assert result.exit_code == 3 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert _llm_grades(w.url) == {}


def test_an_unreachable_endpoint_is_one_line_and_exit_3(
    db_url: str, tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_KEY", "k")
    w = build(tmp_path, db_url, cli, "http://127.0.0.1:9/v1", judge="retries = 0")
    result = _judge(cli, w)
    assert (
        result.exit_code == 3
        and "cannot reach http://127.0.0.1:9/v1/chat/completions" in result.stderr
    )


def test_a_prompt_that_fails_to_render_sends_nothing(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
    tmp_path: Path,
) -> None:
    (tmp_path / "prompt.j2").write_text("Query {{ query }}\nPassage {{ passage }}\n")
    w = make_world(judge='prompt = "prompt.j2"')
    result = _judge(cli, w)
    assert result.exit_code == 2
    assert "prompt.j2: prompt failed to render: 'passage' is undefined" in result.stderr
    assert server.requests == [] and _llm_grades(w.url) == {}


def test_a_custom_prompt_is_sandboxed(
    make_world: Callable[..., JudgeWorld],
    cli: Callable[..., Any],
    server: ChatServer,
    tmp_path: Path,
) -> None:
    (tmp_path / "prompt.j2").write_text("{{ query.__class__.__mro__ }} {{ text }}")
    w = make_world(judge='prompt = "prompt.j2"')
    result = _judge(cli, w)
    assert result.exit_code == 2 and "prompt failed to render" in result.stderr
    (tmp_path / "prompt.j2").write_text(
        "Is {{ title }}: {{ text }} about {{ query }}? {{ lowest }}-{{ highest }}"
    )
    ok = json.loads(_judge(cli, w, "--limit", "2", "--json").stdout)
    assert ok["added"] == 2


def test_dry_run_counts_pairs_and_estimates_tokens_without_sending(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world()
    data = json.loads(_judge(cli, w, "--dry-run", "--json").stdout)
    assert (data["pairs"], data["left"], data["dry_run"]) == (UNJUDGED, UNJUDGED, True)
    assert 200 * UNJUDGED < data["estimated_tokens"] < 600 * UNJUDGED
    assert server.requests == []
    assert (
        f"dry run: {UNJUDGED} pairs, 0 already answered, {UNJUDGED} to ask, 0 without"
        in _judge(cli, w, "--dry-run").stdout
    )


def test_calibration_accepts_an_agreeing_judge(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world()
    args = ["judge", "calibrate", "stub", "-t", "small", "-p", str(w.project), "--db", w.url]
    data = json.loads(cli(*args, "--json").stdout)
    [human] = data["sources"]
    assert (human["source"], human["pairs"], human["weighted_kappa"], human["alpha"]) == (
        "human",
        24,
        1.0,
        1.0,
    )
    assert human["confusion"] == [[6, 0, 0, 0], [0, 6, 0, 0], [0, 0, 6, 0], [0, 0, 0, 6]]
    assert data["gating"] is True and data["refusal"] is None
    text = cli(*args, "--sample", "8").stdout
    assert "against 'human': 8 pairs, exact 1.000, weighted kappa 1.000" in text
    assert "accepted for gating" in text
    assert len(server.requests) == 24  # the sample of 8 came from the cache


def test_calibration_refuses_a_disagreeing_judge_for_gating(
    make_world: Callable[..., JudgeWorld], cli: Callable[..., Any], server: ChatServer
) -> None:
    w = make_world()
    server.invert = True
    args = ["judge", "calibrate", "stub", "-t", "small", "-p", str(w.project), "--db", w.url]
    data = json.loads(cli(*args, "--json").stdout)
    [human] = data["sources"]
    assert human["weighted_kappa"] == pytest.approx(-0.6)  # 1 - (2/3) / (5/12)
    assert [b["bias"] for b in human["bias"]] == [3.0, 1.0, -1.0, -3.0]
    assert data["gating"] is False
    assert data["refusal"] == (
        "weighted kappa -0.60 against 'human' (24 pairs) is below the floor 0.40 (min_kappa)"
    )
    assert "refused for gating: weighted kappa -0.60" in cli(*args).stdout
