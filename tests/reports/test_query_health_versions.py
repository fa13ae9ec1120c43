"""Query health judges instability between runs of one config version: a query whose value
moved because the config changed (and changed back: a rollback) is not unstable, while one that
changes side from run to run of the same version is. ``evalplat queries NAME@VER`` reads one
version's runs alone, as ``NAME@VER`` does everywhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from evalplat.comparison.query_health import query_health
from evalplat.reports.health import health_html, health_page
from evalplat.store import Store

ENGINE = """
import pathlib


def search(query, depth, mode="good", folder="", **params):
    night = int((pathlib.Path(folder) / "night.txt").read_text())
    topic = query.split()[-1]
    if mode == "bad" or (topic == "wobbly" and night % 2 == 1):
        return [("n-" + topic, 1.0)]
    return [("d-" + topic, 1.0)]
"""
TOPICS = ["steady", "wobbly", "t1"]
# nights 0-1 on version 1, 2-3 on version 2 (a deliberate change), 4-5 back on version 1
MODES = ["good", "good", "bad", "bad", "good", "good"]


def _plant(cli: Callable[..., Any], db: str, folder: Path) -> None:
    (folder / "wobbly_engine.py").write_text(ENGINE, encoding="utf-8")
    (folder / "queries.tsv").write_text("".join(f"{t}\ttopic {t}\n" for t in TOPICS), "utf-8")
    qrels = "".join(f"{t} 0 d-{t} 1\n{t} 0 n-{t} 0\n" for t in TOPICS)
    (folder / "qrels.txt").write_text(qrels, encoding="utf-8")
    files = ("--qrels", str(folder / "qrels.txt"), "--queries", str(folder / "queries.tsv"))
    assert cli("testset", "import", "topics", *files, "--db", db).exit_code == 0
    for night, mode in enumerate(MODES):
        added = cli("config", "add", "shop", "--searcher", "python", "--param",
                    "function=wobbly_engine:search", "--param", f"path={folder}", "--param",
                    f"mode={mode}", "--param", f"folder={folder}", "--db", db)  # fmt: skip
        assert added.exit_code == 0, added.stderr
        (folder / "night.txt").write_text(str(night), encoding="utf-8")
        ran = cli("run", "shop", "--testset", "topics", "-m", "nDCG@10", "--db", db)
        assert ran.exit_code == 0, ran.stderr


def _health(cli: Callable[..., Any], db: str, config: str) -> dict[str, Any]:
    result = cli("queries", config, "--testset", "topics", "--json", "--db", db)
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_a_change_of_config_version_is_not_instability(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    _plant(cli, db_url, tmp_path)
    every = _health(cli, db_url, "shop")
    assert len(every["runs"]) == len(MODES)
    flips = {q["query_id"]: q["flips"] for q in every["queries"]}
    # steady and t1 went bad with version 2 and good again with version 1: no flip at all;
    # wobbly changed side within version 1 (nights 0-1 and 4-5): two flips
    assert flips == {"steady": 0, "t1": 0, "wobbly": 2}
    assert every["unstable"] == ["wobbly"]
    with Store.open(db_url) as store:
        inputs = store.query_health_inputs("shop", "topics", timedelta(days=1), window="1d")
    assert inputs.versions == (1, 1, 2, 2, 1, 1)
    page = health_html(health_page(query_health(inputs)))
    assert "Unstable: they flip between good and bad within one config version" in page


def test_queries_reads_one_version_alone(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    _plant(cli, db_url, tmp_path)
    every = _health(cli, db_url, "shop")["runs"]
    first = _health(cli, db_url, "shop@1")
    assert first["runs"] == [every[n] for n in (0, 1, 4, 5)]
    assert first["config"] == "shop"
    second = _health(cli, db_url, "shop@2")
    assert second["runs"] == every[2:4]
    assert {q["query_id"]: q["mean"] for q in second["queries"]} == {
        "steady": 0.0, "t1": 0.0, "wobbly": 0.0,
    }  # fmt: skip
    # the rollback made version 1 current again: @latest reads it
    assert _health(cli, db_url, "shop@latest")["runs"] == first["runs"]
    missing = cli("queries", "shop@9", "--testset", "topics", "--db", db_url)
    assert missing.exit_code == 2 and "has no version 9 (has 1, 2)" in missing.stderr
    run_id = cli("queries", "#3", "--testset", "topics", "--db", db_url)
    assert run_id.exit_code == 2 and "names a run" in run_id.stderr
