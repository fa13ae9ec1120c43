"""Parameter files and ``--param`` values of ``evalplat config add``: every refusal names the
file (and the line where there is one), exits 2 and adds nothing."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.searchers.configs import (
    load_params_file,
    merge_params,
    parse_params,
    parse_value,
    toml_error,
)

Cli = Callable[..., Any]


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("missing.toml", None, "missing.toml: file not found"),
        (
            "latin1.toml",
            'tokenizer = "caf\xe9"\n'.encode("latin-1"),
            "latin1.toml: not UTF-8 text (byte 16)",
        ),
        ("blank.toml", b"  \n\n", "blank.toml: file is empty"),
        ("broken.json", b'{\n  "tokenizer": "porter",\n}\n', "broken.json line 3: invalid JSON"),
        ("list.json", b'["porter"]', "list.json: expected a table of parameters at the top level"),
        ("nan.json", b'{"weights": {"title": NaN}}', "nan.json: parameter value nan is not a fin"),
        ("inf.json", b'{"fields": [1, Infinity]}', "inf.json: parameter value inf is not a fin"),
        ("dup.toml", b'operator = "or"\noperator = "and"\n', "dup.toml line 2: invalid TOML"),
    ],
)
def test_a_bad_params_file_is_exit_2_names_the_file_and_adds_nothing(
    cli: Cli, db_url: str, tmp_path: Path, name: str, content: bytes | None, expected: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    result = cli("config", "add", "x", "--searcher", "builtin", "--file", str(path), "--db", db_url)
    assert result.exit_code == 2
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert json.loads(cli("config", "list", "--db", db_url, "--json").stdout) == []


def test_a_param_cannot_be_both_a_value_and_a_table(cli: Cli, db_url: str) -> None:
    result = cli(
        "config", "add", "x", "-s", "http", "-p", "headers=1", "-p", "headers.X=2", "--db", db_url
    )
    assert result.exit_code == 2
    assert "--param 'headers.X=2': 'headers' is already a value, not a table" in result.stderr
    assert json.loads(cli("config", "list", "--db", db_url, "--json").stdout) == []


def test_params_merge_table_by_table_with_the_file(cli: Cli, db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "weights.json"
    path.write_text('{"weights": {"title": 2, "text": 1}, "operator": "or"}', encoding="utf-8")
    result = cli(
        "config", "add", "w", "-s", "builtin", "-f", str(path), "-p", "weights.text=3",
        "--db", db_url, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["params"] == {
        "weights": {"title": 2, "text": 3},
        "operator": "or",
    }


def test_toml_dates_in_a_params_file_are_stored_as_iso_text(tmp_path: Path) -> None:
    path = tmp_path / "dated.toml"
    path.write_text("since = 2024-05-01\n[window]\nstart = 08:30:00\n", encoding="utf-8")
    assert load_params_file(path) == {"since": "2024-05-01", "window": {"start": "08:30:00"}}


def test_param_values_that_look_like_numbers_or_dates_but_are_words_stay_text() -> None:
    assert parse_value("inf") == "inf"
    assert parse_value("nan") == "nan"
    assert parse_value("2024-05-01") == "2024-05-01"
    assert parse_params(["a.b.c=1", "a.b.d=x"]) == {"a": {"b": {"c": 1, "d": "x"}}}


def test_merge_replaces_a_value_with_a_table_and_back() -> None:
    assert merge_params({"a": 1, "b": {"c": 1}}, {"a": {"x": 2}, "b": 3}) == {
        "a": {"x": 2},
        "b": 3,
    }


def test_a_toml_error_without_a_position_keeps_its_whole_message() -> None:
    assert toml_error(tomllib.TOMLDecodeError("something odd")) == ("something odd", None)
    with pytest.raises(tomllib.TOMLDecodeError) as caught:
        tomllib.loads("a = \n")
    problem, line = toml_error(caught.value)
    assert line == 1 and "line" not in problem


def test_a_missing_params_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_params_file(tmp_path / "nope.toml")
    assert caught.value.exit_code == 2 and caught.value.path == str(tmp_path / "nope.toml")
