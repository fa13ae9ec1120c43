"""``evalplat rate``: every command in plain text and JSON, bad input refused with one line and
the database untouched, and ``rate serve`` as a real process; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from evalplat.store import Store

from ..alerts.servers import free_port
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
        pair = int(store.rating_pairs("t1")["pair_id"].iloc[0])
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
        store.record_rating_grade("t2", int(store.rating_pairs("t2")["pair_id"].iloc[0]),
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
        (("rate", "task", "t/x", "-t", "small", "--pairs", str(bad)), "must not contain '/'"),
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
        (("rate", "task", "t", "-t", "small", "--from-run", str(world.run)), "already exists"),
        (("rate", "serve", "--port", "70000"), "--port"),
        (("rate", "serve", "--root-path", "rate/"), "--root-path"),
    ]:
        result = cli(*args, *db)
        assert result.exit_code == 2, (args, result.stderr)
        assert problem in result.stderr and len(result.stderr.strip().splitlines()) == 1, args
    with Store.open(world.url) as store:
        assert store.rating_raters("t") == []


def test_rate_serve_answers_on_the_given_port(world: RateWorld) -> None:
    port = free_port()
    env = {**os.environ, "EVALPLAT_DATABASE_URL": world.url}
    server = subprocess.Popen(
        [sys.executable, "-m", "evalplat", "rate", "serve", "--port", str(port),
         "--root-path", "/rate"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/tasks/any/")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        assert answer.status_code == 403
        assert "default-src 'none'" in answer.headers["content-security-policy"]
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=20)
    assert f"serving rating tasks on http://127.0.0.1:{port}/rate/" in stderr.decode()
