"""Migration 0020: on SQLite ``result`` becomes a WITHOUT ROWID table, and the results stay;
PostgreSQL's table is left as it is."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
ROWS = [(1, "q1", 1, "a", 2.0), (1, "q1", 2, "b", 1.0), (2, "q0", 1, "c", None)]


def _without_rowid(engine: sa.Engine) -> bool | None:
    """Whether SQLite stores ``result`` without a rowid; None on another database."""
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as connection:
        sql = connection.execute(
            sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'result'")
        ).scalar_one()
    return "WITHOUT ROWID" in sql.upper()


def _rows(engine: sa.Engine) -> list[tuple[object, ...]]:
    with engine.connect() as connection:
        query = "SELECT run_id, query_id, rank, doc_id, score FROM result ORDER BY run_id, rank"
        return [tuple(row) for row in connection.execute(sa.text(query))]


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_results_keep_through_the_rebuild_both_ways(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine, "0019")
    sqlite = engine.dialect.name == "sqlite"
    assert _without_rowid(engine) is (False if sqlite else None)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO result (run_id, query_id, rank, doc_id, score) "
                "VALUES (:run, :query, :rank, :doc, :score)"
            ),
            [dict(zip(("run", "query", "rank", "doc", "score"), row, strict=True)) for row in ROWS],
        )
    migrate.upgrade(engine)
    assert _without_rowid(engine) is (True if sqlite else None)
    assert _rows(engine) == sorted(ROWS, key=lambda row: (row[0], row[2]))
    with engine.begin() as connection, pytest.raises(sa.exc.IntegrityError):
        connection.execute(  # the key still holds
            sa.text("INSERT INTO result (run_id, query_id, rank, doc_id) VALUES (1, 'q1', 1, 'x')")
        )
    migrate.downgrade(engine, "0019")
    assert _without_rowid(engine) is (False if sqlite else None)
    assert len(_rows(engine)) == len(ROWS)
    engine.dispose()
