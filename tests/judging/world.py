"""A small judged test set with documents, a run whose top 10 holds unjudged documents, and a
project file whose ``[[judges]]`` table points at the tests' chat server.

Queries ``q1``..``q6``; documents ``q<n>-d<i>`` for ``i`` in 0..7, whose text carries the marker
``GRADE=<i mod 4>``. People (source ``human``) graded ``i`` in 0..3 with that grade; the run
ranks ``i`` = 0..7, so 24 pairs in its top 10 are unjudged. ``markers`` add words to a
document's text (``MALFORMED``, ``SLOW``, ...) to pick a fault of the server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

QUERIES = 6
PER_QUERY = 8
HUMAN = 4
UNJUDGED = QUERIES * (PER_QUERY - HUMAN)


@dataclass(frozen=True)
class JudgeWorld:
    folder: Path
    url: str
    project: Path
    run: int


def build(
    folder: Path,
    url: str,
    cli: Callable[..., Any],
    server_url: str,
    *,
    markers: dict[str, str] | None = None,
    judge: str = "",
) -> JudgeWorld:
    markers = markers or {}
    docs, qrels, run = [], ["query_id,doc_id,grade,source"], []
    for q in range(1, QUERIES + 1):
        for i in range(PER_QUERY):
            doc = f"q{q}-d{i}"
            text = f"document {doc} about topic {q} GRADE={i % 4} {markers.get(doc, '')}"
            docs.append(json.dumps({"id": doc, "title": f"Title {doc}", "text": text}))
            if i < HUMAN:
                qrels.append(f"q{q},{doc},{i % 4},human")
            run.append(f"q{q} Q0 {doc} {i + 1} {100 - i} stub")
    (folder / "docs.jsonl").write_text("\n".join(docs) + "\n")
    (folder / "qrels.csv").write_text("\n".join(qrels) + "\n")
    (folder / "queries.tsv").write_text(
        "".join(f"q{q}\tquestion number {q}\n" for q in range(1, QUERIES + 1))
    )
    (folder / "run.txt").write_text("\n".join(run) + "\n")
    defaults = "\n".join(
        f"{key} = {value}"
        for key, value in (("concurrency", 2), ("retries", 2), ("timeout", 1))
        if f"{key} =" not in judge
    )
    project = folder / "evalplat.toml"
    project.write_text(
        f"""[[judges]]
name = "stub"
url = "{server_url}"
model = "stub-model"
api_key = "${{JUDGE_KEY}}"
{judge}
{defaults}
"""
    )
    for args in (
        [
            "testset",
            "import",
            "small",
            "--qrels",
            str(folder / "qrels.csv"),
            "--queries",
            str(folder / "queries.tsv"),
            "--docs",
            str(folder / "docs.jsonl"),
        ],
        ["import-run", str(folder / "run.txt"), "--config", "cand", "-t", "small"],
    ):
        result = cli(*args, "--db", url)
        assert result.exit_code == 0, result.stderr
    return JudgeWorld(folder, url, project, run=_latest_run(url))


def _latest_run(url: str) -> int:
    from evalplat.store import Store

    with Store.open(url) as store:
        return store.resolve_run("cand@latest")
