"""Scoring a run whose ids are integer codes already: ``evaluate`` without the coding step.

``evaluate`` codes text ids itself (``evalplat.metrics.build``); a comparison that scores two
stored runs against one set of judgments codes them once (``evalplat.comparison.coded``) and
scores from the codes here. The result is ``evaluate``'s with ``ordering="given"``, the topics
given and the defaults otherwise, value for value: the same judgments and ranking arrays reach
the same measure kernels. What ``evaluate`` would refuse or name (a repeated judgment or
document, a grade beyond 32 bits, a measure needing inputs other than judgments and a ranking)
is left to it: ``score_coded`` then returns None and the caller scores the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

_INPUTS = {"judgments", "ranking"}


def score_coded(
    topics: Sequence[str],
    qrels: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]],
    runs: Sequence[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]],
    metrics: Sequence[str],
) -> list[pd.DataFrame] | None:
    """Per-query scores (``query_id, metric, value``, as ``Evaluation.per_query``) of each of
    ``runs`` against ``qrels``, or None when ``evaluate`` must decide for any (module doc). The
    judgments are checked and sorted once for all the runs.

    ``topics``: the topic ids, sorted; ``qrels``: (topic code, pair key, grade) per judgment;
    each run: (topic code, pair key, rank) per result. A topic code is the index in ``topics``,
    -1 for a query that is not a topic; a pair key is one integer per (query, document).
    """
    scorer = CodedScorer.of(topics, qrels, runs)
    return None if scorer is None else scorer.score(metrics)


class CodedScorer:
    """``score_coded`` of the same runs and judgments again and again, each time with other
    pairs added to the judgments at grade 1 (the optimistic bound's unjudged documents at each
    depth): the judgments' sort and each run's lookup of its grades are done once.

    ``rows``: for each run, the row of the run as given that each scored row comes from (rows
    of queries that are not topics are not scored); ``unjudged``: for each run, the keys of its
    scored rows without a judgment, sorted, and where those rows are among the scored ones."""

    def __init__(
        self,
        topics: Sequence[str],
        judged: tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int64]],
        runs: list[tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int64]]],
        rows: list[NDArray[np.intp]],
        unjudged: list[tuple[NDArray[np.int64], NDArray[np.intp]]],
    ) -> None:
        self.topics = list(topics)
        self.judged = judged  # (topic, grade, sorted keys) of the judgments inside the topics
        self.runs = runs  # (topic, grade from the judgments, key) per run, by topic and rank
        self.rows = rows
        self.unjudged = unjudged

    @classmethod
    def of(
        cls,
        topics: Sequence[str],
        qrels: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]],
        runs: Sequence[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]],
    ) -> CodedScorer | None:
        """The scorer of ``score_coded``'s arguments, or None when ``evaluate`` must decide."""
        import numpy as np

        from evalplat.metrics.ranking import UNJUDGED

        qrels_topic, qrels_key, grade = qrels
        if not _unique(qrels_key[qrels_topic < 0]):
            return None
        inside = qrels_topic >= 0
        qrels_topic, qrels_key, grade = qrels_topic[inside], qrels_key[inside], grade[inside]
        # keys come grouped by query: a stable sort (a merge of sorted runs) is the cheap one
        by_key = np.argsort(qrels_key, kind="stable")
        ordered = qrels_key[by_key]
        if _repeats(ordered):
            return None
        if grade.size and (grade.max() > np.iinfo(np.int32).max or grade.min() <= UNJUDGED):
            return None
        grade32 = grade.astype(np.int32)
        coded = []
        rows: list[NDArray[np.intp]] = []
        unjudged: list[tuple[NDArray[np.int64], NDArray[np.intp]]] = []
        for run_topic, run_key, rank in runs:
            if not _unique(run_key[run_topic < 0]):
                return None
            inside = run_topic >= 0
            run_topic, run_key, rank = run_topic[inside], run_key[inside], rank[inside]
            by_run = np.argsort(run_key, kind="stable")
            run_sorted = run_key[by_run]
            if _repeats(run_sorted):
                return None
            run_grade = np.full(len(run_key), UNJUDGED, dtype=np.int32)
            # both sides sorted: the search walks the judgments once instead of jumping about
            position, found = find_sorted(ordered, run_sorted)
            run_grade[by_run[found]] = grade32[by_key[position[found]]]
            topic32 = run_topic.astype(np.int32)
            given = np.flatnonzero(inside)
            open_rows = by_run[~found]  # the rows without a judgment, by key
            if not _in_order(run_topic, rank):  # stored results come by query then rank already
                order = np.lexsort((rank.astype(np.float64), run_topic))
                topic32, run_grade, run_key = topic32[order], run_grade[order], run_key[order]
                given = given[order]
                moved = np.empty_like(order)
                moved[order] = np.arange(len(order))
                open_rows = moved[open_rows]
            coded.append((topic32, run_grade, run_key))
            rows.append(given)
            unjudged.append((run_sorted[~found], open_rows))
        judged = (qrels_topic.astype(np.int32), grade32, ordered)
        return cls(topics, judged, coded, rows, unjudged)

    def score(
        self,
        metrics: Sequence[str],
        extra: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None,
    ) -> list[pd.DataFrame] | None:
        """Each run's per-query scores, with ``extra`` (topic code, pair key) judged at grade 1
        after the judgments: pairs that are not judged, each once. None when ``evaluate`` must
        decide."""
        import numpy as np

        from evalplat.metrics.evaluation import Evaluation, measure
        from evalplat.metrics.names import parse_all
        from evalplat.metrics.ranking import Judgments, Ranking
        from evalplat.metrics.sources import MeasureInputs

        chosen = parse_all(list(metrics))
        if any(not set(m.spec.inputs) <= _INPUTS for m in chosen):
            return None
        topic, grade, _ = self.judged
        added = np.zeros(0, dtype=np.int64)
        if extra is not None and len(extra[1]):
            inside = extra[0] >= 0
            added = np.sort(extra[1][inside])
            topic = np.concatenate([topic, extra[0][inside].astype(np.int32)])
            grade = np.concatenate([grade, np.ones(len(added), dtype=np.int32)])
        n = len(self.topics)
        judgments = Judgments(n, topic, grade)
        scored: list[pd.DataFrame] = []
        for (run_topic, run_grade, _), (open_keys, open_rows) in zip(
            self.runs, self.unjudged, strict=True
        ):
            grades = run_grade
            if len(added):
                grades = run_grade.copy()  # both sorted: one walk of the added pairs
                grades[open_rows[find_sorted(added, open_keys)[1]]] = 1
            inputs = MeasureInputs(n, Ranking(n, run_topic, grades), judgments)
            values, means = measure(chosen, inputs, np.ones(n, dtype=bool), np.ones(n))
            evaluation = Evaluation(chosen, self.topics, values, means, {"ordering": "given"})
            scored.append(evaluation.per_query)
        return scored


def find_sorted(
    ordered: NDArray[np.int64], keys: NDArray[np.int64]
) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """Where each of ``keys`` is in the sorted ``ordered`` (a valid index, meaningful only where
    found), and whether it is there."""
    import numpy as np

    if not len(ordered):
        return np.zeros(len(keys), dtype=np.intp), np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    found: NDArray[np.bool_] = ordered[at] == keys
    return at, found


def _unique(keys: NDArray[np.int64]) -> bool:
    import numpy as np

    return not _repeats(np.sort(keys, kind="stable"))


def _repeats(ordered: NDArray[np.int64]) -> bool:
    """Does the sorted ``ordered`` hold a value twice?"""
    return bool((ordered[1:] == ordered[:-1]).any())


def _in_order(topic: NDArray[np.int64], rank: NDArray[np.int64]) -> bool:
    """Are the rows by topic, then rank (ties kept in place), as ``np.lexsort`` would put them?"""
    import numpy as np

    if len(topic) < 2:
        return True
    step = np.diff(topic)
    return bool(((step > 0) | ((step == 0) & (np.diff(rank) >= 0))).all())
