"""Migrations: one head, empty → head, models match migrations, down/up round trip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.db.metadata import METADATA
from evalplat.errors import SchemaOutdatedError
from evalplat.store import Store

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def test_migrations_have_exactly_one_head() -> None:
    script = ScriptDirectory.from_config(migrate.alembic_config())
    assert len(script.get_heads()) == 1


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_empty_database_upgrades_to_head_with_every_table(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    before, after = migrate.upgrade(engine)
    assert (before, after) == (None, migrate.head_revision())
    with engine.connect() as connection:
        tables = set(inspect(connection).get_table_names())
    assert set(METADATA.tables) <= tables
    engine.dispose()


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_models_match_migrations(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine)
    assert migrate.schema_differences(engine) == []
    engine.dispose()


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_downgrade_to_base_and_upgrade_again_round_trips(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine)
    migrate.downgrade(engine, "base")
    with engine.connect() as connection:
        left = set(inspect(connection).get_table_names()) - {"alembic_version"}
    assert left == set()
    assert migrate.current_revision(engine) is None
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    assert migrate.schema_differences(engine) == []
    engine.dispose()


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_upgrade_is_idempotent(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    migrate.upgrade(engine)
    before, after = migrate.upgrade(engine)
    assert before == after == migrate.head_revision()
    engine.dispose()


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_opening_an_uninitialised_database_says_to_run_init(fresh_db_url: str) -> None:
    engine = create_db_engine(fresh_db_url)
    with engine.connect():
        pass  # creates the SQLite file, leaves it empty
    engine.dispose()
    with pytest.raises(SchemaOutdatedError, match=r"run `evalplat init`"):
        Store.open(fresh_db_url)


def test_opening_a_missing_sqlite_file_does_not_create_it(tmp_path: Path) -> None:
    path = tmp_path / "nothing-here.db"
    with pytest.raises(SchemaOutdatedError, match=r"does not exist: run `evalplat init`"):
        Store.open(f"sqlite:///{path}")
    assert not path.exists()


def test_database_behind_the_code_says_to_run_db_upgrade(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulate a newer evalplat whose head is past the database's revision.
    current = migrate.head_revision()
    monkeypatch.setattr(migrate, "head_revision", lambda: "9999")
    with pytest.raises(SchemaOutdatedError) as raised:
        Store.open(db_url)
    assert f"schema {current} is behind" in str(raised.value)
    assert "run `evalplat db upgrade`" in str(raised.value)


@pytest.mark.parametrize("fresh_db_url", BACKENDS, indirect=True)
def test_database_from_a_newer_evalplat_is_refused(fresh_db_url: str) -> None:
    # its own database: the shared test database must keep its real revision
    db_url = fresh_db_url
    engine = create_db_engine(db_url)
    migrate.upgrade(engine)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'f00dfeed'"))
    engine.dispose()
    with pytest.raises(SchemaOutdatedError, match="newer than this evalplat knows"):
        Store.open(db_url)


def test_head_read_from_the_file_names_is_alembics_single_head() -> None:
    script = ScriptDirectory.from_config(migrate.alembic_config())
    assert migrate.head_revision() == script.get_current_head()


def test_opening_a_current_database_does_not_load_alembic(db_url: str) -> None:
    # the schema check on every command is one SELECT; Alembic costs half a second to import
    code = (
        "import sys; from evalplat.store import Store; "
        f"Store.open({db_url!r}).close(); print('alembic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
