"""A finished run's ranked results kept a second time, as Arrow IPC, for reading them back fast.

A comparison, its report and a nightly read each finished run's million results whole. Through
the ``result`` table that is a million rows, each decoded by the driver (0.6-0.9 s on SQLite,
more through PostgreSQL's COPY); the same columns as Arrow IPC are one fetch of a few blobs and
a copy-free decode (about 0.1 s). ``result`` stays the record every query reads; the copy is
made in the transaction that finishes the run, from the results the run was scored from, and
dropped in the transaction that changes them (a resumed run storing more queries, retention).
A run without a copy (finished by an older evalplat, or never read whole) is read from
``result`` as before.

The copy holds exactly the frame ``Store.load_results`` returns: ``query_id, doc_id, rank,
score`` in the table read's order, so a page made from either is the same. Query ids repeat for
every rank and are stored dictionary-encoded; each part holds at most ``PART_ROWS`` rows, well
under both databases' limits on one value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import delete, insert, select

from evalplat.db.bulk import mark_written
from evalplat.db.models import ResultCopy

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    import pandas as pd
    from sqlalchemy.orm import Session

PART_ROWS = 500_000
COPY_COLUMNS = ("query_id", "doc_id", "rank", "score")


def keep_copy(session: Session, run_id: int, frame: pd.DataFrame) -> None:
    """Store ``frame`` (the run's whole results, as read to score it) as the run's copy,
    replacing any older one; a run without results gets none."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.ipc as ipc

    drop_copies(session, [run_id])
    if not len(frame) or list(frame.columns) != list(COPY_COLUMNS):
        return
    # one chunk per column first: the frame's columns come in the reader's many small chunks
    table = pa.Table.from_pandas(frame, preserve_index=False).combine_chunks()
    table = table.set_column(0, "query_id", pc.dictionary_encode(table.column("query_id")))
    parts = []
    for number, batch in enumerate(table.to_batches(max_chunksize=PART_ROWS)):
        sink = pa.BufferOutputStream()
        with ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        parts.append({"run_id": run_id, "part": number, "data": sink.getvalue().to_pybytes()})
    mark_written(session)
    session.execute(insert(ResultCopy), parts)


def read_copy(session: Session, run_id: int, types: Mapping[str, str]) -> pd.DataFrame | None:
    """The run's copied results typed as ``read_frame`` types them, or None without a copy."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    from evalplat.db.bulk import typed_frame

    connection = session.connection()
    if connection.dialect.name == "postgresql":
        # bytea in binary: as text it would come as hex, twice the size, decoded in Python
        raw = connection.connection.driver_connection
        with raw.cursor(binary=True) as cursor:  # type: ignore[union-attr]
            cursor.execute(
                "SELECT data FROM result_copy WHERE run_id = %s ORDER BY part", (run_id,)
            )
            blobs = [row[0] for row in cursor.fetchall()]
    else:
        blobs = list(
            session.scalars(
                select(ResultCopy.data)
                .where(ResultCopy.run_id == run_id)
                .order_by(ResultCopy.part)
            )
        )
    if not blobs:
        return None
    table = pa.concat_tables([ipc.open_stream(pa.py_buffer(blob)).read_all() for blob in blobs])
    query_ids = table.column("query_id").cast(pa.string())
    table = table.set_column(0, "query_id", query_ids)
    return typed_frame(table.to_pandas(), types)


def drop_copies(session: Session, run_ids: Collection[int]) -> None:
    """Forget the copies of ``run_ids``: their results are about to change."""
    if run_ids:
        session.execute(delete(ResultCopy).where(ResultCopy.run_id.in_(list(run_ids))))
