"""`evalplat config`: typed parameters, content-hashed versions, secrets never expanded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from evalplat.db.engine import create_db_engine
from evalplat.searchers.configs import parse_params, parse_value


def test_param_values_are_typed_like_toml() -> None:
    assert parse_value("100") == 100
    assert parse_value("0.25") == 0.25
    assert parse_value("true") is True
    assert parse_value("[1, 2]") == [1, 2]
    assert parse_value('"a b"') == "a b"
    assert parse_value("porter") == "porter"
    assert parse_value("title=2,text=1") == "title=2,text=1"
    assert parse_params(["headers.Authorization=Bearer ${T}", "timeout=5"]) == {
        "headers": {"Authorization": "Bearer ${T}"},
        "timeout": 5,
    }


def test_config_list_prints_a_bracketed_label_as_written(
    cli: Callable[..., Any], db_url: str
) -> None:
    add = ("config", "add", "bm25", "--searcher", "builtin", "--db", db_url)
    added = cli(*add, "--label", "[wip] b")
    assert added.exit_code == 0, added.stderr
    listed = cli("config", "list", "--db", db_url).stdout
    assert "[wip] b" in listed


def test_identical_config_is_the_same_version_and_a_change_is_a_new_one(
    cli: Callable[..., Any], db_url: str
) -> None:
    add = ("config", "add", "bm25", "--searcher", "builtin", "--db", db_url, "--json")
    first = json.loads(cli(*add, "--param", "tokenizer=porter").stdout)
    same = json.loads(cli(*add, "--param", "tokenizer=porter").stdout)
    other = json.loads(cli(*add, "--param", "tokenizer=unicode61").stdout)
    assert (first["version"], first["created"]) == (1, True)
    assert (same["version"], same["created"]) == (1, False)
    assert (other["version"], other["created"]) == (2, True)
    labelled = json.loads(cli(*add, "--param", "tokenizer=unicode61", "--label", "abc123").stdout)
    assert labelled["version"] == 3 and labelled["label"] == "abc123"
    shown = json.loads(cli("config", "show", "bm25@1", "--db", db_url, "--json").stdout)
    assert shown["params"] == {"tokenizer": "porter"}


def test_env_placeholders_are_stored_unexpanded(
    cli: Callable[..., Any], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCH_TOKEN", "s3cr3t-value")
    result = cli(
        "config",
        "add",
        "es",
        "--searcher",
        "http",
        "--param",
        "preset=elasticsearch",
        "--param",
        "url=http://127.0.0.1:9200/docs/_search",
        "--param",
        "headers.Authorization=Bearer ${SEARCH_TOKEN}",
        "--db",
        db_url,
    )
    assert result.exit_code == 0, result.stderr
    engine = create_db_engine(db_url)
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT params FROM config_version")).scalar_one()
    engine.dispose()
    raw = stored if isinstance(stored, str) else json.dumps(stored)
    assert "${SEARCH_TOKEN}" in raw and "s3cr3t-value" not in raw
    shown = cli("config", "show", "es", "--db", db_url)
    assert "${SEARCH_TOKEN}" in shown.stdout and "s3cr3t-value" not in shown.stdout


def test_params_file_with_nested_tables_and_overrides(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    params = tmp_path / "es.toml"
    params.write_text(
        'preset = "elasticsearch"\nurl = "http://127.0.0.1:9200/x/_search"\ntimeout = 5\n'
        '[headers]\nX-Team = "search"\n',
        encoding="utf-8",
    )
    result = cli(
        "config",
        "add",
        "es",
        "--searcher",
        "http",
        "--file",
        str(params),
        "--param",
        "timeout=2.5",
        "--db",
        db_url,
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["params"]["headers"] == {"X-Team": "search"}
    assert data["params"]["timeout"] == 2.5


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--searcher", "elastic"), "unknown searcher 'elastic'"),
        (("--searcher", "builtin", "--param", "stemmer=porter"), "has no param 'stemmer'"),
        (("--searcher", "builtin", "--param", "novalue"), "expected KEY=VALUE"),
    ],
)
def test_bad_config_is_exit_2_and_adds_nothing(
    cli: Callable[..., Any], db_url: str, args: tuple[str, ...], expected: str
) -> None:
    result = cli("config", "add", "x", *args, "--db", db_url)
    assert result.exit_code == 2
    assert expected in result.stderr
    assert json.loads(cli("config", "list", "--db", db_url, "--json").stdout) == []


def test_params_file_with_a_syntax_error_names_the_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    params = tmp_path / "bad.toml"
    params.write_text('preset = "solr"\nurl = \n', encoding="utf-8")
    result = cli("config", "add", "x", "--searcher", "http", "--file", str(params), "--db", db_url)
    assert result.exit_code == 2
    assert "bad.toml line 2" in result.stderr
