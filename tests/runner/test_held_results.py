"""A new run is scored from the results held in memory as they were searched: they must be the
rows the store keeps, typed and ordered as a read gives them, on both backends."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from evalplat.db.bulk import read_frame
from evalplat.db.models import Result
from evalplat.running import runner
from evalplat.running.run_scoring import HeldRun
from evalplat.store import QueryOutcome, Store
from evalplat.store.run_reads import RESULT_TYPES
from evalplat.testsets.content import TestSetContent

# ids whose byte order differs from a case-insensitive or accent-aware one
QUERY_IDS = ["q10", "Q2", "q2", "é1", "e2", "q1", "z0"]

SEARCHER = """
def search(text, depth):
    if text == "boom":
        raise RuntimeError("the engine broke")
    if text == "nothing":
        return []
    n = len(text)
    ranking = [("d%d" % ((n + k) % 9), None if k == 2 else float(10 - k)) for k in range(6)]
    return ranking[:depth]
"""


def _content() -> TestSetContent:
    texts = ["topic one", "boom", "a", "nothing", "topic four", "xx", "the last topic"]
    queries = pd.DataFrame(
        {"query_id": QUERY_IDS, "text": texts, "weight": [float("nan")] * 7, "tags": [None] * 7}
    )
    judged = sorted({(q, f"d{(i * 2 + k) % 9}", 1 + k % 2) for i, q in enumerate(QUERY_IDS)
                     for k in range(4)})  # fmt: skip
    judgments = pd.DataFrame(
        [(q, d, g, None) for q, d, g in judged], columns=["query_id", "doc_id", "grade", "source"]
    )
    judgments["grade"] = judgments["grade"].astype("int64")
    return TestSetContent(queries=queries, judgments=judgments)


def _stored(store: Store, run_id: int) -> pd.DataFrame:
    columns = list(RESULT_TYPES)
    with store.session() as session:
        return read_frame(
            session,
            select(*(getattr(Result, c) for c in columns))
            .where(Result.run_id == run_id)
            .order_by(Result.query_id, Result.rank),
            columns,
            RESULT_TYPES,
        )


def test_a_new_run_keeps_and_scores_exactly_the_rows_it_stored(
    store: Store, tmp_path: Path
) -> None:
    (tmp_path / "held_engine.py").write_text(SEARCHER, encoding="utf-8")
    store.import_test_set("mixed", _content())
    store.add_config("engine", "python", {"function": "held_engine:search", "path": str(tmp_path)})
    settings = runner.RunSettings(depth=5, concurrency=3, batch_size=2, cache_dir=tmp_path)
    metrics = ["nDCG@10", "P@1", "AP", "Judged@5"]
    info = runner.run(store, "engine", "mixed", metrics=metrics, settings=settings)
    assert info.status == "partial" and info.queries_failed == 1

    stored = _stored(store, info.id)
    assert len(stored) == 5 * 5  # five queries with results, "boom" failed, "nothing" empty
    kept = store.load_results(info.id)  # the frame the run was scored from
    pd.testing.assert_frame_equal(kept.reset_index(drop=True), stored)

    first = store.evaluation_scores(info.id)
    rescored = runner.rescore(store, info.id, metrics=metrics)
    assert rescored.means == info.means
    pd.testing.assert_frame_equal(store.evaluation_scores(info.id), first)


def test_held_outcomes_and_results_read_as_the_store_reads_them(store: Store) -> None:
    store.import_test_set("mixed", _content())
    store.add_config("engine", "python", {"function": "json:loads"})
    run_id = store.create_run(
        store.config_version_id("engine"),
        store.test_set_version_id("mixed"),
        depth=5,
        queries_total=len(QUERY_IDS),
    )
    held = HeldRun(whole=True)
    batches = [
        [
            QueryOutcome("q2", "ok", [("d1", 2.0), ("d0", None)], latency_ms=3.5, attempts=2),
            QueryOutcome("é1", "failed", attempts=3, error="timed out"),
        ],
        [
            QueryOutcome("Q2", "ok", [("d7", 1.5)], latency_ms=1.0),
            QueryOutcome("q10", "ok", [], latency_ms=0.5),
            QueryOutcome("e2", "ok", [("d3", 0.0), ("d4", -1.0), ("d5", -2.0)]),
        ],
    ]
    for batch in batches:
        store.record_outcomes(run_id, batch, results=held.add(run_id, batch))

    pd.testing.assert_frame_equal(held.outcomes(), store.run_outcomes(run_id))
    pd.testing.assert_frame_equal(held.results(), _stored(store, run_id))
    assert list(held.results()["query_id"]) == ["Q2", "e2", "e2", "e2", "q2", "q2"]


def test_a_resumed_run_holds_nothing_and_is_read_back() -> None:
    held = HeldRun(whole=False)
    columns = held.add(1, [QueryOutcome("q1", "ok", [("d1", 1.0)])])
    assert columns is not None and columns["doc_id"].to_pylist() == ["d1"]
    assert held.results().empty and held.outcomes().empty


_ID = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(_ID, st.integers(0, 4)), max_size=6),
        max_size=5,
    )
)
def test_held_batches_are_ordered_as_sorting_every_row_orders_them(
    batches: list[list[tuple[str, int]]],
) -> None:
    """Whole queries move together (their order is found among the queries); a query held
    twice, as a whole run never holds one, falls back to sorting every row: either way the
    table is the one a sort by query id and rank gives."""
    held = HeldRun(whole=True)
    rows = []  # (query id, doc id, rank, score) in the order they were held
    for number, batch in enumerate(batches):
        ranked = {q: [(f"d{number}-{k}", float(-k)) for k in range(n)] for q, n in batch}
        held.add(1, [QueryOutcome(q, "ok", hits) for q, hits in ranked.items()])
        rows += [(q, d, r, v) for q in sorted(ranked) for r, (d, v) in enumerate(ranked[q], 1)]
    table = held.table()
    assert table.column_names == list(RESULT_TYPES)
    # a stable sort: a query held twice keeps its batches in the order they came
    expected = sorted(rows, key=lambda row: (row[0], row[2]))
    assert list(zip(*table.to_pydict().values(), strict=True)) == expected
