"""A ``python`` searcher that answers from a TREC run file, for ``bench_nightly.py``.

``search(text, depth, run=PATH, queries=PATH)``: the query's text is looked up in the queries
TSV (``query_id<TAB>text``) and its ranking in the run file (``qid Q0 docid rank score tag``,
in rank order). Each file is read once per process, under a lock: the runner calls the
searcher from several threads.
"""

from __future__ import annotations

import threading

_LOCK = threading.Lock()
_RANKINGS: dict[tuple[str, str], dict[str, list[tuple[str, float]]]] = {}


def _load(run: str, queries: str) -> dict[str, list[tuple[str, float]]]:
    texts = {}
    with open(queries, encoding="utf-8") as handle:
        for line in handle:
            query_id, _, text = line.rstrip("\n").partition("\t")
            texts[query_id] = text
    rankings: dict[str, list[tuple[str, float]]] = {}
    with open(run, encoding="utf-8") as handle:
        for line in handle:
            query_id, _, doc_id, _, score, _ = line.split()
            rankings.setdefault(texts[query_id], []).append((doc_id, float(score)))
    return rankings


def search(text: str, depth: int, *, run: str, queries: str) -> list[tuple[str, float]]:
    with _LOCK:
        rankings = _RANKINGS.get((run, queries))
        if rankings is None:
            rankings = _RANKINGS[(run, queries)] = _load(run, queries)
    return rankings.get(text, [])[:depth]
