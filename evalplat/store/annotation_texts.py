"""The title and the start of the text of ranked documents, for what annotators are handed
(``evalplat unjudged``, the *judge these* and *fix these* lists): ids alone cannot be graded.

From the test set version's documents when it has them; else from the fields the searcher read
from the hit (``hit_fields`` named ``title`` and ``text``), stored with the result. The text is
cut to its first :data:`SNIPPET` characters; both are ``""`` when neither source has them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Integer, String, and_, bindparam, func, literal, select, text

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
        _with_fields(session), {"runs": run_ids, "k": k}
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


def _with_fields(session: Session) -> Any:
    """The top results of some runs (``:runs``, rank ``<= :k``) that carry a hit's fields, read
    from the partial index that holds only those (migration 0023), not from every result. SQLite
    is told to take that index: without statistics its planner prefers the table's own key."""
    hint = (
        " INDEXED BY ix_result_with_fields" if session.get_bind().dialect.name == "sqlite" else ""
    )
    query = (
        f"SELECT run_id, query_id, rank, fields FROM result{hint}"
        " WHERE run_id IN :runs AND rank <= :k AND fields IS NOT NULL"
    )
    return (
        text(query)
        .bindparams(bindparam("runs", expanding=True))
        .columns(run_id=Integer, query_id=String, rank=Integer, fields=JSON)
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
