"""``evalplat rate``: every command in plain text and JSON, bad input refused with one line and
the database untouched, and ``rate serve`` as a real process; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalplat.store import Store

from .raters import enter
from .servers import rating_process, rating_server
from .world import UNJUDGED, RateWorld


def test_a_task_lives_through_every_rate_command(
    cli: Callable[..., Any], world: RateWorld, tmp_path: Path
) -> None:
    db = ("--db", world.url)
    guide = tmp_path / "guide.md"
    guide.write_text("# Grading\n\n2 answers the question, <b>0</b> does not.\n")
    made = cli("rate", "task", "t1", "-t", "small", "--from-run", str(world.run),
               "--guidelines", str(guide), *db)  # fmt: skip
    assert made.exit_code == 0, made.stderr
    assert made.stdout == f"task t1: {UNJUDGED} pairs of small@1, grades 0-2, 1 rater per pair\n"
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("query_id,doc_id,rank\nq1,q1-d5,6\nq2,q2-d4,\n")
    options = ("--scale", "0-3", "--raters-per-pair", "2", "--show-rank", "--grades", "max")
    made = cli("rate", "task", "t2", "-t", "small", "--pairs", str(pairs), *options, "--json", *db)
    assert made.exit_code == 0, made.stderr
    info = json.loads(made.stdout)
    assert (info["pairs"], info["scale"], info["raters_per_pair"], info["show_rank"]) == (
        2, [0, 3], 2, True)  # fmt: skip

    link = cli("rate", "invite", "t1", "ana", "--base-url", "https://rate.example.org/ev", *db)
    assert link.exit_code == 0, link.stderr
    assert link.stdout.startswith("https://rate.example.org/ev/tasks/t1/enter/")
    assert "rater ana invited to t1 until" in link.stderr
    lead = cli("rate", "invite", "t1", "lee", "--role", "lead", "--days", "1", "--json", *db)
    data = json.loads(lead.stdout)
    assert (data["role"], data["rater"]) == ("lead", "lee")
    token = data["link"].rsplit("/", 1)[1]
    with Store.open(world.url) as store:
        invite = store.rating_invite(__import__("hashlib").sha256(token.encode()).hexdigest())
        assert invite is not None and invite.role == "lead"
        pair = store.rating_pairs("t1")[0].pair_id
        store.record_rating_grade("t1", pair, "ana", 2, False, None)

    status = cli("rate", "status", "t1", *db)
    assert status.exit_code == 0
    assert f"task t1 (open): {UNJUDGED} pairs of small" in status.stdout
    assert f"ana: 1 graded, 0 unsure, {UNJUDGED} on the list" in status.stdout
    data = json.loads(cli("rate", "status", "t1", "--json", *db).stdout)
    assert [(p["rater"], p["graded"]) for p in data["progress"]] == [("ana", 1)]

    revoked = cli("rate", "revoke", "t1", "ana", *db)
    assert revoked.stdout == "revoked 1 invite of ana to t1\n"

    closed = cli("rate", "close", "t1", *db)
    assert closed.stdout == "closed t1: small@2, 13 judgments\n"
    nothing = cli("rate", "close", "t2", "--json", *db)
    assert nothing.exit_code == 2 and "has no grades yet" in nothing.stderr
    with Store.open(world.url) as store:
        store.record_rating_grade("t2", store.rating_pairs("t2")[0].pair_id,
                                  "bo", 3, False, "sure")  # fmt: skip
    closed = json.loads(cli("rate", "close", "t2", "--json", *db).stdout)
    assert (closed["version"], closed["task"], closed["created"]) == (3, "t2", True)


def test_bad_input_is_one_line_exit_2_and_nothing_written(
    cli: Callable[..., Any], world: RateWorld, tmp_path: Path
) -> None:
    db = ("--db", world.url)
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,doc_id\nq1,q1-d5\nq2,has space\n")
    cases = [
        (("rate", "task", "t", "-t", "small", "--pairs", str(bad)), f"{bad} line 3: doc id"),
        (("rate", "task", "t", "-t", "small", "--from-run", str(world.run), "--scale", "3-1"),
         "--scale"),
        (("rate", "task", "t", "-t", "small"), "one of --from-run RUN or --pairs FILE"),
        (("rate", "task", "t/x", "-t", "small", "--pairs", str(bad)), "may hold only ASCII"),
        (("rate", "task", "t", "-t", "small", "--from-run", str(world.run), "--grades", "best"),
         "grade rule"),
        (("rate", "invite", "nosuch", "ana"), "no rating task named 'nosuch'"),
        (("rate", "status", "nosuch"), "no rating task named 'nosuch'"),
    ]  # fmt: skip
    for args, problem in cases:
        result = cli(*args, *db)
        assert result.exit_code == 2, (args, result.stderr)
        assert problem in result.stderr and len(result.stderr.strip().splitlines()) == 1, args
    with Store.open(world.url) as store:
        assert store.rating_tasks() == []
    made = cli("rate", "task", "t", "-t", "small", "--from-run", str(world.run), *db)
    assert made.exit_code == 0
    for args, problem in [
        (("rate", "invite", "t", "llm:x"), "looks like a model's"),
        (("rate", "invite", "t", "ana", "--role", "boss"), "--role"),
        (("rate", "invite", "t", "ana", "--days", "0"), "--days"),
        (("rate", "invite", "t", "ana", "--base-url", "ftp://x"), "--base-url"),
        (
            ("rate", "invite", "t", "ana", "--base-url", "https://x.org\nSet-Cookie: a=b"),
            "--base-url must hold no space",
        ),
        (("rate", "task", "t", "-t", "small", "--from-run", str(world.run)), "already exists"),
        (("rate", "serve", "--port", "70000"), "--port"),
        (("rate", "serve", "--root-path", "rate/"), "--root-path"),
    ]:
        result = cli(*args, *db)
        assert result.exit_code == 2, (args, result.stderr)
        assert problem in result.stderr and len(result.stderr.strip().splitlines()) == 1, args
    with Store.open(world.url) as store:
        assert store.rating_raters("t") == []


@pytest.mark.parametrize(
    "name", ["task one", "ünï", "a;b", "a?b", "a#b", "a%2Fb", "..", ".hidden", "名前", "a\tb", ""]
)
def test_a_task_name_the_app_cannot_serve_is_refused(
    cli: Callable[..., Any], world: RateWorld, name: str
) -> None:
    result = cli("rate", "task", name, "-t", "small", "--from-run", str(world.run),
                 "--db", world.url)  # fmt: skip
    assert result.exit_code == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "rating task name" in result.stderr
    with Store.open(world.url) as store:
        assert store.rating_tasks() == []


def test_a_task_name_the_rule_allows_is_served(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    name = "Unjudged-04.12_a"
    made = cli("rate", "task", name, "-t", "small", "--from-run", str(world.run),
               "--db", world.url)  # fmt: skip
    assert made.exit_code == 0, made.stderr
    with rating_server(world.url) as base, httpx.Client() as client:
        link = invite(name, "ana", base)
        assert link.startswith(f"{base}/tasks/{name}/enter/")
        grade_url, _ = enter(client, link)
        assert httpx.URL(grade_url).path.startswith(f"/tasks/{name}/pairs/")
        assert client.get(f"{base}/tasks/{name}/progress").status_code == 200


def test_pairs_files_and_options_past_the_contract_are_refused_with_one_line(
    cli: Callable[..., Any], world: RateWorld, tmp_path: Path
) -> None:
    def pairs(name: str, text: str) -> str:
        (tmp_path / name).write_text(text)
        return str(tmp_path / name)

    huge_rank = pairs("rank.csv", f"query_id,doc_id,rank\nq1,q1-d5,{2**63}\n")
    digits = pairs("digits.csv", "query_id,doc_id,rank\nq1,q1-d5,1\nq1,q1-d4," + "9" * 5000)
    wide = pairs("wide.csv", "query_id,doc_id\nq1,q1-d5\nq2," + "d" * 200_000 + "\n")
    twice = pairs("twice.csv", "query_id,doc_id\nq1,q1-d5\nq2,q2-d4\nq1,q1-d5\n")
    header = pairs("header.csv", "query_id,doc_id,doc_id\nq1,q1-d5,q1-d5\n")
    nul = tmp_path / "guide.md"
    nul.write_bytes(b"# Grading\n\x00\n")
    good = pairs("good.csv", "query_id,doc_id\nq1,q1-d5\n")
    task = ("rate", "task", "t", "-t", "small")
    cases = [
        ((*task, "--pairs", huge_rank), f"{huge_rank} line 2: rank"),
        ((*task, "--pairs", digits), f"{digits} line 3: rank '99999"),
        ((*task, "--pairs", wide), f"{wide} line 3: not CSV"),
        ((*task, "--pairs", twice), f"{twice} line 4: pair (q1, q1-d5) is listed twice (first "
         "on line 2)"),
        ((*task, "--pairs", header), f"{header} line 1: column 'doc_id' is named twice"),
        ((*task, "--pairs", good, "--judge", ""), "--judge '': judge name must be"),
        ((*task, "--pairs", good, "--judge", "j" * 41), "judge name must be 1 to 36"),
        ((*task, "--pairs", good, "--judge", "gpt\x1b[2J"), "judge name must be"),
        ((*task, "--pairs", good, "--guidelines", str(nul)), f"{nul}: --guidelines contains a NUL"),
        ((*task, "--pairs", good, "--scale", "\u0660-\u0663"), "--scale must be LOW-HIGH"),
        ((*task, "--pairs", good, "--scale", "\u00b2-\u00b3"), "--scale must be LOW-HIGH"),
    ]  # fmt: skip
    for args, problem in cases:
        result = cli(*args, "--db", world.url)
        assert result.exit_code == 2, (args, result.stderr)
        assert problem in result.stderr and len(result.stderr.strip().splitlines()) == 1, (
            args, result.stderr)  # fmt: skip
    with Store.open(world.url) as store:
        assert store.rating_tasks() == []
        assert store.test_set_version("small").version == 1


def test_rate_serve_answers_on_the_given_port(world: RateWorld) -> None:
    with rating_process(world.url, "--root-path", "/rate") as served:
        answer = httpx.get(f"{served.base}/tasks/any/")
        assert answer.status_code == 403
        assert "default-src 'none'" in answer.headers["content-security-policy"]
    assert f"serving rating tasks on {served.base}/rate/" in served.stderr
