"""A TREC run file read once and ranked once, for ``import-run`` to store, score and copy.

The file is parsed into Arrow columns (:func:`evalplat.formats.trec.read_run_table`, which
names the line of any bad input), its rows of queries outside the test set are dropped, and
the rest is put in trec_eval's order with the evaluation engine's own ordering
(:func:`evalplat.metrics.ordering.score_order`): by query id in byte order, score descending,
ties by doc id descending. That is also the ``result`` table's key order (``run_id, query_id,
rank``), so the same columns are written to the table, scored in the given order and kept as
the run's Arrow copy, with no other copy of the rows in between.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from numpy.typing import NDArray


@dataclass(frozen=True)
class RankedRun:
    """A run file over a test set's queries, ranked.

    ``results``: ``query_id, doc_id, rank, score`` (rank from 1), by query id (byte order) then
    rank. ``query_ids``: the test set's queries, sorted; ``counts``: each one's number of
    results (0 for a query the file does not have). ``run_only``: the file's query ids that are
    not queries of the test set, sorted (their rows are dropped).
    """

    results: pa.Table
    query_ids: list[str]
    counts: NDArray[np.int64]
    run_only: list[str]

    @property
    def depth(self) -> int:
        """The most results any query has."""
        return int(self.counts.max()) if len(self.counts) else 0


def rank_run_file(path: str | Path, query_ids: Iterable[str]) -> RankedRun:
    """Read the run file at ``path`` and rank it over ``query_ids`` (see the module's doc).

    Raises ``InputError`` naming the file and line for malformed input, and for a doc id
    repeated in one query's ranking (in any query, kept or dropped).
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalplat.formats.trec import read_run_table
    from evalplat.metrics.arrow_columns import arrow, numeric, topic_codes
    from evalplat.metrics.doc_keys import StringColumn
    from evalplat.metrics.ordering import score_order

    table = read_run_table(path)
    topics = sorted(set(query_ids))
    topic = topic_codes(table.column("query_id"), pa.array(topics, pa.string()))
    outside = topic < 0
    run_only: list[str] = []
    if outside.any():
        dropped = pc.unique(table.column("query_id").filter(arrow(outside)))
        run_only = sorted(str(q) for q in dropped.to_pylist())
        table = table.filter(arrow(~outside))
        topic = topic[~outside]
    table = table.combine_chunks()
    order = None
    if table.num_rows:
        score = numeric(table.column("score"), np.float64)
        order = score_order(topic, score, StringColumn.of(table.column("doc_id").chunk(0)))
    if order is not None:
        table = table.take(arrow(order))
        topic = topic[order]
    counts = np.bincount(topic, minlength=len(topics)).astype(np.int64)
    first = np.cumsum(counts) - counts  # each query's first row
    rank = np.arange(1, len(topic) + 1, dtype=np.int64) - np.repeat(first, counts)
    results = pa.table(
        {
            "query_id": table.column("query_id"),
            "doc_id": table.column("doc_id"),
            "rank": arrow(rank),
            "score": table.column("score"),
        }
    )
    return RankedRun(results, topics, counts, run_only)
