"""Scoring a searched run and setting its final status: ``score_and_finish``, and the
evaluation record of ranked results (``evaluation_record``) that ``rescore`` stores too.

Scores are computed in the engine's order (``ordering="given"``) and saved with the final status
in one transaction: a process killed at any moment leaves a ``running`` run that readers show as
``interrupted``, never one that looks complete.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalplat.metrics.numbers import counted
from evalplat.store.run_figures import PEOPLE
from evalplat.store.run_reads import OUTCOME_TYPES, RESULT_TYPES
from evalplat.store.run_rows import result_columns_of
from evalplat.store.runs import EvaluationRecord, QueryOutcome, RunInfo

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from evalplat.metrics.build import CodedQrels
    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent


def evaluation_record(
    content: TestSetContent,
    results: pd.DataFrame | pa.Table,
    metrics: list[str],
    test_set_version_id: int,
    outcomes: pd.DataFrame | None = None,
    documents: pd.DataFrame | None = None,
) -> EvaluationRecord:
    """Score ranked ``results`` (``query_id, doc_id, rank, score``, a frame or a pyarrow
    Table, rows in any order) against ``content``'s judgments with the evaluation engine, in the
    given (stored) order, over the test set's queries as topics. Means are weighted by the
    queries' weights when any query has one (a query without a weight counts 1), as
    comparisons weigh them.

    ``outcomes`` (``Store.run_outcomes``) are the run's records: measures that read them
    (``Latency``) are scored only when some query has a recorded latency, so an imported run
    has no latency scores rather than zeros; a query without one has no row for them.
    ``documents`` (``Store.result_fields``) feed measures of document fields (``Diversity``).
    """
    import math

    import pandas as pd

    from evalplat.metrics.evaluation import evaluate
    from evalplat.metrics.names import parse

    records = _records(outcomes)
    if records is None:
        metrics = [m for m in metrics if "records" not in parse(m).spec.inputs]
    # in any row order: the engine orders by query and rank (stably, and not at all when they
    # come so already, as stored results do)
    ranked = ["query_id", "doc_id", "rank", "score"]
    run_frame = results[ranked] if isinstance(results, pd.DataFrame) else results.select(ranked)
    n_topics = len(content.queries)
    given = content.queries.dropna(subset=["weight"])
    weights = dict(zip(given["query_id"], given["weight"], strict=True)) if len(given) else None
    scored = evaluate(
        _coded_qrels(content),
        run_frame,
        metrics,
        ordering="given",
        weights=weights,
        records=records,
        documents=documents,
    )
    per_query = scored.per_query
    values = per_query["value"].astype(float)
    scored_rows = values.notna()  # a measure with nothing to score for a query has no row
    columns = pd.DataFrame(
        {
            "metric": per_query["metric"].astype(str)[scored_rows],
            "query_id": per_query["query_id"].astype(str)[scored_rows],
            "value": values[scored_rows],
        }
    ).reset_index(drop=True)
    means = {
        str(metric): (float(value), n_topics)
        for metric, value in scored.means.items()
        if not math.isnan(value)
    }
    # the figures are people's grades alone (``TestSetContent.people_qrels``); a judge's grades
    # count only where a gate lets them in (``evalplat.comparison.model_views``)
    options = {"ordering": "given", "metrics": metrics, "topics": n_topics, "grades": PEOPLE}
    if weights is not None:
        options["weighted"] = True
    return EvaluationRecord(test_set_version_id, columns, means, options)


# each test set version's judgments coded once for all the runs scored on it (a night scores
# every config against the same content); an entry goes with its content
_CODED: weakref.WeakKeyDictionary[TestSetContent, CodedQrels] = weakref.WeakKeyDictionary()


def _coded_qrels(content: TestSetContent) -> CodedQrels:
    """``content``'s judgments coded over its queries as topics, the same object each time."""
    from evalplat.metrics.evaluation import coded_qrels

    coded = _CODED.get(content)
    if coded is None:
        judged = content.people_qrels[["query_id", "doc_id", "grade"]]
        coded = _CODED[content] = coded_qrels(judged, list(content.queries["query_id"]))
    return coded


def document_fields(store: Store, run_id: int, metrics: list[str]) -> pd.DataFrame | None:
    """The run's document field values when a metric reads them, else None (not read)."""
    from evalplat.metrics.names import parse

    fields = [
        str(metric.param("field"))
        for metric in (parse(m) for m in metrics)
        if "documents" in metric.spec.inputs
    ]
    return store.result_fields(run_id, fields) if fields else None


def _records(outcomes: pd.DataFrame | None) -> pd.DataFrame | None:
    """The run's per-query records for the evaluation, or None when no latency was recorded."""
    if outcomes is None or not len(outcomes) or outcomes["latency_ms"].isna().all():
        return None
    return outcomes[["query_id", "latency_ms", "results_count"]].rename(
        columns={"results_count": "results"}
    )


class HeldRun:
    """A run's outcomes and ranked results as this process searched them, kept in memory from
    the search to the scoring, so that the run is not read back from the store.

    ``whole``: nothing of the run was stored before this process searched it (a new run), so
    what is held is the whole run. A resumed run holds only its newly searched queries and is
    read back from the store to be scored. Results are held as Arrow columns, one table per
    stored batch, the same columns the batch was written from.
    """

    def __init__(self, *, whole: bool) -> None:
        self.whole = whole
        self._outcomes: list[tuple[str, str, float | None, int, int, str | None]] = []
        self._results: list[pa.Table] = []
        # each held batch's queries with results, in its rows' order, and their row counts
        self._queries: list[tuple[str, int]] = []
        self._table: pa.Table | None = None  # the batches concatenated and sorted, once

    def add(self, run_id: int, outcomes: Sequence[QueryOutcome]) -> dict[str, Any] | None:
        """Hold a batch (when holding the whole run); return its result columns
        (``result_columns_of``, Arrow arrays) for the store to write, None when it has no
        results."""
        import pyarrow as pa

        columns = result_columns_of(run_id, outcomes)
        if not self.whole:
            return columns
        self._outcomes += [
            (o.query_id, o.status, o.latency_ms, o.attempts, len(o.hits), o.error) for o in outcomes
        ]
        if columns is None:
            return None
        self._results.append(pa.table({name: columns[name] for name in RESULT_TYPES}))
        # as result_columns_of orders a batch: by query id, each query's hits in rank order
        self._queries += sorted((o.query_id, len(o.hits)) for o in outcomes if o.hits)
        self._table = None
        return columns

    def outcomes(self) -> pd.DataFrame:
        """As ``Store.run_outcomes`` reads them: by query id, typed the same."""
        import pandas as pd

        from evalplat.db.bulk import typed_frame

        rows = sorted(self._outcomes, key=lambda row: row[0])
        frame = pd.DataFrame(rows, columns=list(OUTCOME_TYPES))
        return typed_frame(frame, OUTCOME_TYPES)

    def table(self) -> pa.Table:
        """The held results as Arrow columns ``query_id, doc_id, rank, score``, ordered as
        ``results``: the columns the run's copy is written from (``Store.finish_run``)."""
        import pyarrow as pa

        if self._table is None:
            if self._results:
                table = pa.concat_tables(self._results)
            else:
                schema = {"query_id": pa.string(), "doc_id": pa.string()}
                schema |= {"rank": pa.int64(), "score": pa.float64()}
                table = pa.schema(list(schema.items())).empty_table()
            self._table = _by_query(table, self._queries).select(list(RESULT_TYPES))
        return self._table

    def results(self) -> pd.DataFrame:
        """As ``Store.load_results`` reads them: ``query_id, doc_id, rank, score`` by query id
        (byte order, the store's) then rank, typed the same."""
        from evalplat.db.bulk import typed_frame

        return typed_frame(self.table().to_pandas(), RESULT_TYPES)


def _by_query(table: pa.Table, queries: list[tuple[str, int]]) -> pa.Table:
    """``table`` (held batches, each by query id then rank) by query id then rank, as
    ``sort_by`` would order it: a whole query's rows move together, so the order is found
    among the run's queries, not its million rows. A query held twice (never in a whole run)
    leaves it to ``sort_by``."""
    import numpy as np

    counts = np.fromiter((count for _, count in queries), np.int64, len(queries))
    if int(counts.sum()) != table.num_rows or len({q for q, _ in queries}) != len(queries):
        return table.sort_by([("query_id", "ascending"), ("rank", "ascending")])
    # code-point order of str is the byte order of UTF-8, the order Arrow sorts strings in
    order = sorted(range(len(queries)), key=lambda i: queries[i][0])
    if order == list(range(len(queries))):
        return table
    starts = np.cumsum(counts) - counts
    wanted = np.asarray(order, dtype=np.int64)
    sizes = counts[wanted]
    # each wanted query's rows, start to end: one arange shifted per query
    shift = np.repeat(starts[wanted] - (np.cumsum(sizes) - sizes), sizes)
    return table.take(np.arange(int(sizes.sum()), dtype=np.int64) + shift)


def score_and_finish(
    store: Store,
    run_id: int,
    content: TestSetContent,
    metrics: list[str],
    held: HeldRun | None = None,
) -> RunInfo:
    """Score the run's results and set the final status, in one transaction. The results and
    outcomes are ``held``'s when it holds the whole run, else read from the store."""
    whole = held is not None and held.whole
    outcomes = held.outcomes() if held is not None and whole else store.run_outcomes(run_id)
    ok = int((outcomes["status"] == "ok").sum())
    failed = int((outcomes["status"] == "failed").sum())
    missing = len(content.queries) - ok - failed
    if ok == 0:
        first = outcomes.loc[outcomes["status"] == "failed", "error"]
        reason = f"; first error: {first.iloc[0]}" if len(first) else ""
        return store.finish_run(
            run_id, "failed", error=f"all {counted(failed + missing, 'query')} failed{reason}"
        )
    info = store.run_info(run_id)
    results = held.results() if held is not None and whole else store.load_results(run_id)
    record = evaluation_record(
        content,
        results,
        metrics,
        info.test_set_version_id,
        outcomes,
        document_fields(store, run_id, metrics),
    )
    # a whole run held: the frame is kept for its comparison, its Arrow columns become the copy
    kept = results if whole else None
    table = held.table() if held is not None and whole else None
    status, problem = "complete", None
    if failed or missing:
        total = counted(len(content.queries), "query")
        status, problem = "partial", f"{failed + missing} of {total} failed"
    return store.finish_run(
        run_id, status, error=problem, evaluation=record, results=kept, result_table=table
    )
