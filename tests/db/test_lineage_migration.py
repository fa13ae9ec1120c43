"""Migration 0015: versions stored before it get their parent from what their source said."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.store import Store

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_parents_come_from_added_to_and_from_version(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine, "0012")
    test_set = sa.table("test_set", sa.column("id"), sa.column("name"), sa.column("created_at"))
    version = sa.table(
        "test_set_version",
        *(
            sa.column(c)
            for c in (
                "test_set_id",
                "version",
                "content_hash",
                "queries_count",
                "judgments_count",
                "created_at",
            )
        ),
        sa.column("source", sa.JSON()),
    )
    now = datetime.now(UTC)
    sources = [
        {"qrels": "qrels.txt", "queries": None, "docs": None},
        {"qrels": "graded.csv", "added_to": 1},
        {"kind": "judge", "judge": "gpt", "from_version": 2},
        None,
    ]
    with engine.begin() as connection:
        connection.execute(test_set.insert().values(id=1, name="topics", created_at=now))
        connection.execute(
            version.insert(),
            [
                {
                    "test_set_id": 1,
                    "version": n,
                    "content_hash": f"{n:064d}",
                    "queries_count": 1,
                    "judgments_count": 1,
                    "created_at": now,
                    "source": source,
                }
                for n, source in enumerate(sources, start=1)
            ],
        )
    migrate.upgrade(engine)
    engine.dispose()
    with Store.open(fresh_db_url) as store:
        parents = [v.parent for v in store.test_set_versions("topics")]
    assert parents == [None, 1, 2, None]
