"""Migration 0023: the results that carry a hit's fields have a partial index of their own on
both databases, and the read of a run's hit fields goes through it instead of every result."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.store import QueryOutcome, Store
from evalplat.store.annotation_texts import _with_fields

from ..runner.helpers import new_run

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
INDEX = "ix_result_with_fields"


def _index(engine: sa.Engine) -> str | None:
    """The index's definition as the database keeps it; None when there is none."""
    if engine.dialect.name == "sqlite":
        query = "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = :name"
    else:
        query = "SELECT indexdef FROM pg_indexes WHERE indexname = :name"
    with engine.connect() as connection:
        found = connection.execute(sa.text(query), {"name": INDEX}).scalar_one_or_none()
    return None if found is None else str(found)


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_the_index_holds_only_results_with_fields_and_goes_with_a_downgrade(
    fresh_db_url: str,
) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine)
    definition = _index(engine)
    assert definition is not None and "fields IS NOT NULL" in definition.replace("(", "").replace(
        ")", ""
    )
    migrate.downgrade(engine, "0022")
    assert _index(engine) is None
    migrate.upgrade(engine)
    assert _index(engine) is not None
    engine.dispose()


def test_the_hit_fields_are_read_through_the_index(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id, _ = new_run(store)
        hits = [("d1", 2.0), ("d2", 1.0)]
        store.record_outcomes(
            run_id, [QueryOutcome("q1", "ok", hits, fields=[{"title": "t"}, None])]
        )
        store.record_outcomes(run_id, [QueryOutcome("q2", "ok", hits)])
        with store.session() as session:
            statement = _with_fields(session)
            params = {"runs": [run_id], "k": 10}
            rows = session.execute(statement, params).all()
            assert [(q, r, f) for _, q, r, f in rows] == [("q1", 1, {"title": "t"})]
            if session.get_bind().dialect.name == "sqlite":
                explain = sa.text(f"EXPLAIN QUERY PLAN {statement.element.text}")
                explain = explain.bindparams(sa.bindparam("runs", expanding=True))
                plan = session.execute(explain, params).all()
                assert any(INDEX in str(row) for row in plan), plan
