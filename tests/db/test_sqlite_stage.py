"""Large SQLite writes go through a scratch file (evalplat.db.sqlite_stage): the rows they store
are the rows executemany stores, value for value and type for type, and no scratch file
outlives its session, whether the write succeeds or fails."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select, text

from evalplat.db.bulk import insert_columns
from evalplat.db.models import Judgment, Result, TestSetVersion
from evalplat.db.sqlite_stage import MIN_STAGED_ROWS
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

ROWS = MIN_STAGED_ROWS + 1_000
TEXTS = ["tab\there", "new\nline", "back\\slash \\N", "ünïcödé ✓", "", "'quote\"", "x" * 200]


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Store:
    return Store.init(f"sqlite:///{tmp_path / 'stage.db'}")


def _versions(store: Store) -> list[int]:
    for name in ("a", "b"):
        store.import_test_set(
            name,
            TestSetContent(
                queries=pd.DataFrame(
                    {"query_id": ["q"], "text": ["q"], "weight": [float("nan")], "tags": [None]}
                ),
                judgments=pd.DataFrame(
                    {"query_id": ["q"], "doc_id": [name], "grade": [1], "source": [None]}
                ),
            ),
        )
    with store.session() as session:
        return list(session.scalars(select(TestSetVersion.id).order_by(TestSetVersion.id)))


def _stored(store: Store, sql: str, key: int) -> list[tuple[object, ...]]:
    with store.session() as session:
        return [tuple(row) for row in session.execute(text(sql), {"key": key})]


def test_staged_and_row_by_row_writes_store_the_same_values_and_types(
    sqlite_store: Store,
) -> None:
    staged_version, small_version = _versions(sqlite_store)
    columns = {
        "query_id": [f"{TEXTS[i % len(TEXTS)]}{i}" for i in range(ROWS)],
        "doc_id": [TEXTS[i % len(TEXTS)] for i in range(ROWS)],
        "grade": pd.Series(range(ROWS)) % 5 - 1,
        "source": [None if i % 3 == 0 else TEXTS[i % len(TEXTS)][:40] for i in range(ROWS)],
    }
    with sqlite_store.session() as session:
        insert_columns(session, Judgment, {"test_set_version_id": staged_version, **columns})
        for start in range(0, ROWS, MIN_STAGED_ROWS - 1):  # each part small: executemany
            part = {name: values[start : start + MIN_STAGED_ROWS - 1] for name, values in
                    columns.items()}  # fmt: skip
            insert_columns(session, Judgment, {"test_set_version_id": small_version, **part})
    sql = (
        "SELECT query_id, doc_id, grade, source, typeof(grade), typeof(source) FROM judgment "
        "WHERE test_set_version_id = :key AND query_id <> 'q' ORDER BY query_id, doc_id"
    )
    staged = _stored(sqlite_store, sql, staged_version)
    assert len(staged) == ROWS
    assert staged == _stored(sqlite_store, sql, small_version)
    assert {row[5] for row in staged} == {"null", "text"}


def test_staged_results_keep_floats_nulls_and_json_text(sqlite_store: Store) -> None:
    _versions(sqlite_store)
    sqlite_store.add_config("c", "python", {"function": "json:loads"})
    runs = [
        sqlite_store.create_run(
            sqlite_store.config_version_id("c"),
            sqlite_store.test_set_version_id("a"),
            depth=ROWS,
            queries_total=1,
        )
        for _ in range(2)
    ]
    scores = [[0.1 + 0.2, None, float("nan"), 1e-300, -0.0][i % 5] for i in range(ROWS)]
    fields = [None if i % 2 else '{"title": "ü"}' for i in range(ROWS)]
    columns: dict[str, object] = {
        "query_id": "q",
        "rank": list(range(1, ROWS + 1)),
        "doc_id": [f"d{i}" for i in range(ROWS)],
        "score": scores,
        "fields": fields,
    }
    with sqlite_store.session() as session:
        insert_columns(session, Result, {"run_id": runs[0], **columns})
        for start in range(0, ROWS, 1_000):
            part = {n: v if isinstance(v, str) else v[start : start + 1_000]
                    for n, v in columns.items()}  # fmt: skip
            insert_columns(session, Result, {"run_id": runs[1], **part})
    sql = (
        "SELECT query_id, rank, doc_id, score, typeof(score), fields, typeof(fields) "
        "FROM result WHERE run_id = :key ORDER BY rank"
    )
    staged = _stored(sqlite_store, sql, runs[0])
    assert staged == _stored(sqlite_store, sql, runs[1])
    assert staged[0][3] == 0.1 + 0.2 and staged[3][3] == 1e-300
    assert staged[1][4] == staged[2][4] == "null"  # None and NaN alike


def test_no_scratch_file_outlives_a_write_that_worked_or_failed(
    sqlite_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    version = _versions(sqlite_store)[0]
    columns = {"test_set_version_id": version, "query_id": [f"x{i}" for i in range(ROWS)],
               "doc_id": "d", "grade": 1, "source": None}  # fmt: skip
    with sqlite_store.session() as session:
        assert insert_columns(session, Judgment, columns) == ROWS
        assert not list(scratch.iterdir())  # unlinked once copied, before the commit
    with pytest.raises(Exception, match=r"(?i)unique"), sqlite_store.session() as session:
        insert_columns(session, Judgment, columns)
    assert not list(scratch.iterdir())
    with sqlite_store.session() as session:
        count = session.scalar(text("SELECT count(*) FROM judgment WHERE query_id LIKE 'x%'"))
    assert count == ROWS


def test_rows_still_go_in_when_no_scratch_file_can_be_made(
    sqlite_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    version = _versions(sqlite_store)[0]
    columns = {"test_set_version_id": version, "query_id": [f"x{i}" for i in range(ROWS)],
               "doc_id": "d", "grade": 1, "source": None}  # fmt: skip
    with sqlite_store.session() as session:
        assert insert_columns(session, Judgment, columns) == ROWS
    with sqlite_store.session() as session:
        count = session.scalar(text("SELECT count(*) FROM judgment WHERE query_id LIKE 'x%'"))
    assert count == ROWS


def test_more_large_writes_in_one_transaction_than_sqlite_can_attach(sqlite_store: Store) -> None:
    version = _versions(sqlite_store)[0]
    with sqlite_store.session() as session:
        for part in range(12):  # SQLite attaches at most 10 databases to one connection
            columns = {"test_set_version_id": version, "doc_id": "d", "grade": 1, "source": None,
                       "query_id": [f"p{part}-{i}" for i in range(ROWS)]}  # fmt: skip
            assert insert_columns(session, Judgment, columns) == ROWS
    with sqlite_store.session() as session:
        count = session.scalar(text("SELECT count(*) FROM judgment WHERE query_id LIKE 'p%'"))
    assert count == 12 * ROWS


def test_a_pooled_connection_gives_back_its_scratch_files_so_every_write_stays_staged(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scratch file stays attached until its transaction ends; the store's connections go
    back to a pool, which detaches them there: twelve writes in twelve sessions (SQLite
    attaches at most ten files to a connection) are all staged, and nothing stays attached."""
    import evalplat.db.bulk as bulk
    from evalplat.db import sqlite_stage

    version = _versions(sqlite_store)[0]
    staged: list[bool] = []
    real = sqlite_stage.staged_insert

    def counted(*args: object, **kwargs: object) -> bool:
        staged.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return staged[-1]

    monkeypatch.setattr(bulk, "staged_insert", counted)
    for n in range(12):
        columns = {"test_set_version_id": version, "query_id": [f"p{n}-{i}" for i in range(ROWS)],
                   "doc_id": "d", "grade": 1, "source": None}  # fmt: skip
        with sqlite_store.session() as session:
            assert insert_columns(session, Judgment, columns) == ROWS
    assert staged == [True] * 12
    with sqlite_store.session() as session:
        attached = [row[1] for row in session.execute(text("PRAGMA database_list"))]
        count = session.scalar(text("SELECT count(*) FROM judgment WHERE query_id LIKE 'p%'"))
    assert not [name for name in attached if name.startswith(sqlite_stage.SCRATCH_PREFIX)]
    assert count == 12 * ROWS
