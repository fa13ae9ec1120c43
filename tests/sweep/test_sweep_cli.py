"""``evalplat sweep`` on the builtin engine: the table ends with the compare command that
reproduces the winner's verdict, ``--json`` has stable fields, bad input exits 2 writing nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..contract.dump import dump

DOCS = [
    {"id": f"d{n}", "title": f"boundary layer {n}" if n % 3 == 0 else f"note {n}",
     "text": f"flow over wing {n} boundary" if n % 2 else f"heat transfer slab {n}"}
    for n in range(30)
]  # fmt: skip


@pytest.fixture
def world(cli: Callable[..., Any], db_url: str, tmp_path: Path) -> str:
    qrels = "".join(f"q{n % 6} 0 d{n} {1 + n % 2}\n" for n in range(0, 30, 2))
    queries = "".join(
        f"q{n}\t{text}\n"
        for n, text in enumerate(["boundary layer", "heat transfer", "wing flow", "slab heat",
                                  "boundary flow", "layer note"])
    )  # fmt: skip
    (tmp_path / "qrels.txt").write_text(qrels, encoding="utf-8")
    (tmp_path / "q.tsv").write_text(queries, encoding="utf-8")
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS), "utf-8")
    for step in [
        ("testset", "import", "t", "--qrels", str(tmp_path / "qrels.txt"), "--queries",
         str(tmp_path / "q.tsv"), "--docs", str(tmp_path / "docs.jsonl")),
        ("config", "add", "bm25", "--searcher", "builtin"),
    ]:  # fmt: skip
        result = cli(*step, "--db", db_url)
        assert result.exit_code == 0, result.stderr
    return db_url


def test_the_text_output_ends_with_the_compare_command(cli: Callable[..., Any], world: str) -> None:
    args = ("sweep", "bm25", "-t", "t", "--grid", "operator=or,and", "--grid",
            "weights.title=1,3", "--folds", "3", "--db", world)  # fmt: skip
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert "every setting of the grid (4)" in lines[0] and "4 searched, 0 reused" in lines[0]
    assert any(line.startswith("Held-out gain (3-fold, 95% interval)") for line in lines)
    assert lines[-1].startswith("evalplat compare ")
    baseline, winner = lines[-1].split()[2:]
    replay = cli("compare", baseline, winner, "--json", "--db", world)
    verdict = json.loads(replay.stdout)["verdict"]
    assert f"Winner against the baseline: {verdict} (" in result.stdout
    again = cli(*args)
    assert "0 searched, 4 reused" in again.stdout


def test_json_output(cli: Callable[..., Any], world: str) -> None:
    result = cli("sweep", "bm25", "-t", "t", "--grid", "tokenizer=porter,unicode61",
                 "--folds", "2", "--metric", "P@5", "--json", "--db", world)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["metric"] == "P@5" and data["strategy"] == "grid" and data["grid_size"] == 2
    assert {row["label"] for row in data["settings"]} == {"tokenizer=porter",
                                                          "tokenizer=unicode61"}  # fmt: skip
    assert set(data["held_out"]) >= {"in_sample_gain", "held_out_gain", "interval", "folds"}
    assert data["verdict"] in ("regression", "improvement", "unchanged", "needs_judgments")
    assert data["compare_command"].startswith("evalplat compare ")
    configs = json.loads(cli("config", "list", "--json", "--db", world).stdout)
    assert {c["name"] for c in configs} == {"bm25", "bm25~tokenizer=porter",
                                            "bm25~tokenizer=unicode61"}  # fmt: skip


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--grid", "k1=1.2,1.5"), "--grid k1=1.2: builtin searcher has no param 'k1'"),
        (("--grid", "tokenizer=porter,snowball"), "--grid tokenizer=snowball"),
        (("--grid", "weights.title=1,-2"), "--grid weights.title=-2"),
        (("--grid", "operator"), "--grid 'operator'"),
        (("--grid", "operator=or,and", "--strategy", "exhaustive"), "--strategy"),
        (("--grid", "operator=or,and", "--max-runs", "1"), "--max-runs 1"),
        (("--grid", "operator=or,and", "--folds", "7"), "--folds 7"),
        (("--grid", "operator=or,and", "--baseline", "nosuch"), "no config named 'nosuch'"),
        (("--grid", "operator=or,and", "--metric", "nDCG@x"), "--metric nDCG@x"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    cli: Callable[..., Any], world: str, args: tuple[str, ...], named: str
) -> None:
    before = dump(world)
    result = cli("sweep", "bm25", "-t", "t", *args, "--db", world)
    assert result.exit_code == 2, result.stderr
    assert named in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert dump(world) == before
