"""The commands docs/cli.md lists as reading only open the database read-only and write nothing.

``history`` computed the config's first baseline and stored it as a side effect: on a file it
could not write it failed (exit 3), and ``history --segment nosuchtag`` stored the baseline
before refusing the tag. Every such command now opens the database read-only (SQLite
``mode=ro``, PostgreSQL read-only transactions), and a baseline nobody pinned is computed, not
stored: the database is exactly as before, byte for byte on SQLite.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.db.errors import DatabaseReadOnlyError
from evalplat.store import Store

from ..compare.helpers import content, good_rankings, store_run
from .dump import dump
from .test_operational_errors import read_only


def _two_runs(db_url: str) -> tuple[int, int]:
    """Two complete runs of ``engine`` on ``small``, no baseline stored."""
    with Store.open(db_url) as store:
        store.import_test_set("small", content(queries=8))
        rankings = good_rankings(content(queries=8))
        return (store_run(store, "engine", "small", rankings),
                store_run(store, "engine", "small", rankings))  # fmt: skip


def _reading_commands(first: int, second: int) -> list[tuple[str, ...]]:
    return [
        ("testset", "list"), ("testset", "show", "small"), ("testset", "export", "small"),
        ("config", "list"), ("config", "show", "engine"),
        ("history", "engine"), ("history", "engine", "--json"),
        ("unjudged", str(first)), ("baseline", "show"), ("baseline", "show", "engine"),
        ("alerts", "list"), ("runs", "list"), ("runs", "show", str(second)),
    ]  # fmt: skip


def _settled(path: Path) -> bytes:
    """The SQLite file with its write-ahead log folded in and removed, as bytes."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path.read_bytes()


def test_history_refusing_a_segment_leaves_the_database_as_it_was(
    cli: Callable[..., Any], db_url: str
) -> None:
    _two_runs(db_url)
    path = Path(db_url.removeprefix("sqlite:///")) if db_url.startswith("sqlite") else None
    before, raw = dump(db_url), _settled(path) if path else b""
    result = cli("history", "engine", "--segment", "nosuchtag", "--db", db_url)
    assert result.exit_code == 2 and "nosuchtag" in result.stderr
    assert cli("history", "engine", "--db", db_url).exit_code == 0
    assert dump(db_url) == before
    if path is not None:
        assert path.read_bytes() == raw
        assert _settled(path) == raw


def test_history_shows_the_computed_baseline_a_night_would_store(
    cli: Callable[..., Any], db_url: str
) -> None:
    first, _ = _two_runs(db_url)
    shown = cli("baseline", "show", "engine", "--json", "--db", db_url)
    assert shown.exit_code == 0, shown.stderr
    assert f'"run_id": {first}' in shown.stdout and '"pinned": false' in shown.stdout
    with Store.open(db_url) as store:
        computed = store.baseline("engine", "small")
        stored = store.adopt_baseline("engine", "small")
        assert computed is not None and computed == stored
        assert dump(db_url)["baseline"] != []
        points = store.history("engine")
    assert [p.is_baseline for p in points] == [True, False]


def test_every_reading_command_works_on_a_sqlite_file_it_cannot_write(
    cli: Callable[..., Any], tmp_path: Path, sqlite_template: Path
) -> None:
    path = tmp_path / "evalplat.db"
    shutil.copyfile(sqlite_template, path)
    url = f"sqlite:///{path}"
    first, second = _two_runs(url)
    raw = _settled(path)
    with read_only(path):
        for command in _reading_commands(first, second):
            result = cli(*command, "--db", url)
            assert result.exit_code == 0, (command, result.stderr)
    assert path.read_bytes() == raw


def test_every_reading_command_opens_the_database_read_only(
    cli: Callable[..., Any], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _two_runs(db_url)
    opened: list[bool] = []
    real_open = Store.open.__func__  # type: ignore[attr-defined]

    def spying(cls: type[Store], *args: Any, **kwargs: Any) -> Store:
        store: Store = real_open(cls, *args, **kwargs)
        opened.append(store.read_only)
        with pytest.raises(DatabaseReadOnlyError), store.session() as session:
            session.execute(store_table_write())
        return store

    monkeypatch.setattr(Store, "open", classmethod(spying))
    before = dump(db_url)
    for command in _reading_commands(first, second):
        opened.clear()
        result = cli(*command, "--db", db_url)
        assert result.exit_code == 0, (command, result.stderr)
        assert all(opened), command
    assert dump(db_url) == before


def store_table_write() -> Any:
    """A write any database refuses in a read-only transaction."""
    from sqlalchemy import update

    from evalplat.db.models import Config

    return update(Config).values(name=Config.name)
