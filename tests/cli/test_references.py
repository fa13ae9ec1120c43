"""Names and ``NAME@VERSION`` references: bad ones are refused with exit 2, naming the problem."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

Cli = Callable[..., Any]


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("@2", "invalid config reference '@2': expected NAME or NAME@VERSION"),
        ("bm25@0", "the version after '@' must be a number from 1, or 'latest'"),
        ("bm25@two", "the version after '@' must be a number from 1, or 'latest'"),
        ("bm25@9", "config 'bm25' has no version 9 (has 1)"),
    ],
)
def test_a_bad_config_reference_is_exit_2(cli: Cli, db_url: str, ref: str, message: str) -> None:
    assert cli("config", "add", "bm25", "-s", "builtin", "--db", db_url).exit_code == 0
    result = cli("config", "show", ref, "--db", db_url)
    assert result.exit_code == 2
    assert message in result.stderr


def test_latest_names_the_newest_version(cli: Cli, db_url: str) -> None:
    for operator in ("or", "and"):
        cli("config", "add", "bm25", "-s", "builtin", "-p", f"operator={operator}", "--db", db_url)
    shown = json.loads(cli("config", "show", "bm25@latest", "--db", db_url, "--json").stdout)
    assert (shown["version"], shown["params"]) == (2, {"operator": "and"})


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("  ", "config name must not be empty"),
        ("a@b", "config name 'a@b' must not contain '@' (it starts a version)"),
        ("a\tb", "config name 'a\\tb' contains a control character"),
        ("x" * 201, "is 201 characters long (at most 200)"),
    ],
)
def test_a_bad_name_is_refused_and_nothing_is_added(
    cli: Cli, db_url: str, name: str, message: str
) -> None:
    result = cli("config", "add", name, "-s", "builtin", "--db", db_url)
    assert result.exit_code == 2
    assert message in result.stderr
    assert json.loads(cli("config", "list", "--db", db_url, "--json").stdout) == []
