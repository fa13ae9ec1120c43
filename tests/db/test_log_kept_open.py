"""``log_kept_open``: while it holds a connection, closing a session's connection no longer
checkpoints SQLite's log and deletes it; when it ends, the log is checkpointed, and what every
session committed is in the database file for any other connection to read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from evalplat.db.engine import log_kept_open
from evalplat.store import Store


def test_the_log_outlives_sessions_while_kept_and_is_checkpointed_after(tmp_path: Path) -> None:
    path = tmp_path / "kept.db"
    store = Store.init(f"sqlite:///{path}")
    log = Path(f"{path}-wal")
    store.add_config("before", "builtin", {})
    assert not log.exists()  # the last connection closed: checkpointed and deleted
    with log_kept_open(store.engine):
        for n in range(3):
            store.add_config(f"kept{n}", "builtin", {})
            assert log.exists() and log.stat().st_size > 0
        assert [c.name for c in store.list_configs()][-1] == "kept2"
    assert not log.exists()
    with sqlite3.connect(path) as other:
        names = {row[0] for row in other.execute("SELECT name FROM config")}
    assert {"before", "kept0", "kept1", "kept2"} <= names
    store.close()
