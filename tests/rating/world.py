"""A small judged test set with documents and a run whose top 8 holds unjudged documents, for
the rating tests.

Queries ``q1``..``q4``; documents ``q<n>-d<i>`` for ``i`` in 0..5. People (source ``human``)
graded ``i`` in 0..2 with grade ``i``, so the scale is 0-2; the run ranks ``i`` = 0..5, so 12
pairs in its top 10 are unjudged. ``q1-d4`` is hostile: a script in its title, an image with an
``onerror`` handler in its text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

QUERIES = 4
PER_QUERY = 6
HUMAN = 3
UNJUDGED = QUERIES * (PER_QUERY - HUMAN)
HOSTILE_TITLE = "<script>window.__pwned = 1</script>Hostile"
HOSTILE_TEXT = '<img src="x" onerror="window.__pwned = 2"> & more'


@dataclass(frozen=True)
class RateWorld:
    folder: Path
    url: str
    run: int


def build(folder: Path, url: str, cli: Callable[..., Any]) -> RateWorld:
    docs, qrels, run = [], ["query_id,doc_id,grade,source"], []
    for q in range(1, QUERIES + 1):
        for i in range(PER_QUERY):
            doc = f"q{q}-d{i}"
            title, text = f"Title {doc}", f"document {doc} about topic {q}"
            if doc == "q1-d4":
                title, text = HOSTILE_TITLE, HOSTILE_TEXT
            docs.append(json.dumps({"id": doc, "title": title, "text": text, "lang": "en"}))
            if i < HUMAN:
                qrels.append(f"q{q},{doc},{i},human")
            run.append(f"q{q} Q0 {doc} {i + 1} {100 - i} stub")
    (folder / "docs.jsonl").write_text("\n".join(docs) + "\n")
    (folder / "qrels.csv").write_text("\n".join(qrels) + "\n")
    (folder / "queries.tsv").write_text(
        "".join(f"q{q}\tquestion number {q}\n" for q in range(1, QUERIES + 1))
    )
    (folder / "run.txt").write_text("\n".join(run) + "\n")
    for args in (
        ["testset", "import", "small", "--qrels", str(folder / "qrels.csv"),
         "--queries", str(folder / "queries.tsv"), "--docs", str(folder / "docs.jsonl")],
        ["import-run", str(folder / "run.txt"), "--config", "cand", "-t", "small"],
    ):  # fmt: skip
        result = cli(*args, "--db", url)
        assert result.exit_code == 0, result.stderr
    from evalplat.store import Store

    with Store.open(url) as store:
        return RateWorld(folder, url, store.resolve_run("cand@latest"))
