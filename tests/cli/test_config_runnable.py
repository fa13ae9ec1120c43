"""A stored config is always runnable: ``config add`` refuses what ``run`` would fail on, and
``run`` refuses, before it creates a run, a config or test set that cannot work."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store

from ..searchers.json_engine import EngineServer, engine_server

Cli = Callable[..., Any]


@pytest.fixture
def server() -> Iterator[EngineServer]:
    with engine_server() as running:
        yield running


def _configs(cli: Cli, db_url: str) -> list[Any]:
    listed: list[Any] = json.loads(cli("config", "list", "--db", db_url, "--json").stdout)
    return listed


def _runs(cli: Cli, db_url: str) -> list[Any]:
    listed: list[Any] = json.loads(cli("runs", "list", "--db", db_url, "--json").stdout)
    return listed


@pytest.mark.parametrize(
    ("searcher", "params", "message"),
    [
        ("http", ["url=http://127.0.0.1:9/{{ nosuch.attr }}", "results_path=items"],
         "url template uses 'nosuch', which is not defined"),
        ("http", ["url=file:///etc/passwd", "preset=elasticsearch"],
         "must start with http:// or https://"),
        ("http", ["url=http://127.0.0.1:9/x", "results_path=items", "body={bad"],
         "http searcher body is not valid JSON"),
        ("builtin", ["weights.title=abc"], "weight for 'title' must be a number, got 'abc'"),
        ("command", ["command=[]"], "'command' must name a program to start"),
        ("python", ["function=foo"], "must look like 'module:function', got 'foo'"),
    ],
)  # fmt: skip
def test_config_add_refuses_what_a_run_would_fail_on(
    cli: Cli, db_url: str, searcher: str, params: list[str], message: str
) -> None:
    args = [arg for param in params for arg in ("--param", param)]
    result = cli("config", "add", "x", "--searcher", searcher, *args, "--db", db_url)
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and message in line
    assert _configs(cli, db_url) == []


def _test_set(cli: Cli, db_url: str, folder: Path, *, texts: bool) -> None:
    qrels = folder / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    queries = folder / "queries.tsv"
    queries.write_text("q1\twing flutter\nq2\tboundary layer\n", encoding="utf-8")
    docs = folder / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "wing"}\n{"id": "d2", "text": "layer"}\n')
    args = ["--queries", str(queries)] if texts else []
    imported = cli("testset", "import", "t", "--qrels", str(qrels), "--docs", str(docs), *args,
                   "--db", db_url)  # fmt: skip
    assert imported.exit_code == 0, imported.stderr


def test_a_config_stored_before_the_checks_is_refused_by_run_before_a_run_exists(
    cli: Cli, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _test_set(cli, db_url, tmp_path, texts=True)
    with monkeypatch.context() as patched:  # a database written by an older evalplat
        patched.setattr("evalplat.searchers.validate_config", lambda kind, params: dict(params))
        with Store.open(db_url) as store:
            store.add_config("old", "http", {"url": "http://127.0.0.1:9/{{ nosuch.attr }}",
                                             "results_path": "items"})  # fmt: skip
    result = cli("run", "old", "--testset", "t", "--db", db_url)
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert "url template uses 'nosuch', which is not defined" in line
    assert _runs(cli, db_url) == []


@pytest.mark.parametrize(
    ("searcher", "params"),
    [
        ("http", ["preset=elasticsearch", "url=http://127.0.0.1:9/docs"]),
        ("builtin", []),
    ],
)
def test_a_test_set_without_query_texts_is_refused_by_a_searcher_that_sends_them(
    cli: Cli, db_url: str, tmp_path: Path, searcher: str, params: list[str]
) -> None:
    _test_set(cli, db_url, tmp_path, texts=False)
    args = [arg for param in params for arg in ("--param", param)]
    assert cli("config", "add", "c", "-s", searcher, *args, "--db", db_url).exit_code == 0
    result = cli("run", "c", "--testset", "t", "--db", db_url)
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert f"test set t@1 has no query texts, and the {searcher} searcher sends the text" in line
    assert "`evalplat testset import t --qrels FILE --queries FILE`" in line
    assert _runs(cli, db_url) == []


def test_a_searcher_that_works_by_query_id_runs_without_query_texts(
    cli: Cli, db_url: str, tmp_path: Path, server: EngineServer
) -> None:
    _test_set(cli, db_url, tmp_path, texts=False)
    added = cli("config", "add", "by-id", "-s", "http", "-p",
                f"url={server.url}/by-id/{{{{ query_id }}}}", "-p", "results_path=items",
                "-p", "probe=false", "--db", db_url)  # fmt: skip
    assert added.exit_code == 0, added.stderr
    result = cli("run", "by-id", "--testset", "t", "--db", db_url, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "complete"
    assert sorted(r["path"] for r in server.requests) == ["/by-id/q1", "/by-id/q2"]
