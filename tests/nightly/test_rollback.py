"""A rollback moves the name: when the project file goes back to the content of an earlier
version, that version is the config's current one on every surface (``config show``, ``config
list``, ``NAME@latest``, the arms of events imported the next morning, the report index), and
no version is added. ``config add`` of an earlier content does the same from the command line,
and a sweep of an earlier version measures against the current one."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalplat.events.synthetic import Arm, write_ubi_log
from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.reports.site import write_site
from evalplat.store import Store

from .small_project import write_project

Cli = Callable[..., Any]
GRADES = {"topic 1": {"d1": 1, "n1": 0}, "topic 2": {"d2": 1, "n2": 0}}


def _night(db_url: str, folder: Path, mode: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    path = write_project(folder, {"shop": mode})
    outcome = run_nightly(load_project(path), db_url=db_url, log=steps.append)
    assert outcome.exit_code in (0, 1), steps
    return steps


def _json(cli: Cli, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _index_row(site: Path, config: str, test_set: str) -> str:
    html = (site / "index.html").read_text(encoding="utf-8")
    found = re.search(
        rf'<tr data-config="{config}" data-testset="{test_set}".*?</tr>', html, flags=re.S
    )
    assert found is not None, html
    return found.group(0)


def test_a_rollback_in_the_project_file_makes_the_earlier_version_current_everywhere(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    _night(db_url, folder, "good")  # shop@1
    _night(db_url, folder, "first20")  # shop@2
    _night(db_url, folder, "first25")  # shop@3
    steps = _night(db_url, folder, "first20")  # the file back at version 2's content
    [config_step] = [s for s in steps if s["step"] == "config"]
    assert (config_step["version"], config_step["created"]) == (2, False)
    db = ("--db", db_url)
    shown = _json(cli, "config", "show", "shop", *db)
    assert (shown["version"], shown["current"]) == (2, True)
    assert _json(cli, "config", "show", "shop@latest", *db)["version"] == 2
    assert _json(cli, "config", "show", "shop@3", *db)["current"] is False
    assert "shop@2 is current" in cli("config", "show", "shop@3", *db).stdout
    listed = _json(cli, "config", "list", *db)
    assert [(c["name"], c["version"]) for c in listed] == [("shop", 2)]
    assert [r["config_version"] for r in _json(cli, "runs", "list", "shop", *db)] == [2, 3, 2, 1]
    assert _json(cli, "runs", "show", "shop@latest", *db)["config_version"] == 2
    # the report index names the version the file holds
    assert "shop v2" in _index_row(folder / "site", "shop", "topics")
    # logs imported the morning after name the arm "shop": they are the current version's
    rankings = {"topic 1": ["d1", "n1"], "topic 2": ["n2", "d2"]}
    log = write_ubi_log(tmp_path / "day.jsonl", [Arm("shop", rankings)], GRADES, sessions=40,
                        seed=2, start=datetime(2026, 3, 1, 8, tzinfo=UTC))  # fmt: skip
    with Store.open(db_url) as store:
        store.import_events([log.path])
        [scored] = store.score_online(["shop"])
        site = write_site(store, tmp_path / "site")
    assert (scored.config, scored.config_version) == ("shop", 2)
    assert "shop v2" in _index_row(site.parent, "shop", "online")


def test_config_add_of_an_earlier_content_rolls_back_and_a_new_content_numbers_on(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    db = ("--db", db_url)
    for tokenizer in ("porter", "unicode61", "trigram"):
        added = _json(cli, "config", "add", "eng", "-s", "builtin", "-p",
                      f"tokenizer={tokenizer}", *db)  # fmt: skip
        assert added["created"] is True
    result = cli("config", "add", "eng", "-s", "builtin", "-p", "tokenizer=unicode61", *db)
    assert result.exit_code == 0, result.stderr
    assert "eng@2 again" in result.stdout and "eng@3 was current" in result.stdout
    again = _json(cli, "config", "add", "eng", "-s", "builtin", "-p", "tokenizer=unicode61", *db)
    assert (again["version"], again["created"], again["replaced"]) == (2, False, None)
    assert _json(cli, "config", "show", "eng", *db)["version"] == 2
    with Store.open(db_url) as store:
        # a new content is numbered past the highest, not past the current, and is current
        added = store.add_config("eng", "builtin", {"operator": "and"})
        assert (added.version.version, added.replaced) == (4, 2)
        # an imported run file's new version is numbered by the same rule and is current
        imported = store.import_config_version("eng", label="abc123")
        assert store.config_version("eng").version == 5
        assert store.config_version_id("eng@5") == imported
        # naming an existing version by its label makes it current again
        store.add_config("eng", "builtin", {"tokenizer": "porter"})
        assert store.import_config_version("eng", label="abc123") == imported
        assert store.config_version("eng@latest").version == 5
        # without a label, an imported run belongs to the current version
        assert store.import_config_version("eng") == imported


def test_the_index_says_when_the_current_version_has_not_run_yet(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    _night(db_url, folder, "good")  # shop@1
    _night(db_url, folder, "first20")  # shop@2
    with Store.open(db_url) as store:
        first = store.config_version("shop@1")
        store.add_config("shop", first.searcher, first.params, label=first.label)  # rollback
        site = write_site(store, tmp_path / "site")
        row = _index_row(site.parent, "shop", "topics")
        assert "shop v1" in row and "not run here yet" not in row
        assert f"#{store.resolve_run('shop@1')}" in row
        store.add_config("shop", first.searcher, {**first.params, "mode": "first25"})  # v3
        row = _index_row(write_site(store, tmp_path / "site").parent, "shop", "topics")
    assert "v3 is current, not run here yet" in row
