"""Migration 0022: on SQLite ``query_score`` becomes a WITHOUT ROWID table, and the scores,
their key and their cascade from the evaluation stay; PostgreSQL's table is left as it is."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.store import EvaluationRecord, QueryOutcome, Store

from ..runner.helpers import new_run

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
SCORES = [("P@1", "q1", 1.0), ("P@1", "é", 0.0), ("AP", "q1", 0.25), ("AP", "Q0", -0.0)]


def _without_rowid(engine: sa.Engine) -> bool | None:
    """Whether SQLite stores ``query_score`` without a rowid; None on another database."""
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as connection:
        query = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'query_score'"
        return "WITHOUT ROWID" in connection.execute(sa.text(query)).scalar_one().upper()


def _scores(engine: sa.Engine) -> set[tuple[object, ...]]:
    with engine.connect() as connection:
        query = "SELECT evaluation_id, metric, query_id, value FROM query_score"
        return {tuple(row) for row in connection.execute(sa.text(query))}


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_scores_keep_through_the_rebuild_both_ways(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine)
    with Store.open(fresh_db_url) as store:
        run_id, version_id = new_run(store)
        store.record_outcomes(run_id, [QueryOutcome("q1", "ok", [("d1", 1.0)])])
        record = EvaluationRecord(version_id, SCORES, {"P@1": (0.5, 2), "AP": (0.125, 2)})
        store.finish_run(run_id, "complete", evaluation=record)
    stored = _scores(engine)
    assert {row[1:] for row in stored} == set(SCORES)
    sqlite = engine.dialect.name == "sqlite"
    assert _without_rowid(engine) is (True if sqlite else None)

    migrate.downgrade(engine, "0021")
    assert _without_rowid(engine) is (False if sqlite else None)
    assert _scores(engine) == stored
    migrate.upgrade(engine)
    assert _without_rowid(engine) is (True if sqlite else None)
    assert _scores(engine) == stored

    (evaluation_id,) = {row[0] for row in stored}
    with engine.begin() as connection, pytest.raises(sa.exc.IntegrityError):
        connection.execute(  # the key still holds
            sa.text("INSERT INTO query_score VALUES (:e, 'AP', 'q1', 1.0)"), {"e": evaluation_id}
        )
    with engine.begin() as connection:  # and an evaluation's scores still go with it
        connection.execute(sa.text("DELETE FROM score_copy"))
        connection.execute(sa.text("DELETE FROM metric_mean"))
        connection.execute(sa.text("DELETE FROM evaluation WHERE id = :e"), {"e": evaluation_id})
    assert _scores(engine) == set()
    engine.dispose()
