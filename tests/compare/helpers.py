"""Runs built through the Store API from given rankings, for comparison tests."""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
from sqlalchemy import update

from evalplat.db.models import Run
from evalplat.running.runner import evaluation_record
from evalplat.store import QueryOutcome, Store
from evalplat.testsets.content import TestSetContent

METRICS = ["nDCG@10", "P@5", "AP", "Judged@10"]


def content(queries: int = 40, relevant: int = 6) -> TestSetContent:
    """Queries q00.. with documents qNN-d0 .. qNN-d{relevant-1} judged relevant (grade 2 for
    the first half, 1 after) and qNN-n0..n9 judged non-relevant."""
    ids = [f"q{n:02d}" for n in range(queries)]
    frame = pd.DataFrame(
        {
            "query_id": ids,
            "text": [f"topic {n}" for n in range(queries)],
            "weight": [float("nan")] * queries,
            "tags": [None] * queries,
        }
    )
    rows = []
    for q in ids:
        rows += [(q, f"{q}-d{i}", 2 if i < relevant // 2 else 1, None) for i in range(relevant)]
        rows += [(q, f"{q}-n{i}", 0, None) for i in range(10)]
    judgments = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade", "source"])
    judgments["grade"] = judgments["grade"].astype("int64")
    return TestSetContent(queries=frame, judgments=judgments)


def one_query_content(grade: int) -> TestSetContent:
    """One query, ``q1``, with ``d1`` graded 1 and ``d2`` graded ``grade``: a new grade of
    ``d2`` is a new version of judgments and nothing else."""
    queries = pd.DataFrame({"query_id": ["q1"], "text": ["a"], "weight": [float("nan")],
                            "tags": [None]})  # fmt: skip
    judgments = pd.DataFrame(
        {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "grade": [1, grade], "source": None}
    )
    return TestSetContent(queries=queries, judgments=judgments)


def store_run(
    store: Store,
    config: str,
    test_set: str,
    rankings: dict[str, list[str]],
    *,
    label: str | None = None,
    status: str = "complete",
    metrics: list[str] | None = None,
    params: dict[str, object] | None = None,
) -> int:
    """A finished run of ``config`` (a python-searcher config, never searched) with these
    rankings, scored against the test set's latest version; returns its id."""
    store.add_config(config, "python", {"function": "json:loads", **(params or {})}, label=label)
    version_id = store.test_set_version_id(test_set)
    loaded = store.load_test_set(test_set)
    run_id = store.create_run(
        store.config_version_id(config), version_id, depth=20, queries_total=len(loaded.queries)
    )
    outcomes = [
        QueryOutcome(
            q,
            "failed" if status == "partial" and i == 0 else "ok",
            [(doc, float(100 - rank)) for rank, doc in enumerate(docs)],
        )
        for i, (q, docs) in enumerate(sorted(rankings.items()))
    ]
    store.record_outcomes(run_id, outcomes)
    results = pd.DataFrame(
        [
            (o.query_id, doc, rank, score)
            for o in outcomes
            if o.status == "ok"
            for rank, (doc, score) in enumerate(o.hits, start=1)
        ],
        columns=["query_id", "doc_id", "rank", "score"],
    )
    record = evaluation_record(loaded, results, metrics or METRICS, version_id)
    store.finish_run(run_id, status, evaluation=record)
    return run_id


def date_a_day_apart(store: Store, run_ids: list[int], last: datetime) -> None:
    """Date the runs as nightly runs are, a day apart, the last of them at ``last``. Runs stored
    in a loop are stamped seconds apart and unevenly on a busy machine, so a trend over their
    start times would depend on the machine, not on the figures."""
    with store.session() as session:
        for back, run_id in enumerate(reversed(run_ids)):
            started = last - timedelta(days=back)
            session.execute(
                update(Run)
                .where(Run.id == run_id)
                .values(started_at=started, finished_at=started + timedelta(minutes=2))
            )


def good_rankings(content_: TestSetContent, hits: int = 4) -> dict[str, list[str]]:
    """Per query: ``hits`` relevant documents first, then non-relevant ones."""
    rankings = {}
    for q in content_.queries["query_id"]:
        rankings[q] = [f"{q}-d{i}" for i in range(hits)] + [f"{q}-n{i}" for i in range(8)]
    return rankings
