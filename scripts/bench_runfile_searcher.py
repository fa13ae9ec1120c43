"""A ``python`` searcher that answers from a TREC run file, for ``bench_nightly.py``.

``prepare(run, queries, out)`` turns a run file (``qid Q0 docid rank score tag``, in rank
order) and its queries TSV (``query_id<TAB>text``) into ``out``: a ``marshal`` file mapping
each query text to its ranking, itself marshalled. The benchmark does this once, before its
first night.

``search(text, depth, rankings=PATH)`` is then a dictionary lookup and the ranking's unmarshal
(about 10 µs for 100 hits). The file is read once per process, under a lock (the runner calls
the searcher from several threads), and only the latest config's is kept: the night runs its
configs one after another. Holding each ranking as one ``bytes`` object, not as a million
tuples, keeps the searcher out of the night's garbage collections, which would otherwise walk
every config's rankings (an engine's results live in another process). The seconds spent
reading the files are the searcher's own, not evalplat's: they are written to stderr at exit as
``bench-searcher-load SECONDS`` for the benchmark to print beside the night's time.
"""

from __future__ import annotations

import atexit
import marshal
import sys
import threading
import time

_LOCK = threading.Lock()
_RANKINGS: dict[str, dict[str, bytes]] = {}
_LOADS: list[float] = []  # seconds of each file read, reported at exit


def prepare(run: str, queries: str, out: str) -> None:
    """Write ``out``: every query text's ranking in ``run``, as ``marshal`` reads it fastest."""
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
    with open(out, "wb") as handle:
        marshal.dump({text: marshal.dumps(ranked) for text, ranked in rankings.items()}, handle)


def _report() -> None:
    print(f"bench-searcher-load {sum(_LOADS):.3f}", file=sys.stderr)


def _load(rankings: str) -> dict[str, bytes]:
    with _LOCK:
        ranked = _RANKINGS.get(rankings)
        if ranked is None:
            start = time.perf_counter()
            with open(rankings, "rb") as handle:
                ranked = marshal.load(handle)
            _RANKINGS.clear()
            _RANKINGS[rankings] = ranked
            if not _LOADS:
                atexit.register(_report)
            _LOADS.append(time.perf_counter() - start)
        return ranked


def search(text: str, depth: int, *, rankings: str) -> list[tuple[str, float]]:
    # the lock only for loading: taken on every call, a thread that lost the GIL while holding
    # it made the other searchers queue behind it (a lock convoy)
    ranked = _RANKINGS.get(rankings)
    if ranked is None:
        ranked = _load(rankings)
    blob = ranked.get(text)
    hits: list[tuple[str, float]] = [] if blob is None else marshal.loads(blob)
    return hits[:depth]
