"""Operational failures are one line and exit 3 on both databases; bad URLs and ids exit 2.

Each condition is produced for real: a second connection holding the write lock, a file the
process may not write (``chmod``, or ``chattr +i`` for root, whom ``chmod`` does not stop),
a file size limit (``RLIMIT_FSIZE``: SQLite sees a full disk), a server port nothing listens
on, and PostgreSQL sessions that are read-only or give up waiting for a lock.
"""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from evalplat.store import Store

EVALPLAT = [str(Path(sys.executable).with_name("evalplat"))]


def one_line(result: Any) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return str(lines[0])


def write_qrels(folder: Path, queries: int = 3, name: str = "qrels.txt") -> Path:
    path = folder / name
    lines = [f"q{n} 0 d{n}-{k} {k % 3}" for n in range(queries) for k in range(5)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def with_query(url: str, **params: str) -> str:
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    return parsed.update_query_dict(params).render_as_string(hide_password=False)


@pytest.mark.parametrize(
    "url", ["notaurl://x", "postgresql://u@h:port/x", "mysql://u@h/x", "sqlite:////a\x00b"]
)
def test_a_url_that_is_not_a_database_is_exit_2(cli: Callable[..., Any], url: str) -> None:
    for command in (("runs", "list"), ("init",)):
        result = cli(*command, "--db", url)
        assert result.exit_code == 2
        assert "database URL" in one_line(result)


def test_an_unreachable_server_is_exit_3(cli: Callable[..., Any]) -> None:
    result = cli("runs", "list", "--db", "postgresql://root@127.0.0.1:9/none")
    assert result.exit_code == 3
    assert "cannot open database" in one_line(result)


@pytest.mark.parametrize("ref", ["100000000000000000000000", "2147483648", "٣"])
def test_out_of_range_run_ids_are_refused_cleanly(
    cli: Callable[..., Any], db_url: str, ref: str
) -> None:
    result = cli("runs", "show", ref, "--db", db_url)
    assert result.exit_code == 2
    one_line(result)


def test_an_unbounded_depth_is_refused_before_anything_is_written(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    cli("testset", "import", "t", "--qrels", str(write_qrels(tmp_path)), "--db", db_url)
    cli("config", "add", "c", "--searcher", "python", "--param", "function=m:f", "--db", db_url)
    result = cli("run", "c", "--testset", "t", "--depth", "1000000000000", "--db", db_url)
    assert result.exit_code == 2
    assert "depth must be from 1 to 100,000" in one_line(result)
    with Store.open(db_url) as store:
        assert store.list_runs() == []


@contextmanager
def sqlite_writer_holding_the_lock(path: Path) -> Iterator[None]:
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO lock VALUES ('held', 'test', '2000-01-01', '2000-01-01')")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@contextmanager
def postgres_writer_holding_the_lock(url: str) -> Iterator[None]:
    engine = create_engine(url)
    with engine.connect() as holder:
        holder.execute(text("LOCK TABLE test_set IN EXCLUSIVE MODE"))  # reads still pass
        try:
            yield
        finally:
            holder.rollback()
    engine.dispose()


def test_a_locked_database_gives_up_after_the_busy_timeout_with_one_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write_qrels(tmp_path)
    if db_url.startswith("sqlite"):
        url = with_query(db_url, timeout="0.5")
        holding = sqlite_writer_holding_the_lock(Path(db_url.removeprefix("sqlite:///")))
    else:
        url = with_query(db_url, options="-c lock_timeout=500")
        holding = postgres_writer_holding_the_lock(db_url)
    with holding:
        refused = cli("testset", "import", "t", "--qrels", str(qrels), "--db", url)
        listed = cli("testset", "list", "--db", url, "--json")
    assert refused.exit_code == 3
    assert "locked" in one_line(refused)
    assert listed.exit_code == 0 and listed.stdout.strip() == "[]"
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", url).exit_code == 0


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """The file and its folder made unwritable for this process, root included."""
    folder = path.parent
    if os.geteuid() != 0:
        path.chmod(0o444)
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
            path.chmod(0o644)
        return
    chattr = shutil.which("chattr")
    done = (
        chattr is not None
        and subprocess.run([chattr, "+i", str(path), str(folder)]).returncode == 0
    )
    if not done:
        pytest.skip(
            "running as root on a file system without chattr +i: cannot make a file read-only"
        )
    try:
        yield
    finally:
        subprocess.run([str(chattr), "-i", str(path), str(folder)], check=True)


def test_a_read_only_database_reads_and_refuses_writes_with_one_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = write_qrels(tmp_path)
    other = write_qrels(tmp_path, queries=5, name="other.txt")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    if db_url.startswith("sqlite"):
        path = Path(db_url.removeprefix("sqlite:///"))
        with sqlite3.connect(path) as connection:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        url, holding = db_url, read_only(path)
    else:
        url = with_query(db_url, options="-c default_transaction_read_only=on")
        holding = contextmanager(lambda: iter([None]))()
    with holding:
        for command in (("testset", "list"), ("runs", "list"), ("config", "list")):
            assert cli(*command, "--db", url, "--json").exit_code == 0
        assert '"name": "t"' in cli("testset", "list", "--db", url, "--json").stdout
        refused = cli("testset", "import", "t", "--qrels", str(other), "--db", url)
        assert refused.exit_code == 3
        assert "read-only" in one_line(refused)
    with Store.open(db_url) as store:
        assert [v.version for v in store.test_set_versions("t")] == [1]


def test_a_full_disk_is_exit_3_with_one_line(tmp_path: Path, sqlite_template: Path) -> None:
    """``RLIMIT_FSIZE`` stops the file growing, which SQLite reports as a full disk."""
    database = tmp_path / "evalplat.db"
    shutil.copyfile(sqlite_template, database)
    qrels = write_qrels(tmp_path, queries=3000)
    limit = 64 * 1024

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = subprocess.run(
        [
            *EVALPLAT,
            "testset",
            "import",
            "big",
            "--qrels",
            str(qrels),
            "--db",
            f"sqlite:///{database}",
        ],
        capture_output=True,
        text=True,
        preexec_fn=limit_file_size,
        env={**os.environ, "EVALPLAT_DATABASE_URL": ""},
    )
    assert result.returncode == 3, result.stderr
    assert "(is the disk full?)" in one_line(result)
    with Store.open(f"sqlite:///{database}") as store:
        assert store.list_test_sets() == []
