"""Columnar bulk writes run in the caller's transaction: a write that fails part-way leaves
nothing behind, on SQLite (a scratch file copied by INSERT ... SELECT, ``ROWS`` being above
``MIN_STAGED_ROWS``; executemany for small batches) and PostgreSQL (COPY) alike."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy import func, select

from evalplat.db.bulk import insert_columns, read_frame
from evalplat.db.models import (
    Document,
    Judgment,
    JudgmentCopy,
    Query,
    Result,
    RunQuery,
    TestSet,
    TestSetVersion,
)
from evalplat.db.sqlite_stage import MIN_STAGED_ROWS
from evalplat.store import QueryOutcome, Store
from evalplat.testsets.content import TestSetContent

ROWS = 20_000
assert ROWS > MIN_STAGED_ROWS  # the large writes below take the staged path on SQLite


def _content(queries: int, *, broken: bool = False) -> TestSetContent:
    ids = [f"q{i}" for i in range(queries)]
    docs: list[str | None] = [f"d{i}" for i in range(queries)]
    if broken:
        docs[-1] = None  # the last judgment breaks a NOT NULL key only the database checks
    return TestSetContent(
        queries=pd.DataFrame(
            {
                "query_id": ids,
                "text": ids,
                "weight": [float("nan")] * queries,
                "tags": [None] * queries,
            }
        ),
        judgments=pd.DataFrame(
            {"query_id": ids, "doc_id": docs, "grade": [1] * queries, "source": [None] * queries}
        ),
        documents=pd.DataFrame(
            {
                "doc_id": [f"d{i}" for i in range(queries)],
                "title": "t",
                "text": "x",
                "fields": [None] * queries,
            }
        ),
    )


def _count(store: Store, model: type) -> int:
    with store.session() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def test_a_test_set_import_failing_at_its_last_judgment_leaves_nothing(store: Store) -> None:
    with pytest.raises(Exception, match=r"(?i)null"):
        store.import_test_set("broken", _content(ROWS, broken=True))
    for model in (TestSet, TestSetVersion, Query, Judgment, JudgmentCopy, Document):
        assert _count(store, model) == 0, model.__tablename__
    # the same content without the bad row imports whole
    store.import_test_set("broken", _content(ROWS))
    assert _count(store, Judgment) == ROWS and _count(store, Query) == ROWS


def test_a_results_batch_failing_part_way_leaves_the_earlier_batches_only(store: Store) -> None:
    store.import_test_set("t", _content(200))
    store.add_config("c", "python", {"function": "json:loads"})
    run_id = store.create_run(
        store.config_version_id("c"), store.test_set_version_id("t"), depth=100, queries_total=200
    )
    hits: list[tuple[str, float | None]] = [(f"d{r}", float(100 - r)) for r in range(100)]
    store.record_outcomes(run_id, [QueryOutcome(f"q{i}", "ok", hits) for i in range(100)])
    bad = [*hits[:-1], (None, 0.0)]  # NOT NULL doc id, in the batch's very last row
    batch = [QueryOutcome(f"q{i}", "ok", hits) for i in range(100, 199)]
    batch.append(QueryOutcome("q199", "ok", bad))  # type: ignore[list-item]
    with pytest.raises(Exception, match=r"(?i)null"):
        store.record_outcomes(run_id, batch)
    assert _count(store, RunQuery) == 100
    assert _count(store, Result) == 100 * 100
    results = store.load_results(run_id)
    assert sorted(set(results["query_id"])) == sorted(f"q{i}" for i in range(100))


def test_columns_written_then_a_failing_write_roll_back_together(store: Store) -> None:
    store.import_test_set("t", _content(10))
    with store.session() as session:
        version = session.scalar(select(TestSetVersion.id))
    assert version is not None
    columns = {
        "test_set_version_id": version,
        "query_id": [f"x{i}" for i in range(ROWS)],
        "doc_id": pd.Series([f"d{i}" for i in range(ROWS)]),
        "grade": pd.Series(range(ROWS)) % 4,
        "source": None,
    }
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"), store.session() as session:
        assert insert_columns(session, Judgment, columns) == ROWS
        insert_columns(session, Judgment, {**columns, "query_id": ["x0"] * ROWS})  # duplicates
    assert _count(store, Judgment) == 10


def test_columns_round_trip_with_empty_text_nulls_and_exact_floats(store: Store) -> None:
    store.import_test_set("t", _content(3))
    store.add_config("c", "python", {"function": "json:loads"})
    run_id = store.create_run(
        store.config_version_id("c"), store.test_set_version_id("t"), depth=3, queries_total=3
    )
    scores = [0.1 + 0.2, None, 1e-300]
    with store.session() as session:
        insert_columns(
            session,
            Result,
            {
                "run_id": run_id,
                "query_id": ["q0", "q0", "q1"],
                "rank": [1, 2, 1],
                "doc_id": ["", 'a,"b"\n', "ü\\N"],
                "score": scores,
            },
        )
        frame = read_frame(
            session,
            select(Result.query_id, Result.doc_id, Result.rank, Result.score)
            .where(Result.run_id == run_id)
            .order_by(Result.query_id, Result.rank),
            ["query_id", "doc_id", "rank", "score"],
            {"query_id": "str", "doc_id": "str", "rank": "int64", "score": "float64"},
        )
    assert list(frame["doc_id"]) == ["", 'a,"b"\n', "ü\\N"]
    assert list(frame["rank"]) == [1, 2, 1] and frame["rank"].dtype == "int64"
    assert frame["score"].iloc[0] == 0.1 + 0.2 and frame["score"].iloc[2] == 1e-300
    assert pd.isna(frame["score"].iloc[1])


def test_a_read_that_finds_no_rows_gives_an_empty_typed_frame(store: Store) -> None:
    with store.session() as session:
        frame = read_frame(
            session,
            select(Judgment.query_id, Judgment.grade).where(Judgment.query_id == "none"),
            ["query_id", "grade"],
            {"query_id": "str", "grade": "int64"},
        )
    assert list(frame.columns) == ["query_id", "grade"] and len(frame) == 0
    # no rows: a text column is still text, so that it joins with other text columns
    assert frame["query_id"].dtype == object and frame["grade"].dtype == "int64"


def test_a_read_with_an_in_list_binds_each_value(store: Store) -> None:
    store.import_test_set("t", _content(5))
    with store.session() as session:
        frame = read_frame(
            session,
            select(Judgment.query_id, Judgment.grade).where(
                Judgment.query_id.in_(["q1", "q3", "nope"])
            ),
            ["query_id", "grade"],
            {"query_id": "str", "grade": "int64"},
        )
    assert sorted(frame["query_id"]) == ["q1", "q3"]
