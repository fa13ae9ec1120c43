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


def _runs(cli: Cli, db_url: str, folder: Any) -> None:
    """Run 1 of config ``other``; runs 2 and 3 of ``bm25`` version 1; run 4 of its version 2."""
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    run.write_text("q1 Q0 d1 1 2.0 x\nq2 Q0 d3 1 1.0 x\n", encoding="utf-8")
    assert cli("testset", "import", "t", "--qrels", str(qrels), "--db", db_url).exit_code == 0
    for config, label in (("other", "a"), ("bm25", "a"), ("bm25", "a"), ("bm25", "b")):
        done = cli("import-run", str(run), "--config", config, "--label", label, "--testset", "t",
                   "--db", db_url)  # fmt: skip
        assert done.exit_code == 0, done.stderr


@pytest.mark.parametrize("ref", ["3", "#3", "run:3", "bm25@1"])
def test_a_run_is_named_by_its_id_or_its_config_version(
    cli: Cli, db_url: str, tmp_path: Any, ref: str
) -> None:
    _runs(cli, db_url, tmp_path)
    shown = cli("runs", "show", ref, "--db", db_url, "--json")
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["id"] == 3


def test_at_n_is_a_config_version_and_the_output_says_which_run_it_picked(
    cli: Cli, db_url: str, tmp_path: Any
) -> None:
    _runs(cli, db_url, tmp_path)
    exported = cli("runs", "export", "bm25@1", "--db", db_url)
    assert exported.exit_code == 0, exported.stderr
    assert "run 3 (bm25@1: the latest complete run of config version 1)" in exported.stderr
    pinned = cli("baseline", "set", "bm25", "bm25@1", "--db", db_url)
    assert "run 3 (pinned) (bm25@1: the latest complete run" in pinned.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("config", "show", "#3"), "'#3': #3 names a run; a version is written NAME@VERSION"),
        (("config", "show", "run:3"), "names a run; a version is written NAME@VERSION"),
        (("runs", "show", "bm25#1"), "bm25@1 is the latest complete run of version 1"),
        (("baseline", "set", "bm25", "1"), "1 is a run id: version 1 of 'bm25' is written bm25@1"),
    ],
)
def test_the_other_form_is_refused_with_the_one_meant(
    cli: Cli, db_url: str, tmp_path: Any, args: tuple[str, ...], message: str
) -> None:
    _runs(cli, db_url, tmp_path)
    result = cli(*args, "--db", db_url)
    assert result.exit_code == 2, result.stdout
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    shown = json.loads(cli("baseline", "show", "bm25", "--db", db_url, "--json").stdout)
    assert not [b for b in shown if b["pinned"]]  # nothing pinned
