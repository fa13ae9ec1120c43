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
