"""Shared fixtures: a real database of each kind, and the CLI.

SQLite always runs. PostgreSQL runs when the server at ``EVALPLAT_TEST_POSTGRES_URL``
(default: the local server, database ``test``) answers; otherwise those tests are skipped and the
summary says why. With ``EVALPLAT_REQUIRE_POSTGRES=1`` (CI) an unreachable server fails the run.

Each test session gets its own PostgreSQL database, created from the given URL and dropped at
the end, migrated once; tests start from empty tables. SQLite tests get a copy of a migrated
template file in their own temporary folder.
"""

from __future__ import annotations

import compileall
import functools
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest
import typer.main
import typer.testing
from hypothesis import HealthCheck, settings
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from evalplat.db import migrate
from evalplat.db.engine import create_db_engine
from evalplat.db.metadata import METADATA
from evalplat.store import Store

if TYPE_CHECKING:
    from .alerts.servers import CaptureServer

# Property tests. "ci" (the default) is derandomized: every run tries the same examples, so the
# suite cannot pass or fail by chance. "explore" tries many more, randomly, for developers hunting
# bugs: `pytest --hypothesis-profile=explore` or EVALPLAT_HYPOTHESIS_PROFILE=explore. A failure
# found there is pinned with @example(...) on the test, so that every CI run tries it again.
settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", settings.get_profile("ci"), max_examples=2000, derandomize=False
)
settings.load_profile(os.environ.get("EVALPLAT_HYPOTHESIS_PROFILE", "ci"))

pytest_plugins = ["pytester"]

DEFAULT_POSTGRES_URL = "postgresql+psycopg://root@127.0.0.1:5432/test"
REPO_ROOT = Path(__file__).resolve().parent.parent

_postgres_problem: str | None = None
_POSTGRES_HINT = "; set EVALPLAT_TEST_POSTGRES_URL to test it"  # ends a PostgreSQL skip's reason


def postgres_admin_url() -> str:
    return os.environ.get("EVALPLAT_TEST_POSTGRES_URL") or DEFAULT_POSTGRES_URL


def _postgres_required() -> bool:
    return os.environ.get("EVALPLAT_REQUIRE_POSTGRES", "") not in ("", "0", "false")


@dataclass
class PostgresServer:
    admin_url: str

    def create_database(self) -> str:
        """A new, empty database on the server; returns its URL."""
        name = f"evalplat_test_{uuid.uuid4().hex[:12]}"
        engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        engine.dispose()
        return make_url(self.admin_url).set(database=name).render_as_string(hide_password=False)

    def drop_database(self, url: str) -> None:
        name = make_url(url).database
        engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


@pytest.fixture(scope="session")
def postgres_server() -> PostgresServer:
    global _postgres_problem
    url = postgres_admin_url()
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as error:  # any failure to reach the server means "no PostgreSQL here"
        first = str(error).strip().splitlines()[0]
        _postgres_problem = f"PostgreSQL not reachable at {url} ({first})"
        if _postgres_required():
            pytest.fail(_postgres_problem + " and EVALPLAT_REQUIRE_POSTGRES is set")
        pytest.skip(_postgres_problem + _POSTGRES_HINT)
    finally:
        engine.dispose()
    return PostgresServer(url)


@pytest.fixture(scope="session")
def postgres_session_url(postgres_server: PostgresServer) -> Iterator[str]:
    """One migrated database for the whole test session."""
    url = postgres_server.create_database()
    engine = create_db_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    yield url
    emptying = _emptying_engines.pop(url, None)
    if emptying is not None:
        emptying.dispose()
    postgres_server.drop_database(url)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "evalplat.db"
    engine = create_db_engine(f"sqlite:///{path}")
    migrate.upgrade(engine)
    engine.dispose()
    return path


def _emptying_sql() -> str:
    """One statement that deletes every row, children before parents, and restarts every id
    sequence: the tables as a migrated database has them.

    Not ``TRUNCATE ... RESTART IDENTITY``, which gives each of the ~40 tables and their indexes
    new files, and took 0.9 to 1.2 s a test on the 2-core machine under the suite's load,
    against 0.04 to 0.07 s for these deletes of a test's few rows (in one round trip)."""
    tables = list(reversed(METADATA.sorted_tables))
    deletes = "".join(f'DELETE FROM "{table.name}"; ' for table in tables)
    restarts = "".join(
        f"EXECUTE 'ALTER SEQUENCE ' || pg_get_serial_sequence('\"{table.name}\"', "
        f"'{table.autoincrement_column.name}') || ' RESTART'; "
        for table in tables
        if table.autoincrement_column is not None
    )
    return f"DO $$ BEGIN {deletes}{restarts}END $$"


_emptying_engines: dict[str, Engine] = {}  # one per database, kept for the session


def _empty_tables(url: str) -> None:
    """Empty every table of the PostgreSQL database at ``url`` (``_emptying_sql``)."""
    engine = _emptying_engines.get(url)
    if engine is None:
        engine = _emptying_engines[url] = create_db_engine(url)
    with engine.begin() as connection:
        connection.execute(text(_emptying_sql()))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path) -> Iterator[str]:
    """URL of an empty, migrated database: each test runs once on SQLite, once on PostgreSQL."""
    if request.param == "sqlite":
        path = tmp_path / "evalplat.db"
        shutil.copyfile(sqlite_template, path)
        yield f"sqlite:///{path}"
        return
    url = request.getfixturevalue("postgres_session_url")
    _empty_tables(url)
    yield url


@pytest.fixture(autouse=True)
def _output_to_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands under test write to a pipe, whose tables are never cut to a terminal's width:
    a ``COLUMNS`` in the runner's environment (pytest-xdist's workers get ``COLUMNS=80``) would
    make Rich wrap them."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store.open(db_url) as opened:
        yield opened


@pytest.fixture
def fresh_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a brand-new, empty database (no schema) on the backend named by ``backend``."""
    backend = getattr(request, "param", "sqlite")
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database()
    yield url
    server.drop_database(url)


ReferenceScores = Callable[[pd.DataFrame, pd.DataFrame, str], dict[str, float]]


@pytest.fixture
def trec_eval_reference() -> ReferenceScores:
    """Per-query scores from an independent evaluator: trec_eval's C code through ir_measures'
    pytrec_eval provider. ``(qrels[query_id, doc_id, grade], run[query_id, doc_id, score],
    measure) -> {query_id: value}``; a judged query missing from the run scores 0 (trec_eval -c).
    """
    import ir_measures

    def scores(qrels: pd.DataFrame, run: pd.DataFrame, measure: str) -> dict[str, float]:
        judged = qrels.rename(columns={"grade": "relevance"}).astype(
            {"query_id": str, "doc_id": str, "relevance": int}
        )
        ranked = run[["query_id", "doc_id", "score"]].astype(
            {"query_id": str, "doc_id": str, "score": float}
        )
        parsed = ir_measures.parse_measure(measure)
        found = {
            m.query_id: float(m.value)
            for m in ir_measures.pytrec_eval.iter_calc([parsed], judged, ranked)
        }
        return {q: found.get(q, 0.0) for q in judged["query_id"].unique()}

    return scores


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@functools.cache
def _built_once(app: typer.Typer) -> Any:
    """The click command of ``app``, built on its first use in the process and kept."""
    return typer.main.get_command(app)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Run ``evalplat ARGS`` in-process: ``cli("testset", "list", "--db", url)``.

    typer's runner builds the click command from the app again at every call, reading the
    signature of every command: 0.2 s of a call on the 2-core machine under load, most of a
    short one. The app does not change while the tests run, so it is built once (``evalplat``
    itself builds it once a process, too)."""
    from evalplat.cli import app

    monkeypatch.delenv("EVALPLAT_DATABASE_URL", raising=False)
    monkeypatch.setattr(typer.testing, "_get_command", _built_once)
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> CliResult:
        result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


@pytest.fixture
def capture() -> Iterator[CaptureServer]:
    """A webhook receiver on 127.0.0.1 that records every POST and answers by path
    (``tests/alerts/servers.py``): ``f"{capture.url}/ok"`` in a project's ``[[alerts]]``.
    Imported here, not at the top: ``tests/test_suite_rules.py`` runs this file alone."""
    from .alerts.servers import capture_server

    with capture_server() as running:
        yield running


CHROMIUM = "/usr/bin/chromium"  # Debian's package; CI installs it
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for a module's tests: launching one took 3 to 4 s on the 2-core
    machine under load. Each test opens its pages in a context of its own (``new_page`` makes
    one), so no cookie or storage goes from one test to the next. Skipped, and said why,
    without Chromium or playwright."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium package")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def no_report_site(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nights run in this process leave the report site unwritten: for the tests that read no
    page of it (``pytestmark = pytest.mark.usefixtures("no_report_site")``). Writing it was
    most of a small night's time, and the pages have tests of their own (``tests/reports/``,
    the season); a night without it logs no ``report`` step, and its alerts' messages link no
    page (``ReportLinks`` links only pages that exist)."""
    from evalplat.nightly import job

    monkeypatch.setattr(job, "_write_reports", lambda *_args: None)


def pytest_configure(config: pytest.Config) -> None:
    """Compile evalplat's modules once, before the workers start. Hundreds of tests run the
    ``evalplat`` command as a fresh process, and where Python writes no bytecode
    (``PYTHONDONTWRITEBYTECODE``, as on the machines CI runs on) each of them compiled every
    module it imported again: the README's CLI tour took 34.7 s that way, 23.5 s compiled."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller compiled them
        return
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "evalplat", quiet=1)


# The suite's longest tests (a minute or two each, on each database): started first, so that
# no worker is left running one of them alone while the other has finished everything else.
LONGEST_FIRST = (
    "tests/nightly/test_season.py::",
    "tests/nightly/test_season_search.py::test_the_season_as_a_search",
    "tests/nightly/test_crash_points.py::",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first (``LONGEST_FIRST``), every other in its collected order."""
    items.sort(key=lambda item: not item.nodeid.startswith(LONGEST_FIRST))


def _skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2].removeprefix("Skipped: ").removeprefix("Skipped")
    return str(report.longrepr or "")


def _forbid_skips() -> bool:
    return os.environ.get("EVALPLAT_FORBID_SKIPS", "") not in ("", "0", "false")


_skip_problems: list[str] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run on a skip without a reason, and on any skip under EVALPLAT_FORBID_SKIPS.

    CI sets EVALPLAT_FORBID_SKIPS when PostgreSQL, chromium and the shared data are all present:
    there a skipped test is a test that silently stopped running.
    """
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    for report in skipped:
        reason = _skip_reason(report).strip()
        if not reason:
            _skip_problems.append(f"{report.nodeid}: skipped without a reason")
        elif _forbid_skips():
            _skip_problems.append(f"{report.nodeid}: {reason}")
    if _skip_problems and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skip_problems:
        why = "EVALPLAT_FORBID_SKIPS is set" if _forbid_skips() else "every skip names its reason"
        terminalreporter.write_line(
            f"FAILED: {len(_skip_problems)} test(s) skipped ({why}):", red=True, bold=True
        )
        for line in _skip_problems:
            terminalreporter.write_line(f"  {line}", red=True)
    problem = _postgres_problem or _postgres_skip(terminalreporter)
    if problem:
        terminalreporter.write_line(
            f"NOTE: PostgreSQL tests were skipped: {problem}", yellow=True, bold=True
        )


def _postgres_skip(terminalreporter: pytest.TerminalReporter) -> str | None:
    """Why PostgreSQL was skipped, from the skips' reasons: with pytest-xdist the fixture runs
    in the workers, and only their reports reach the process that writes the summary."""
    for report in terminalreporter.stats.get("skipped", []):
        reason = _skip_reason(report).strip()
        if reason.startswith("PostgreSQL not reachable"):
            return reason.removesuffix(_POSTGRES_HINT)
    return None
