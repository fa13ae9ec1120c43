"""A planted case for gates that let a judge's grades in.

30 queries; per query people graded three relevant documents ``r0..r2`` (grade 1) and seven
non-relevant ones ``n0..n6`` (grade 0). The baseline ranks ``r0 r1 r2 n0..n6``: nDCG@10 = 1.
The candidate ranks three documents nobody graded, ``u0 u1 u2``, then ``n0..n6``: on people's
grades its nDCG@10 is 0, but if the three were relevant it would equal the baseline's, so the
guard can only say ``needs_judgments``. Every document's text carries ``GRADE=<g>`` for the
tests' chat server: the people's grade for judged documents, 0 for the ``u`` documents. A
judge that reads the marker agrees with people on every graded pair and grades the ``u``
documents 0, which makes the drop a regression.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

QUERIES = [f"q{i:02d}" for i in range(1, 31)]
UNJUDGED = 3 * len(QUERIES)


@dataclass(frozen=True)
class Planted:
    url: str
    project: Path
    baseline: int
    candidate: int


def build(folder: Path, url: str, cli: Callable[..., Any], server_url: str) -> Planted:
    docs, qrels, base, cand = [], ["query_id,doc_id,grade,source"], [], []
    for q in QUERIES:
        graded = [(f"{q}-r{i}", 1) for i in range(3)] + [(f"{q}-n{i}", 0) for i in range(7)]
        fresh = [(f"{q}-u{i}", 0) for i in range(3)]
        for doc, grade in graded + fresh:
            text = f"document {doc} for {q} GRADE={grade}"
            docs.append(json.dumps({"id": doc, "title": doc, "text": text}))
        qrels += [f"{q},{doc},{grade},human" for doc, grade in graded]
        base += [f"{q} Q0 {doc} {r} {100 - r} base" for r, (doc, _) in enumerate(graded, 1)]
        ranked = fresh + graded[3:]
        cand += [f"{q} Q0 {doc} {r} {100 - r} cand" for r, (doc, _) in enumerate(ranked, 1)]
    (folder / "docs.jsonl").write_text("\n".join(docs) + "\n")
    (folder / "qrels.csv").write_text("\n".join(qrels) + "\n")
    (folder / "queries.tsv").write_text("".join(f"{q}\tquestion {q}\n" for q in QUERIES))
    (folder / "base.txt").write_text("\n".join(base) + "\n")
    (folder / "cand.txt").write_text("\n".join(cand) + "\n")
    project = folder / "evalplat.toml"
    project.write_text(
        f'[[judges]]\nname = "stub"\nurl = "{server_url}"\nmodel = "stub-model"\n'
        "concurrency = 2\nretries = 2\ntimeout = 5\n"
    )
    for args in (
        ["testset", "import", "planted", "--qrels", str(folder / "qrels.csv"),
         "--queries", str(folder / "queries.tsv"), "--docs", str(folder / "docs.jsonl")],
        ["import-run", str(folder / "base.txt"), "--config", "base", "-t", "planted"],
        ["import-run", str(folder / "cand.txt"), "--config", "cand", "-t", "planted"],
    ):  # fmt: skip
        result = cli(*args, "--db", url)
        assert result.exit_code == 0, result.stderr
    from evalplat.store import Store

    with Store.open(url) as store:
        runs = store.resolve_run("base@latest"), store.resolve_run("cand@latest")
    return Planted(url, project, *runs)
