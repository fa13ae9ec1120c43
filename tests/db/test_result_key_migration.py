"""Migration 0019: ``result.run_id`` loses its foreign key, and the results stay."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def _result_keys(engine: sa.Engine) -> list[str]:
    with engine.connect() as connection:
        return [k["referred_table"] for k in sa.inspect(connection).get_foreign_keys("result")]


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_results_keep_through_the_upgrade_and_orphans_go_on_the_way_down(
    fresh_db_url: str,
) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine, "0018")
    assert _result_keys(engine) == ["run"]
    now = datetime.now(UTC)
    with engine.begin() as connection:
        connection.execute(sa.text(
            "INSERT INTO test_set (id, name, created_at) VALUES (1, 'topics', :now);"
        ), {"now": now})  # fmt: skip
        connection.execute(
            sa.text(
                "INSERT INTO test_set_version (id, test_set_id, version, content_hash, "
                "queries_count, judgments_count, created_at) VALUES (1, 1, 1, 'h', 1, 1, :now)"
            ),
            {"now": now},
        )
        connection.execute(sa.text(
            "INSERT INTO config (id, name, created_at) VALUES (1, 'engine', :now)"
        ), {"now": now})  # fmt: skip
        connection.execute(
            sa.text(
                "INSERT INTO config_version (id, config_id, version, searcher, params, "
                "content_hash, created_at) VALUES (1, 1, 1, 'import', '{}', 'h', :now)"
            ),
            {"now": now},
        )
        connection.execute(
            sa.text(
                "INSERT INTO run (id, config_version_id, test_set_version_id, status, trigger, "
                "depth, evalplat_version, started_at, queries_total, queries_failed, options) "
                "VALUES (1, 1, 1, 'complete', 'import', 2, '0', :now, 1, 0, '{}')"
            ),
            {"now": now},
        )
        connection.execute(
            sa.text(
                "INSERT INTO result (run_id, query_id, rank, doc_id, score) "
                "VALUES (1, 'q', 1, 'a', 2.0), (1, 'q', 2, 'b', 1.0)"
            )
        )
    migrate.upgrade(engine)
    assert _result_keys(engine) == []
    with engine.begin() as connection:
        rows = connection.execute(sa.text("SELECT doc_id FROM result ORDER BY rank")).all()
        assert [r[0] for r in rows] == ["a", "b"]
        # without the key nothing stops a row of an unknown run: the way down drops it
        connection.execute(sa.text(
            "INSERT INTO result (run_id, query_id, rank, doc_id) VALUES (9, 'q', 1, 'c')"
        ))  # fmt: skip
    migrate.downgrade(engine, "0018")
    assert _result_keys(engine) == ["run"]
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM result")).scalar() == 2
    engine.dispose()
