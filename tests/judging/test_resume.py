"""A ``judge`` command killed with SIGKILL keeps every answer it committed; the next one asks
only for the rest, and no pair whose answer was kept is asked twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.db.judge_grades import JudgeGrade
from evalplat.store import Store

from .chat_server import chat_server
from .world import UNJUDGED, build


def _ledger_size(url: str) -> int:
    from sqlalchemy import func, select

    with Store.open(url) as store, store.session() as session:
        return int(session.scalar(select(func.count()).select_from(JudgeGrade)) or 0)


def _ledger_docs(url: str, server_docs: dict[str, str]) -> set[str]:
    from sqlalchemy import select

    with Store.open(url) as store, store.session() as session:
        hashes = set(session.scalars(select(JudgeGrade.doc_hash)))
    return {doc for doc, digest in server_docs.items() if digest in hashes}


def test_judge_resumes_after_sigkill_without_asking_a_pair_twice(
    db_url: str, tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalplat.judging.prompts import text_hash

    monkeypatch.setenv("JUDGE_KEY", "k")
    with chat_server() as server:
        server.delay = 0.25
        w = build(tmp_path, db_url, cli, server.url, judge="timeout = 5")
        command = [
            sys.executable, "-c", "from evalplat.cli import main; main()",
            "judge", "stub", "-t", "small", "--unjudged-of", str(w.run),
            "-p", str(w.project), "--db", w.url,
        ]  # fmt: skip
        process = subprocess.Popen(
            command, env={**os.environ}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while _ledger_size(w.url) < 6:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
        asked_before = len(server.requests)
        documents = {}
        for q in range(1, 7):
            for i in range(4, 8):
                doc = f"q{q}-d{i}"
                text = f"document {doc} about topic {q} GRADE={i % 4} "
                documents[doc] = text_hash(f"Title {doc}\n{text}")
        kept = _ledger_docs(w.url, documents)
        assert 6 <= len(kept) < UNJUDGED
        server.delay = 0.0
        result = cli(*command[3:])
        assert result.exit_code == 0, result.stderr
        asked_after = server.documents_asked()[asked_before:]
        assert not kept & set(asked_after), "a kept answer was asked for again"
        assert set(asked_after) | kept == set(documents)
        assert f"{UNJUDGED} grades added (small@2); {len(kept)} from the cache" in result.stdout
