"""`config add` refuses what `run` would refuse: one validator, ``validate_config``, for both."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from evalplat.db.models import ConfigVersion
from evalplat.errors import InputError
from evalplat.searchers import validate_config
from evalplat.store import Store

HTTP = ["--searcher", "http", "--param", "url=http://127.0.0.1:9/s", "--param", "results_path=hits"]


@pytest.mark.parametrize(
    ("param", "problem"),
    [
        ("fields=[1,", "'fields' must be a list"),
        ("query_params={a=", "'query_params' must be a table"),
        ("timeout=-1", "'timeout' must be more than 0"),
        ("timeout=inf", "'timeout' must be a number"),
        ("retries=-5", "'retries' must be at least 0"),
        ("retries=1e400", "'retries' must be an integer"),
        ("body={{ query", "body template"),
        ("id_field=a..b", "invalid response path"),
        ("headers.X-Token={% if %}", "header X-Token template"),
    ],
)
def test_config_add_refuses_params_a_run_would_refuse(
    cli: Callable[..., Any], db_url: str, param: str, problem: str
) -> None:
    result = cli("config", "add", "c1", *HTTP, "--param", param, "--db", db_url)
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0]
    with Store.open(db_url) as store:
        assert store.list_configs() == []


def test_command_and_sql_bounds_are_checked_at_add_time(
    cli: Callable[..., Any], db_url: str
) -> None:
    refused = cli(
        "config", "add", "c", "--searcher", "command", "--param", "command=cat",
        "--param", "processes=0", "--db", db_url,
    )  # fmt: skip
    assert refused.exit_code == 2 and "'processes' must be at least 1" in refused.stderr
    assert validate_config("sql", {"url": "sqlite://", "query": "select :query"})["timeout"] == 30.0
    with pytest.raises(InputError, match="'timeout' must be more than 0"):
        validate_config("sql", {"url": "sqlite://", "query": "select 1", "timeout": 0})


def test_placeholders_need_no_environment_to_validate() -> None:
    params = {"url": "http://h/${UNSET_FOR_THIS_TEST}", "headers": {"A": "${ALSO_UNSET}"}}
    checked = validate_config("http", {**params, "results_path": "hits"})
    assert checked["url"] == "http://h/${UNSET_FOR_THIS_TEST}"


def test_run_refuses_a_stored_config_the_validator_refuses(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    """A version stored before the validator knew better is refused by `run` the same way,
    before a run row is written."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    assert cli("config", "add", "c1", *HTTP, "--db", db_url).exit_code == 0
    with Store.open(db_url) as store, store.session() as session:
        session.execute(
            update(ConfigVersion).values(
                params={"url": "http://127.0.0.1:9/s", "results_path": "hits", "timeout": -1}
            )
        )
    result = cli("run", "c1", "--testset", "t", "--db", db_url)
    assert result.exit_code == 2
    assert "'timeout' must be more than 0" in result.stderr
    with Store.open(db_url) as store:
        assert store.list_runs() == []
