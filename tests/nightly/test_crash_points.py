"""Kill ``nightly`` at every commit point in turn: the next night converges.

A night that regresses two configs is run in a process of its own (a child of a fork server
that has imported the night's modules once, ``night_process``) that kills itself (SIGKILL) at the
N-th crash point (every store commit, and the moment between a channel accepting a notice and
the outbox recording it), for every N the night passes. The next, uninterrupted night must
leave no run ``running``, no delivery pending, and the webhook must have accepted each opened
alert exactly once: the receiver keeps the ``Idempotency-Key``s it has accepted, as a real one
honouring the header does, and counts what it accepted.

The good night every killed night follows is run once: each kill point starts from a copy of the
database as that night left it (a copy of the SQLite file; on PostgreSQL a database created with
the good night's as its template), as if the good night had just been run again.
"""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.db.models import Run
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from ..alerts.servers import CaptureServer, capture_server
from ..conftest import PostgresServer
from .night_process import run_command
from .small_project import write_project

CONFIGS = ("alpha", "beta")


class Copies:
    """A database to run the good night in, and fresh copies of it as that night left it."""

    def __init__(self, db_url: str, folder: Path, server: PostgresServer | None):
        self.folder, self.server, self.made = folder, server, 0
        self.created: list[str] = []
        if server is None:  # SQLite: db_url is a migrated file of the test's own
            self.url = db_url
            return
        # PostgreSQL: a database of the test's own, which nobody else connects to, so that it can
        # be a template (the session's database may have connections of earlier tests).
        self.url = self._created(server.create_database())
        engine = create_db_engine(self.url)
        migrate.upgrade(engine)
        engine.dispose()

    def _created(self, url: str) -> str:
        self.created.append(url)
        return url

    def copy(self) -> str:
        """A new database holding what ``url`` holds now (nothing may be connected to it)."""
        self.made += 1
        if self.server is None:
            target = self.folder / f"copy-{self.made}.db"
            source = make_url(self.url).database or ""
            with closing(sqlite3.connect(source)) as read, closing(sqlite3.connect(target)) as new:
                read.backup(new)
            return f"sqlite:///{target}"
        template = make_url(self.url).database
        name = f"{template}_{self.made}"
        admin = create_engine(self.server.admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
        admin.dispose()
        return self._created(make_url(self.url).set(database=name).render_as_string(False))

    def drop(self, url: str) -> None:
        if self.server is not None:
            self.server.drop_database(url)
            self.created.remove(url)

    def close(self) -> None:
        for url in reversed(self.created):
            self.drop(url)


@pytest.fixture
def copies(db_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Copies]:
    server = None if db_url.startswith("sqlite") else request.getfixturevalue("postgres_server")
    made = Copies(db_url, tmp_path, server)
    yield made
    made.close()


def _night_in_subprocess(path: Path, url: str, crash: str | None, trace: Path | None) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALPLAT_CRASH")}
    if crash is not None:
        env["EVALPLAT_CRASH_AT"] = crash
    if trace is not None:
        env["EVALPLAT_CRASH_TRACE"] = str(trace)
    output = path.parent / "night-output.txt"
    return run_command(["nightly", "--project", str(path), "--db", url], env, output)


def _opened_accepted(server: CaptureServer) -> Counter[tuple[str, int]]:
    """(config, alert id) of every opened alert the receiver accepted (duplicates dropped)."""
    seen: Counter[tuple[str, int]] = Counter()
    for request in server.accepted("/ok"):
        for alert in request.body["alerts"]:
            if alert["event"] == "opened":
                seen[(alert["config"], alert["alert_id"])] += 1
    return seen


def _crash_points(trace: Path) -> list[str]:
    """``NAME:N`` for every crash point a night passed, in order."""
    names = trace.read_text(encoding="utf-8").split()
    return [f"{name}:{names[: i + 1].count(name)}" for i, name in enumerate(names)]


@pytest.mark.slow
def test_a_night_killed_at_any_commit_point_converges_on_the_next(
    copies: Copies, tmp_path: Path
) -> None:
    with capture_server() as server:
        hook = f"{server.url}/ok"
        good = write_project(tmp_path / "good", dict.fromkeys(CONFIGS, "good"), hook=hook)
        bad = write_project(tmp_path / "bad", dict.fromkeys(CONFIGS, "bad"), hook=hook)

        # The good night, once: every night below starts from a copy of what it left.
        assert run_nightly(load_project(good), db_url=copies.url).exit_code == 0
        assert server.requests == []  # it opened no alert: a copy holds all it did

        # Count the crash points of an uninterrupted regressing night.
        trace = tmp_path / "trace.txt"
        traced = copies.copy()
        assert _night_in_subprocess(bad, traced, None, trace) == 1
        copies.drop(traced)
        points = _crash_points(trace)
        assert "delivered:1" in points and len([p for p in points if "commit" in p]) > 10

        for point in points:
            db_url = copies.copy()
            server.clear()
            killed = _night_in_subprocess(bad, db_url, point, None)
            assert killed == -9, f"{point}: the night was not killed (exit {killed})"
            again = run_nightly(load_project(bad), db_url=db_url, lock_wait=30)
            assert again.exit_code == 1, point
            accepted = _opened_accepted(server)
            assert sorted(c for c, _ in accepted) == sorted(CONFIGS), (point, accepted)
            assert set(accepted.values()) == {1}, (point, accepted)
            engine = create_db_engine(db_url)
            with engine.connect() as connection:
                statuses = set(connection.scalars(select(Run.status)))
            engine.dispose()
            assert "running" not in statuses, (point, statuses)
            with Store.open(db_url) as store:
                assert store.outbox("pending") == [], point
            copies.drop(db_url)


def test_a_json_channel_killed_between_writing_and_the_mark_writes_each_event_once(
    db_url: str, tmp_path: Path
) -> None:
    """The night is killed after the ``json`` channel wrote its notice and before the outbox
    recorded it: the next night sends the same notice again, and the file keeps one line per
    alert event."""
    import json

    alerts_file = tmp_path / "alerts.jsonl"
    channel = f'\n[[alerts]]\ntype = "json"\npath = "{alerts_file}"\n'
    good = write_project(tmp_path / "good", dict.fromkeys(CONFIGS, "good"), extra_alerts=channel)
    bad = write_project(tmp_path / "bad", dict.fromkeys(CONFIGS, "bad"), extra_alerts=channel)
    assert run_nightly(load_project(good), db_url=db_url).exit_code == 0
    assert _night_in_subprocess(bad, db_url, "delivered:1", None) == -9
    written = [json.loads(line) for line in alerts_file.read_text().splitlines()]
    assert sorted(w["config"] for w in written) == sorted(CONFIGS)  # written, then killed
    with Store.open(db_url) as store:
        assert len(store.outbox("pending")) == len(CONFIGS)  # ... before the mark
    assert run_nightly(load_project(bad), db_url=db_url, lock_wait=30).exit_code == 1
    with Store.open(db_url) as store:
        assert store.outbox("pending") == []
        keys = sorted(row.idempotency_key for row in store.outbox("sent"))
    lines = [json.loads(line) for line in alerts_file.read_text().splitlines()]
    assert sorted(line["idempotency_key"] for line in lines) == keys
    assert sorted((line["config"], line["event"]) for line in lines) == [
        (config, "opened") for config in CONFIGS
    ]
