"""Judgments per subtopic, for the intent-aware measures: where they come from and how they meet
the ranking.

``evaluate`` asks :func:`subtopic_qrels` for them only when an intent-aware measure is chosen,
so no other evaluation reads the qrels differently or pays for the join. A qrels file is then
read with its subtopic column (``evalplat.formats.subtopic_qrels``) and a frame may carry a
``subtopic`` column; the other measures of the same evaluation see one grade per (query,
document), the highest over its subtopics (a diversity qrels judges a document once per
subtopic, which the plain reader refuses as a repeated judgment).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from numpy.typing import NDArray

    from evalplat.metrics.ranking import Ranking
    from evalplat.metrics.sources import SubtopicJudgments


def subtopic_qrels(qrels: object) -> tuple[pa.Table, pa.Table] | None:
    """(judgments per subtopic, one grade per (query, doc)) of a qrels path or of a frame with
    a ``subtopic`` column; None for anything else (coded qrels, a frame without subtopics)."""
    import pandas as pd
    import pyarrow as pa

    from evalplat.formats.subtopic_qrels import read_subtopic_qrels

    if isinstance(qrels, (str, Path)):
        table = read_subtopic_qrels(qrels)
    elif isinstance(qrels, pd.DataFrame) and "subtopic" in qrels.columns:
        table = _from_frame(qrels)
    else:
        return None
    best = (
        table.group_by(["query_id", "doc_id"], use_threads=False)
        .aggregate([("grade", "max")])
        .rename_columns(["query_id", "doc_id", "grade"])
    )
    return table, pa.table({n: best.column(n) for n in ("query_id", "doc_id", "grade")})


def _from_frame(frame: pd.DataFrame) -> pa.Table:
    import pyarrow as pa

    missing = [c for c in ("query_id", "subtopic", "doc_id", "grade") if c not in frame.columns]
    if missing:
        raise InputError(f"qrels has no column {', '.join(missing)}")
    if frame[["query_id", "subtopic", "doc_id", "grade"]].isna().any().any():
        raise InputError("qrels has missing values")
    if frame.duplicated(["query_id", "subtopic", "doc_id"]).any():
        raise InputError("qrels judge a (query, subtopic, doc) twice")
    try:
        subtopic = frame["subtopic"].astype("int64")
        grade = frame["grade"].astype("int64")
    except (TypeError, ValueError):
        raise InputError("qrels' subtopic and grade must be whole numbers") from None
    return pa.table(
        {
            "query_id": pa.array(frame["query_id"].astype(str), pa.string()),
            "subtopic": pa.array(subtopic, pa.int64()),
            "doc_id": pa.array(frame["doc_id"].astype(str), pa.string()),
            "grade": pa.array(grade, pa.int64()),
        }
    )


def join(table: pa.Table, query_ids: list[str], ranking: Ranking) -> SubtopicJudgments:
    """The judgments of the evaluated topics, coded, each with the ranking row of its document
    (-1 when the run did not retrieve it), in Arrow and NumPy kernels. Document codes follow
    (topic, doc id in byte order), which the greedy ideal ranking's tie rule reads, and
    subtopic codes follow (topic, subtopic), the order in which ndeval sums a gain."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalplat.metrics.sources import SubtopicJudgments

    position = pc.index_in(table.column("query_id"), value_set=pa.array(query_ids, pa.string()))
    table = table.filter(pc.is_valid(position))
    topic = pc.drop_null(position).to_numpy().astype(np.int64)
    subtopic = table.column("subtopic").to_numpy().astype(np.int64)
    intent = _codes(topic, subtopic)
    docs = pc.unique(table.column("doc_id"))
    docs = docs.take(pc.array_sort_indices(docs))
    doc = _codes(topic, _indices(table.column("doc_id"), docs))
    row = np.full(len(topic), -1, dtype=np.int64)
    if ranking.doc_ids is not None and len(ranking.topic) and len(topic):
        retrieved = pc.unique(ranking.doc_ids)
        width = len(retrieved)
        ranked = ranking.topic.astype(np.int64) * width + _indices(ranking.doc_ids, retrieved)
        order = np.argsort(ranked, kind="stable")
        ranked = ranked[order]
        found = pc.index_in(table.column("doc_id"), value_set=retrieved)
        seen = pc.is_valid(found).to_numpy(zero_copy_only=False)
        wanted = topic[seen] * width + pc.drop_null(found).to_numpy().astype(np.int64)
        at = np.minimum(np.searchsorted(ranked, wanted), len(ranked) - 1)
        hit = ranked[at] == wanted
        matched = np.full(len(wanted), -1, dtype=np.int64)
        matched[hit] = order[at[hit]]
        row[seen] = matched
    return SubtopicJudgments(
        topic=topic,
        intent=intent,
        doc=doc,
        grade=table.column("grade").to_numpy().astype(np.int64),
        row=row,
        n_intents=int(intent.max()) + 1 if len(intent) else 0,
    )


def _indices(values: pa.Array | pa.ChunkedArray, dictionary: pa.Array) -> NDArray[np.int64]:
    """Each value's position in ``dictionary``, which holds every value."""
    import numpy as np
    import pyarrow.compute as pc

    indices: NDArray[np.int64] = (
        pc.index_in(values, value_set=dictionary).to_numpy().astype(np.int64)
    )
    return indices


def _codes(topic: NDArray[np.int64], within: NDArray[np.int64]) -> NDArray[np.int64]:
    """Dense codes of (topic, value) pairs, numbered in sorted order."""
    import numpy as np

    width = int(within.max()) + 1 if len(within) else 1
    codes: NDArray[np.int64] = np.unique(topic * width + within, return_inverse=True)[1]
    return codes.astype(np.int64)
