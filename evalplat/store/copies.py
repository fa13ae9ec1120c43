"""Rows that never change once written, kept a second time as Arrow IPC to read back fast.

A comparison, its report and a nightly read a finished run's million results whole, and the
million judgments of the test set version it was scored on. Through the ``result`` and
``judgment`` tables that is a million rows each, decoded by the driver row by row; the same
columns as Arrow IPC are one fetch of a few blobs and a copy-free decode, several times
faster on both databases (docs/performance.md). The tables stay the
record every query reads; a copy is read only where the whole frame is wanted.

- **A finished run's results** (``result_copy``): made in the transaction that finishes the
  run, from the frame it was scored from, so it is exactly what ``Store.load_results`` read;
  dropped in the transaction that changes them (a resumed run storing more queries, retention).
- **A test set version's judgments** (``judgment_copy``): made in the import's transaction from
  the same columns, sorted as the table is read (``query_id`` then ``doc_id``, in byte order:
  SQLite's order, and PostgreSQL's under a C collation). A version never changes.
- **An evaluation's per-query scores** (``score_copy``): made in the transaction that stores the
  evaluation, sorted as the ``query_score`` table's key (``metric`` then ``query_id``, in byte
  order). Scores never change: a rescore stores another evaluation.

Rows written before the copies existed, and runs never read whole, are read from the tables
as before. Query ids repeat on many rows and are stored dictionary-encoded; each part holds at
most ``PART_ROWS`` rows, well under both databases' limits on one value. Parts are compressed
with LZ4, which costs less than the bytes it spares the database: the copy is a third of its
size and cheaper to write and commit, and no slower to read back (docs/performance.md).
Arrow's reader finds the codec in each part, so parts written before, uncompressed, read as
they always did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select

from evalplat.db.bulk import mark_written, typed_frame
from evalplat.db.evaluations import ScoreCopy
from evalplat.db.models import JudgmentCopy, ResultCopy

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    import pandas as pd
    import pyarrow as pa
    from sqlalchemy.orm import Session

PART_ROWS = 500_000
RESULT_COLUMNS = ("query_id", "doc_id", "rank", "score")
JUDGMENT_COLUMNS = ("query_id", "doc_id", "grade", "source")
SCORE_COLUMNS = ("query_id", "metric", "value")


def keep_results(session: Session, run_id: int, frame: pd.DataFrame) -> None:
    """Store ``frame`` (the run's whole results, as read to score it) as the run's copy,
    replacing any older one; a run without results gets none."""
    import pyarrow as pa

    drop_results(session, [run_id])
    if len(frame) and list(frame.columns) == list(RESULT_COLUMNS):
        _write(session, ResultCopy, run_id, pa.Table.from_pandas(frame, preserve_index=False))


def keep_result_table(session: Session, run_id: int, table: pa.Table) -> None:
    """Store ``table`` (the run's whole results as Arrow columns, by query then rank) as the
    run's copy, replacing any older one."""
    drop_results(session, [run_id])
    if table.num_rows:
        _write(session, ResultCopy, run_id, table.select(list(RESULT_COLUMNS)))


def read_results(session: Session, run_id: int, types: Mapping[str, str]) -> pd.DataFrame | None:
    """The run's copied results typed as ``read_frame`` types them, or None without a copy."""
    return _read(session, ResultCopy, run_id, types)


def drop_results(session: Session, run_ids: Collection[int]) -> None:
    """Forget the copies of ``run_ids``: their results are about to change."""
    if run_ids:
        session.execute(delete(ResultCopy).where(ResultCopy.run_id.in_(list(run_ids))))


def judgment_table(judgments: pd.DataFrame) -> pa.Table:
    """``query_id, doc_id, grade, source`` of ``judgments`` (one row per pair) as Arrow, sorted
    as the ``judgment`` table is read: the order its key is written in, and its copy's."""
    import pyarrow as pa
    import pyarrow.compute as pc

    source = judgments.get("source")
    table = pa.table(
        {
            "query_id": pa.array(judgments["query_id"], pa.string(), from_pandas=True),
            "doc_id": pa.array(judgments["doc_id"], pa.string(), from_pandas=True),
            "grade": pa.array(judgments["grade"], pa.int64(), from_pandas=True),
            "source": (
                pa.nulls(len(judgments), pa.string())
                if source is None
                else pa.array(source, pa.string(), from_pandas=True)
            ),
        }
    )
    if table.num_rows < 2:
        return table
    return table.take(pc.sort_indices(table, [("query_id", "ascending"), ("doc_id", "ascending")]))


def keep_judgments(session: Session, version_id: int, table: pa.Table) -> None:
    """Store ``table`` (from ``judgment_table``) as the version's copy of its judgments."""
    if table.num_rows:
        _write(session, JudgmentCopy, version_id, table.select(list(JUDGMENT_COLUMNS)))


def read_judgments(
    session: Session, version_id: int, types: Mapping[str, str]
) -> pd.DataFrame | None:
    """The version's copied judgments typed as ``read_frame`` types them, or None."""
    return _read(session, JudgmentCopy, version_id, types)


def score_table(metrics: Any, query_ids: Any, values: Any) -> pa.Table:
    """``query_id, metric, value`` (three equally long columns, in any order) as Arrow, sorted
    as the ``query_score`` table's key: the order its rows are written in, and its copy's."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.table(
        {
            "query_id": pa.array(query_ids, pa.string(), from_pandas=True),
            "metric": pa.array(metrics, pa.string(), from_pandas=True),
            "value": pa.array(values, pa.float64(), from_pandas=True),
        }
    )
    if table.num_rows < 2:
        return table
    return table.take(pc.sort_indices(table, [("metric", "ascending"), ("query_id", "ascending")]))


def keep_scores(session: Session, evaluation_id: int, table: pa.Table) -> None:
    """Store ``table`` (from ``score_table``) as the evaluation's copy of its scores; an
    evaluation without scores gets none."""
    if table.num_rows:
        _write(session, ScoreCopy, evaluation_id, table.select(list(SCORE_COLUMNS)))


def read_scores(
    session: Session, evaluation_id: int, types: Mapping[str, str]
) -> pd.DataFrame | None:
    """The evaluation's copied scores (by metric then query id), typed, or None."""
    return _read(session, ScoreCopy, evaluation_id, types)


def _write(session: Session, model: Any, owner_id: int, table: pa.Table) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.ipc as ipc

    # one chunk per column first: a frame's columns come in its reader's many small chunks
    table = table.combine_chunks()
    table = table.set_column(0, "query_id", pc.dictionary_encode(table.column("query_id")))
    owner = _owner(model)
    codec = "lz4" if pa.Codec.is_available("lz4") else None  # PyPI's pyarrow has it
    options = ipc.IpcWriteOptions(compression=codec)
    parts = []
    for number, batch in enumerate(table.to_batches(max_chunksize=PART_ROWS)):
        sink = pa.BufferOutputStream()
        with ipc.new_stream(sink, batch.schema, options=options) as writer:
            writer.write_batch(batch)
        parts.append({owner: owner_id, "part": number, "data": sink.getvalue().to_pybytes()})
    mark_written(session)
    session.execute(insert(model), parts)


def read_result_table(session: Session, run_id: int) -> pa.Table | None:
    """The run's copied results as Arrow (``query_id, doc_id, rank, score``), or None."""
    return _read_table(session, ResultCopy, run_id)


def read_judgment_table(session: Session, version_id: int) -> pa.Table | None:
    """The version's copied judgments as Arrow (``query_id, doc_id, grade, source``), or
    None."""
    return _read_table(session, JudgmentCopy, version_id)


def _read(
    session: Session, model: Any, owner_id: int, types: Mapping[str, str]
) -> pd.DataFrame | None:
    table = _read_table(session, model, owner_id)
    return None if table is None else typed_frame(table.to_pandas(), types)


def _read_table(session: Session, model: Any, owner_id: int) -> pa.Table | None:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    owner = _owner(model)
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        # bytea in binary: as text it would come as hex, twice the size, decoded in Python
        raw: Any = connection.connection.driver_connection
        with raw.cursor(binary=True) as cursor:
            cursor.execute(
                f"SELECT data FROM {model.__tablename__} WHERE {owner} = %s ORDER BY part",
                (owner_id,),
            )
            blobs = [row[0] for row in cursor.fetchall()]
    else:
        key = getattr(model, owner)
        blobs = list(
            session.scalars(select(model.data).where(key == owner_id).order_by(model.part))
        )
    if not blobs:
        return None
    table = pa.concat_tables([ipc.open_stream(pa.py_buffer(blob)).read_all() for blob in blobs])
    return table.set_column(0, "query_id", table.column("query_id").cast(pa.string()))


def _owner(model: Any) -> str:
    """The name of the copy table's first key column: the run or version it copies."""
    return str(model.__table__.primary_key.columns[0].name)
