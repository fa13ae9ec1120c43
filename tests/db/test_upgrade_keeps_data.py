"""Upgrading a database a released evalplat filled keeps every run, comparison and alert, on
SQLite and PostgreSQL: the rows of ``fixtures/upgrade_REV.json`` (``tests/db/upgrade_fixture.py``
says how they were made) go into a database migrated to revision REV, which ``migrate.upgrade``
then takes to this evalplat's head; the store reads back what was there."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import DateTime, Engine, LargeBinary, MetaData, Table, func, select, text

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.store import Store

from .upgrade_fixture import BINARY

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("upgrade_*.json"))


def _load(engine: Engine, data: dict[str, Any]) -> None:
    """The fixture's rows into a database at the fixture's revision, ids as they were."""
    migrate.upgrade(engine, data["revision"])
    metadata = MetaData()
    metadata.reflect(engine)
    with engine.begin() as connection:
        for table in metadata.sorted_tables:
            stored = data["tables"].get(table.name)
            if not stored or not stored["rows"]:
                continue
            names = stored["columns"]
            rows = [
                {name: _typed(table, name, value) for name, value in zip(names, row, strict=True)}
                for row in stored["rows"]
            ]
            connection.execute(table.insert(), rows)
        if engine.dialect.name == "postgresql":  # the next id after the loaded ones
            for table in metadata.sorted_tables:
                if "id" in table.columns and table.name in data["tables"]:
                    connection.execute(text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"COALESCE((SELECT MAX(id) FROM {table.name}), 0) + 1, false)"
                    ))  # fmt: skip


def _typed(table: Table, name: str, value: Any) -> Any:
    if value is None:
        return None
    kind = table.columns[name].type
    if isinstance(value, str) and value.startswith(BINARY) and isinstance(kind, LargeBinary):
        return base64.b64decode(value[len(BINARY) :])
    if isinstance(kind, DateTime) and isinstance(value, str):
        moment = datetime.fromisoformat(value)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return value


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.stem for p in FIXTURES])
@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_upgrading_keeps_every_run_comparison_and_alert(fresh_db_url: str, fixture: Path) -> None:
    data = json.loads(fixture.read_text(encoding="utf-8"))
    engine = create_db_engine(fresh_db_url)
    _load(engine, data)
    before, after = migrate.upgrade(engine)
    assert (before, after) == (data["revision"], migrate.head_revision())
    metadata = MetaData()
    metadata.reflect(engine)
    with engine.connect() as connection:
        for name, stored in data["tables"].items():
            if name in metadata.tables:  # a table a later schema folded away is not counted
                count = connection.scalar(select(func.count()).select_from(metadata.tables[name]))
                assert count == len(stored["rows"]), name
    engine.dispose()
    rows = data["tables"]
    with Store.open(fresh_db_url) as store:
        runs = store.list_runs()
        assert sorted(r.id for r in runs) == sorted(row[0] for row in rows["run"]["rows"])
        assert all(r.status == "complete" for r in runs)
        verdicts = dict(
            (row[0], row[rows["comparison"]["columns"].index("verdict")])
            for row in rows["comparison"]["rows"]
        )  # fmt: skip
        for comparison_id, verdict in verdicts.items():
            assert store.load_comparison(comparison_id).verdict == verdict
        alerts = store.list_alerts()
        states = rows["alert"]["columns"].index("state")
        assert sorted((a.id, a.state) for a in alerts) == sorted(
            (row[0], row[states]) for row in rows["alert"]["rows"]
        )
        assert {a.state for a in alerts} == {"open", "resolved"}
        assert store.history("alpha")  # the history reads the upgraded runs
