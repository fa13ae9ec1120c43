"""The title and the start of the text of ranked documents, for what annotators are handed
(``evalplat unjudged``, the *judge these* and *fix these* lists): ids alone cannot be graded.

From the test set version's documents when it has them; else from the fields the searcher read
from the hit (``hit_fields`` named ``title`` and ``text``), stored with the result. The text is
cut to its first :data:`SNIPPET` characters; both are ``""`` when neither source has them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, func, literal, select

from evalplat.db.models import Document, Result, TestSetVersion

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy.orm import Session

SNIPPET = 200


def corpus_of(session: Session, version_id: int | None) -> int | None:
    if version_id is None:
        return None
    corpus: int | None = session.scalar(
        select(TestSetVersion.corpus_id).where(TestSetVersion.id == version_id)
    )
    return corpus


def with_document_columns(statement: Any, corpus_id: int | None) -> Any:
    """``statement`` (over ``Result``) with two more columns: the document's title and the
    start of its text, from the corpus ``corpus_id`` (empty without one)."""
    if corpus_id is None:
        return statement.add_columns(literal(""), literal(""))
    return statement.add_columns(
        func.coalesce(Document.title, ""), func.coalesce(func.substr(Document.text, 1, SNIPPET), "")
    ).outerjoin(Document, and_(Document.corpus_id == corpus_id, Document.doc_id == Result.doc_id))


def fill_from_hits(
    session: Session, frame: pd.DataFrame, runs: Iterable[int], k: int, run_column: str | None
) -> pd.DataFrame:
    """Fill the empty ``title``/``text`` of ``frame`` (``query_id, rank`` and the run in
    ``run_column``, or the one run of ``runs``) from the fields stored with the results."""
    run_ids = list(runs)
    if frame.empty or not ((frame["title"] == "") | (frame["text"] == "")).any():
        return frame
    hits: dict[tuple[int, str, int], dict[str, Any]] = {}
    for run_id, query_id, rank, fields in session.execute(
        select(Result.run_id, Result.query_id, Result.rank, Result.fields).where(
            Result.run_id.in_(run_ids), Result.rank <= k, Result.fields.is_not(None)
        )
    ):
        if isinstance(fields, dict):
            hits[(int(run_id), str(query_id), int(rank))] = fields
    if not hits:
        return frame
    run_values = frame[run_column] if run_column else [run_ids[0]] * len(frame)
    keys = zip(run_values, frame["query_id"], frame["rank"], strict=True)
    found = [hits.get((int(r), str(q), int(n)), {}) for r, q, n in keys]
    frame = frame.copy()
    for column, limit in (("title", None), ("text", SNIPPET)):
        values = [_text(hit.get(column))[:limit] for hit in found]
        frame[column] = [old or new for old, new in zip(frame[column], values, strict=True)]
    return frame


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
