"""Migration 0024: a config stored before it has its highest version as its current one, and
the name then follows a rollback like any config's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.searchers.configs import content_hash
from evalplat.store import Store

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_configs_stored_before_keep_their_highest_version_current(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine, "0023")
    config = sa.table("config", sa.column("id"), sa.column("name"), sa.column("created_at"))
    columns = ("config_id", "version", "content_hash", "searcher", "label", "created_at")
    version = sa.table(
        "config_version", *(sa.column(c) for c in columns), sa.column("params", sa.JSON())
    )
    now = datetime.now(UTC)
    with engine.begin() as connection:
        names = [
            {"id": 1, "name": "shop", "created_at": now},
            {"id": 2, "name": "empty", "created_at": now},
        ]
        connection.execute(config.insert(), names)
        rows = [
            dict(
                zip(
                    columns,
                    (1, n, content_hash("builtin", {"operator": op}, None), "builtin", None, now),
                    strict=True,
                )
            )
            | {"params": {"operator": op}}
            for n, op in ((1, "or"), (2, "and"))
        ]
        connection.execute(version.insert(), rows)
    migrate.upgrade(engine)
    engine.dispose()
    with Store.open(fresh_db_url) as store:
        assert [(c.name, c.version) for c in store.list_configs()] == [("shop", 2)]
        outcome = store.add_config("shop", "builtin", {"operator": "or"})
        assert (outcome.created, outcome.replaced) == (False, 2)
        assert store.config_version("shop").version == 1
        assert store.add_config("shop", "builtin", {"tokenizer": "trigram"}).version.version == 3
