"""A store on SQLite holds one idle connection while it is open: closing a session's connection
no longer checkpoints the write-ahead log and deletes it; closing the store does, and what every
session committed is in the database file for any other connection to read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from evalplat.store import Store


def test_the_log_outlives_sessions_while_the_store_is_open_and_is_checkpointed_at_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kept.db"
    Store.init(f"sqlite:///{path}").close()
    log = Path(f"{path}-wal")
    assert not log.exists()  # the last connection closed: checkpointed and deleted
    store = Store.open(f"sqlite:///{path}")
    for n in range(3):
        store.add_config(f"kept{n}", "builtin", {})
        assert log.exists() and log.stat().st_size > 0
    assert [c.name for c in store.list_configs()][-1] == "kept2"
    store.close()
    assert not log.exists()
    with sqlite3.connect(path) as other:
        names = {row[0] for row in other.execute("SELECT name FROM config")}
    assert {"kept0", "kept1", "kept2"} <= names


def test_sessions_reuse_pooled_connections_and_see_what_others_committed(tmp_path: Path) -> None:
    """A session takes a connection the store opened before (one with its settings costs about
    0.8 ms); back in the pool it holds no transaction, so its next session sees another store's
    commit, and a reader's session does not keep the writer waiting."""
    from sqlalchemy import event

    path = tmp_path / "pooled.db"
    Store.init(f"sqlite:///{path}").close()
    store, other = Store.open(f"sqlite:///{path}"), Store.open(f"sqlite:///{path}")
    opened: list[object] = []
    event.listen(store.engine, "connect", lambda connection, _record: opened.append(connection))
    try:
        for n in range(20):
            store.add_config(f"mine{n}", "builtin", {})
            assert f"mine{n}" in {c.name for c in store.list_configs()}
            other.add_config(f"theirs{n}", "builtin", {})  # waits for no one
            assert f"theirs{n}" in {c.name for c in store.list_configs()}
        assert len(opened) <= 1  # one session at a time: the connection opened at first
    finally:
        store.close()
        other.close()
