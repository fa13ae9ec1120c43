"""`evalplat run` at its edges: a searcher that breaks on some queries, on every query, bad
settings, and runs that cannot be resumed, searched or rescored."""

from __future__ import annotations

import io
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.running import runner
from evalplat.store import Store

Cli = Callable[..., Any]

ENGINE_SOURCE = """
def search(query, depth):
    if query == "broken":
        raise RuntimeError("index not loaded")
    if query == "twice":
        return [("d1", 2.0), ("d1", 1.0)]
    return [("d1", 2.0), ("d2", 1.0)][:depth]


def always_broken(query, depth):
    raise RuntimeError("index not loaded")
"""


@pytest.fixture
def project(
    cli: Cli, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Test set ``small`` (queries fine, broken, twice) and python configs ``engine`` and
    ``dead`` in ``db_url``; returns the paths the tests pass on."""
    module = f"edge_engine_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(ENGINE_SOURCE, encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\nq3 0 d2 1\n", encoding="utf-8")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tfine\nq2\tbroken\nq3\ttwice\n", encoding="utf-8")
    run_file = tmp_path / "run.txt"
    run_file.write_text("q1 Q0 d1 1 2.0 x\n", encoding="utf-8")
    db = ("--db", db_url)
    assert cli("testset", "import", "small", "--qrels", str(qrels), "--queries", str(queries),
               *db).exit_code == 0  # fmt: skip
    for name, function in (("engine", "search"), ("dead", "always_broken")):
        added = cli("config", "add", name, "-s", "python", "-p", f"function={module}:{function}",
                    "-p", f"path={tmp_path}", *db)  # fmt: skip
        assert added.exit_code == 0, added.stderr
    return {"run_file": str(run_file)}


def _runs(cli: Cli, db_url: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = json.loads(cli("runs", "list", "--db", db_url, "--json").stdout)
    return runs


def test_a_query_that_raises_or_repeats_a_document_fails_alone(
    cli: Cli, db_url: str, project: dict[str, str]
) -> None:
    result = cli("run", "engine", "-t", "small", "--db", db_url)
    assert result.exit_code == 3
    assert "is partial: 2 of 3 queries failed" in result.stderr
    [run] = _runs(cli, db_url)
    shown = cli("runs", "show", str(run["id"]), "--db", db_url)
    assert "3/3 done, 2 failed" in shown.stdout
    assert "failed q2: python searcher " in shown.stdout
    assert "query 'q2' raised RuntimeError: index not loaded" in shown.stdout
    assert "failed q3: the engine returned document 'd1' twice in one ranking" in shown.stdout


def test_a_run_whose_every_query_fails_is_failed_with_the_first_error(
    cli: Cli, db_url: str, project: dict[str, str]
) -> None:
    result = cli("run", "dead", "-t", "small", "--db", db_url, "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["status"] == "failed"
    assert "(all 3 queries failed; first error: python searcher " in result.stderr
    assert "query 'q1' raised RuntimeError: index not loaded" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("engine", "-t", "small", "--depth", "0"), "depth must be from 1 to 100,000, got '0'"),
        (("engine", "-t", "small", "-c", "0"), "concurrency must be from 1 to 1000, got 0"),
        (("engine", "-t", "small", "--rate-limit", "0"), "--rate-limit must be at least 0.001"),
        (("engine", "-t", "small", "--rate-limit", "nan"), "--rate-limit must be a finite number"),
        (("engine", "-t", "small", "--rate-limit", "inf"), "--rate-limit must be a finite number"),
        (("engine", "-t", "small", "--rate-limit", "1e-9"), "--rate-limit must be at least 0.001"),
        (("engine@", "-t", "small"), "invalid config reference 'engine@': the version after '@'"),
        (("engine", "-t", "small@"), "invalid test set reference 'small@': the version after"),
        (("engine", "-t", "small", "--trigger", "weekly"), "--trigger must be manual, nightly"),
        (("engine", "--resume", "1"), "--resume RUN takes no CONFIG or --testset"),
        (("engine",), "give CONFIG and --testset NAME (or --resume RUN)"),
    ],
)
def test_bad_run_settings_are_exit_2_and_start_no_run(
    cli: Cli, db_url: str, project: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    result = cli("run", *args, "--db", db_url)
    assert result.exit_code == 2
    assert message in result.stderr
    assert _runs(cli, db_url) == []


def test_a_rate_limited_run_completes(cli: Cli, db_url: str, project: dict[str, str]) -> None:
    result = cli("run", "engine", "-t", "small", "--rate-limit", "1000", "--db", db_url, "--json")
    assert result.exit_code == 3  # q2 and q3 fail whatever the pace
    data = json.loads(result.stdout)
    assert (data["queries_done"], data["queries_failed"]) == (3, 2)
    assert data["options"]["rate_limit"] == 1000


def test_an_imported_run_cannot_be_resumed_and_its_config_cannot_search(
    cli: Cli, db_url: str, project: dict[str, str]
) -> None:
    imported = cli("import-run", project["run_file"], "--config", "file", "-t", "small",
                   "--db", db_url, "--json")  # fmt: skip
    run_id = json.loads(imported.stdout)["id"]
    resumed = cli("run", "--resume", str(run_id), "--db", db_url)
    assert resumed.exit_code == 2
    assert f"run {run_id} was imported from a file; there is nothing to search" in resumed.stderr
    searched = cli("run", "file", "-t", "small", "--db", db_url)
    assert searched.exit_code == 2
    assert "holds imported run files and has no searcher" in searched.stderr
    assert [r["id"] for r in _runs(cli, db_url)] == [run_id]


def test_a_running_run_is_not_rescored(
    cli: Cli, db_url: str, project: dict[str, str], store: Store
) -> None:
    run_id = store.create_run(
        store.config_version_id("engine"), store.test_set_version_id("small"), depth=10,
        queries_total=3,
    )  # fmt: skip
    result = cli("rescore", str(run_id), "--db", db_url)
    assert result.exit_code == 2
    assert f"run {run_id} is still running; rescore it when it has finished" in result.stderr


def test_progress_is_reported_from_zero_to_every_query(
    project: dict[str, str], store: Store
) -> None:
    seen: list[tuple[int, int]] = []
    info = runner.run(
        store, "engine", "small", progress=lambda done, total: seen.append((done, total))
    )
    assert info.queries_done == 3
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_cli_shows_a_progress_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalplat.cli.run import _progress

    with _progress() as update:  # the test's stderr is not a terminal
        assert update is None
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with _progress() as update:
        assert update is not None
        update(2, 3)
    assert "2/3" in terminal.getvalue()
