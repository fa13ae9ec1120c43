"""Scoring a searched run and setting its final status: ``score_and_finish``, and the
evaluation record of ranked results (``evaluation_record``) that ``rescore`` stores too.

Scores are computed in the engine's order (``ordering="given"``) and saved with the final status
in one transaction: a process killed at any moment leaves a ``running`` run that readers show as
``interrupted``, never one that looks complete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalplat.store.runs import EvaluationRecord, RunInfo

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent


def evaluation_record(
    content: TestSetContent,
    results: pd.DataFrame,
    metrics: list[str],
    test_set_version_id: int,
    outcomes: pd.DataFrame | None = None,
    documents: pd.DataFrame | None = None,
) -> EvaluationRecord:
    """Score ranked ``results`` (``query_id, doc_id, rank, score``) against ``content``'s
    judgments with the evaluation engine, in the given (stored) order, over the test set's
    queries as topics. Means are weighted by the queries' weights when any query has one (a
    query without a weight counts 1), as comparisons weigh them.

    ``outcomes`` (``Store.run_outcomes``) are the run's records: measures that read them
    (``Latency``) are scored only when some query has a recorded latency, so an imported run
    has no latency scores rather than zeros; a query without one has no row for them.
    ``documents`` (``Store.result_fields``) feed measures of document fields (``Diversity``).
    """
    import math

    import pandas as pd

    from evalplat.metrics.evaluation import evaluate
    from evalplat.metrics.registry import parse

    records = _records(outcomes)
    if records is None:
        metrics = [m for m in metrics if "records" not in parse(m).spec.inputs]
    run_frame = results.sort_values(["query_id", "rank"], kind="stable")[
        ["query_id", "doc_id", "rank", "score"]
    ].reset_index(drop=True)
    topics = list(content.queries["query_id"])
    given = content.queries.dropna(subset=["weight"])
    weights = dict(zip(given["query_id"], given["weight"], strict=True)) if len(given) else None
    scored = evaluate(
        content.qrels[["query_id", "doc_id", "grade"]],
        run_frame,
        metrics,
        ordering="given",
        topics=topics,
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
        str(metric): (float(value), len(topics))
        for metric, value in scored.means.items()
        if not math.isnan(value)
    }
    options = {"ordering": "given", "metrics": metrics, "topics": len(topics)}
    if weights is not None:
        options["weighted"] = True
    return EvaluationRecord(test_set_version_id, columns, means, options)


def document_fields(store: Store, run_id: int, metrics: list[str]) -> pd.DataFrame | None:
    """The run's document field values when a metric reads them, else None (not read)."""
    from evalplat.metrics.registry import parse

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


def score_and_finish(
    store: Store, run_id: int, content: TestSetContent, metrics: list[str]
) -> RunInfo:
    """Score the stored results and set the final status, in one transaction."""
    outcomes = store.run_outcomes(run_id)
    ok = int((outcomes["status"] == "ok").sum())
    failed = int((outcomes["status"] == "failed").sum())
    missing = len(content.queries) - ok - failed
    if ok == 0:
        first = outcomes.loc[outcomes["status"] == "failed", "error"]
        reason = f"; first error: {first.iloc[0]}" if len(first) else ""
        return store.finish_run(
            run_id, "failed", error=f"all {failed + missing} queries failed{reason}"
        )
    info = store.run_info(run_id)
    record = evaluation_record(
        content,
        store.load_results(run_id),
        metrics,
        info.test_set_version_id,
        outcomes,
        document_fields(store, run_id, metrics),
    )
    if failed == 0 and missing == 0:
        return store.finish_run(run_id, "complete", evaluation=record)
    problem = f"{failed + missing} of {len(content.queries)} queries failed"
    return store.finish_run(run_id, "partial", error=problem, evaluation=record)
