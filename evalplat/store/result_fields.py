"""Document field values of a run's results: what a field-based measure reads.

Two sources, per result and field:

1. ``hit`` — the value the searcher read from the hit itself (the ``http`` searcher's
   ``hit_fields``, stored with the result), so a team without a document dump can still use
   fields;
2. ``document`` — the value in the test set's documents (the docs JSONL keys other than ``id``,
   ``title`` and ``text``, stored with each document).

A value from the hit wins over the document's: it is what the engine served at search time. A
result with neither has no row for that field. Values are text: a JSON string as itself,
anything else (number, boolean, list, object) as compact JSON with sorted keys, so equal values
compare equal whatever their source.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, null, select

from evalplat.db.models import ConfigVersion, Document, Result, Run, TestSetVersion
from evalplat.errors import InputError
from evalplat.store.base import StoreBase
from evalplat.store.run_rows import resolve_run, run_row

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["query_id", "rank", "doc_id", "field", "value", "source"]


class ResultFieldsMixin(StoreBase):
    def result_fields(self, run_ref: str | int, fields: Sequence[str] | None = None
                      ) -> pd.DataFrame:  # fmt: skip
        """``query_id, rank, doc_id, field, value, source`` for the run's results.

        ``fields`` limits the frame to those names (all names found otherwise); rows are ordered
        by query, rank and field. Raises ``InputError`` when the run's results were pruned.
        """
        import pandas as pd

        wanted = None if fields is None else list(dict.fromkeys(fields))
        rows: list[tuple[Any, ...]] = []
        with self.session() as session:
            run = run_row(session, resolve_run(session, run_ref))
            if run.results_pruned_at is not None:
                raise InputError(
                    f"run {run.id}: results were pruned on {run.results_pruned_at:%Y-%m-%d} "
                    "by the retention policy; only its scores are kept"
                )
            corpus_id = session.scalar(
                select(TestSetVersion.corpus_id).where(TestSetVersion.id == run.test_set_version_id)
            )
            columns = [Result.query_id, Result.rank, Result.doc_id, Result.fields]
            if corpus_id is None:
                statement = select(*columns, null())
            else:
                statement = select(*columns, Document.fields).outerjoin(
                    Document,
                    and_(Document.corpus_id == corpus_id, Document.doc_id == Result.doc_id),
                )
            statement = statement.where(Result.run_id == run.id).order_by(
                Result.query_id, Result.rank
            )
            for row in session.execute(statement):
                query_id, rank, doc_id, hit, document = tuple(row)
                rows.extend(_rows(query_id, rank, doc_id, hit or {}, document or {}, wanted))
        frame = pd.DataFrame(rows, columns=COLUMNS)
        frame["rank"] = frame["rank"].astype("int64")
        return frame

    def result_field_names(self, run_ref: str | int) -> list[str]:
        """Field names a run's results can have: the ``hit_fields`` its config declares, and
        the keys of its test set's documents. What a field-based metric is checked against."""
        with self.session() as session:
            run = session.get(Run, resolve_run(session, run_ref))
            if run is None:  # resolve_run found it: only a concurrent delete gets here
                raise InputError(f"run {run_ref} is gone")
            params = session.scalar(
                select(ConfigVersion.params).where(ConfigVersion.id == run.config_version_id)
            )
            test_set_version_id = run.test_set_version_id
        return field_names(self, params or {}, test_set_version_id)


def field_names(store: StoreBase, params: dict[str, Any], test_set_version_id: int) -> list[str]:
    """The ``hit_fields`` names of a config's ``params`` and the document keys of a test set
    version: the fields a run of the two can have."""
    names = set(params.get("hit_fields") or {})
    with store.session() as session:
        corpus_id = session.scalar(
            select(TestSetVersion.corpus_id).where(TestSetVersion.id == test_set_version_id)
        )
        if corpus_id is not None:
            for document in session.scalars(
                select(Document.fields).where(
                    Document.corpus_id == corpus_id, Document.fields.is_not(None)
                )
            ):
                names.update(document or {})
    return sorted(names)


def _rows(
    query_id: str,
    rank: int,
    doc_id: str,
    hit: dict[str, Any],
    document: dict[str, Any],
    wanted: list[str] | None,
) -> list[tuple[Any, ...]]:
    names = wanted if wanted is not None else sorted(set(hit) | set(document))
    rows = []
    for name in names:
        if hit.get(name) is not None:
            rows.append((query_id, rank, doc_id, name, _text(hit[name]), "hit"))
        elif document.get(name) is not None:
            rows.append((query_id, rank, doc_id, name, _text(document[name]), "document"))
    return rows


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
