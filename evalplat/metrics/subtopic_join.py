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
    import pandas as pd
    import pyarrow as pa

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
    (-1 when the run did not retrieve it). Document codes follow (topic, doc id), which the
    greedy ideal ranking's tie rule reads, and subtopic codes follow (topic, subtopic), the order
    in which ndeval sums a document's gain."""
    import numpy as np
    import pandas as pd

    from evalplat.metrics.sources import SubtopicJudgments

    frame = table.to_pandas()
    position = pd.Series(np.arange(len(query_ids), dtype=np.int64), index=query_ids)
    topic = frame["query_id"].map(position)
    frame = frame[topic.notna()].assign(topic=topic[topic.notna()].astype(np.int64))
    intent = pd.factorize(pd.MultiIndex.from_frame(frame[["topic", "subtopic"]]), sort=True)[0]
    doc = pd.factorize(pd.MultiIndex.from_frame(frame[["topic", "doc_id"]]), sort=True)[0]
    rows = pd.DataFrame(
        {
            "topic": ranking.topic.astype(np.int64),
            "doc_id": [] if ranking.doc_ids is None else ranking.doc_ids.to_pylist(),
            "row": np.arange(len(ranking.topic), dtype=np.int64),
        }
    )
    joined = frame[["topic", "doc_id"]].merge(rows, on=["topic", "doc_id"], how="left")
    return SubtopicJudgments(
        topic=frame["topic"].to_numpy(np.int64),
        intent=intent.astype(np.int64),
        doc=doc.astype(np.int64),
        grade=frame["grade"].to_numpy(np.int64),
        row=joined["row"].fillna(-1).to_numpy(np.int64),
        n_intents=int(intent.max()) + 1 if len(intent) else 0,
    )
