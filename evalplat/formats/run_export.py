"""Writing a stored run as a TREC run file (``qid Q0 docid rank score tag``).

The file lists every query's results in the stored order, with the stored ranks. trec_eval (and
``evalplat import-run``) ignore the rank column and order a query by score descending, ties by
doc id descending, so the stored scores are written only where they reproduce the stored order
under that rule. A query whose scores would not (ties broken the other way, a score missing, an
engine that returned results out of score order) gets scores from its ranks instead
(``n - rank + 1`` for ``n`` results), which every TREC tool orders as stored. Either way the
file evaluates to the same numbers as the stored run; ``TrecExport.rescored`` counts the
queries whose scores were replaced.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from evalplat.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class TrecExport:
    """What was written: result lines, queries, and queries written with rank-based scores."""

    lines: int
    queries: int
    rescored: int


def run_tag(text: str) -> str:
    """A TREC run tag (one field): whitespace becomes ``_``."""
    tag = re.sub(r"\s+", "_", text.strip())
    return tag or "evalplat"


def write_trec_run(results: pd.DataFrame, out: TextIO, tag: str) -> TrecExport:
    """Write ``results`` (``query_id, doc_id, rank, score``, as ``Store.load_results``
    returns) to ``out`` as a TREC run file; rules in the module docstring."""
    missing = {"query_id", "doc_id", "rank", "score"} - set(results.columns)
    if missing:
        raise InputError(f"ranked results need columns {', '.join(sorted(missing))}")
    tag = run_tag(tag)
    lines = queries = rescored = 0
    ordered = results.sort_values(["query_id", "rank"], kind="stable")
    for query_id, group in ordered.groupby("query_id", sort=True):
        docs = [str(d) for d in group["doc_id"]]
        ranks = [int(r) for r in group["rank"]]
        scores = [None if s is None or _nan(s) else float(s) for s in group["score"]]
        for text in (str(query_id), *docs):
            if not text or any(ch.isspace() for ch in text):
                raise InputError(
                    f"query {query_id}: id {text!r} is empty or contains whitespace, "
                    "which a TREC run file cannot hold"
                )
        if not _keeps_order(docs, scores):
            rescored += 1
            scores = [float(len(docs) - i) for i in range(len(docs))]
        out.writelines(_lines(str(query_id), docs, ranks, scores, tag))
        lines += len(docs)
        queries += 1
    return TrecExport(lines, queries, rescored)


def _lines(
    query_id: str, docs: list[str], ranks: list[int], scores: list[float | None], tag: str
) -> Iterator[str]:
    for doc, rank, score in zip(docs, ranks, scores, strict=True):
        yield f"{query_id} Q0 {doc} {rank} {score!r} {tag}\n"


def _keeps_order(docs: list[str], scores: list[float | None]) -> bool:
    """Would score descending, ties by doc id descending, give back this order?"""
    for i in range(len(docs) - 1):
        a, b = scores[i], scores[i + 1]
        if a is None or b is None:
            return False
        if a < b or (a == b and not docs[i] > docs[i + 1]):
            return False
    return not (len(docs) == 1 and scores[0] is None)


def _nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)
