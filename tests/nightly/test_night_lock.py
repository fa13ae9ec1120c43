"""A night whose lock another writer keeps it from refreshing stops cleanly: exit 3, one line.

SQLite only: PostgreSQL's nightly lock is an advisory lock the server holds for the session,
with nothing to refresh. The searcher of the night is where the other writer comes in: its
first query holds the SQLite file's write lock (another connection, as another process would)
for longer than the nightly lock lives, and every query waits for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from evalplat.db.models import Run
from evalplat.nightly import job
from evalplat.store import Store

from .small_project import write_project

HOLDING_ENGINE = """
import sqlite3
import threading
import time

_first = threading.Lock()
_held = []


def search(query, depth, db=None, hold=0.0, **params):
    with _first:  # the first query holds the file; the others wait behind it
        if not _held:
            _held.append(True)
            connection = sqlite3.connect(db, isolation_level=None)
            connection.execute("BEGIN IMMEDIATE")
            time.sleep(hold)
            connection.execute("COMMIT")
            connection.close()
    topic = query.split()[-1]
    return [("d" + topic, 3.0), ("n1", 2.0)]
"""


def test_a_night_that_cannot_keep_its_lock_stops_with_exit_3_and_one_line(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "night.db"
    Store.init(f"sqlite:///{database}").close()
    url = f"sqlite:///{database}?timeout=0.2"
    folder = tmp_path / "project"
    extra = f'db = "{database}"\nhold = 3.0\n'
    project = write_project(folder, {"alpha": "good"}, extra=extra)
    # a module name of its own: the python searcher keeps imported modules for the process
    (folder / "holding_engine.py").write_text(HOLDING_ENGINE, encoding="utf-8")
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace('"engine:search"', '"holding_engine:search"'), "utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))  # the searcher adds the project folder
    monkeypatch.setitem(sys.modules, "holding_engine", None)
    del sys.modules["holding_engine"]  # imported afresh below, dropped again after the test
    monkeypatch.setattr(job, "LOCK_TTL", 1.0)  # lost 1 s in, while the file is held

    night = cli("nightly", "--project", str(project), "--db", url)

    assert night.exit_code == 3, night.stdout + night.stderr
    [line] = night.stderr.splitlines()
    assert line.startswith("error: lost the `nightly` lock: it could not be refreshed")
    assert "Traceback" not in night.stdout + night.stderr
    with Store.open(url) as store, store.session() as session:
        statuses = list(session.scalars(select(Run.status)))
    assert "complete" not in statuses  # the run's results came after the loss: not stored
    assert len(statuses) == 1

    # The next night, with its lock kept, runs the config again and completes.
    monkeypatch.setattr(job, "LOCK_TTL", 120.0)
    write_project(folder, {"alpha": "good"})
    again = cli("nightly", "--project", str(project), "--db", url)
    assert again.exit_code == 0, again.stdout + again.stderr
    with Store.open(url) as store, store.session() as session:
        assert "complete" in set(session.scalars(select(Run.status)))
