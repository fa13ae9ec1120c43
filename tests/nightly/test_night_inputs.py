"""Validate first, then write: a project a night would refuse is refused before anything is
written, and ``--dry-run`` says 2 for exactly those projects. Empty results are results."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store

from .db_counts import table_counts
from .small_project import write_project

Cli = Callable[..., Any]


def refused_projects(folder: Path) -> dict[str, tuple[Path, str]]:
    """Projects a night must refuse, and what the one-line error must say."""
    cases: dict[str, tuple[Path, str]] = {}
    unset = write_project(
        folder / "unset", {"alpha": "good"}, extra='token = "${NIGHT_TEST_UNSET_TOKEN}"'
    )
    cases["unset"] = (unset, "config 'alpha': environment variable NIGHT_TEST_UNSET_TOKEN")
    hook = write_project(folder / "hook", {"alpha": "good"}, hook="${NIGHT_TEST_UNSET_HOOK}/x")
    cases["hook"] = (hook, "[[alerts]] #1 key 'url': environment variable NIGHT_TEST_UNSET_HOOK")
    builtin = write_project(folder / "builtin", {"alpha": "good"})
    text = builtin.read_text().replace('searcher = "python"', 'searcher = "builtin"')
    text = text.replace('function = "engine:search"', 'tokenizer = "porter"')
    text = "\n".join(
        line for line in text.splitlines() if not line.startswith(("path =", "mode ="))
    )
    builtin.write_text(text)
    cases["builtin"] = (builtin, "config 'alpha': the builtin searcher needs documents")
    unknown = write_project(folder / "param", {"alpha": "good"})
    unknown.write_text(unknown.read_text().replace('searcher = "python"', 'searcher = "sql"'))
    cases["param"] = (unknown, "config 'alpha': ")
    for case, searcher, params, key in (
        ("processes", "command", 'command = ["engine"]\nprocesses = 0', "processes"),
        ("timeout", "command", 'command = ["engine"]\ntimeout = -1', "timeout"),
        ("retries", "http", 'url = "http://127.0.0.1:9/x"\nretries = -5', "retries"),
    ):
        bounded = write_project(folder / case, {"alpha": "good"})
        text = bounded.read_text().replace('searcher = "python"', f'searcher = "{searcher}"')
        text = text.replace('function = "engine:search"', params)
        text = "\n".join(
            line for line in text.splitlines() if not line.startswith(("path =", "mode ="))
        )
        bounded.write_text(text)
        cases[case] = (bounded, f"config 'alpha': {searcher} searcher param '{key}' must be")
    blocked = folder / "blocked"
    blocked.write_text("a file, not a folder")
    reports = write_project(
        folder / "reports", {"alpha": "good"}, reports=f'dir = "{blocked}/site"'
    )
    cases["reports"] = (reports, "[reports] dir")
    gains = write_project(folder / "gains", {"alpha": "good"})
    gains.write_text(
        gains.read_text().replace('qrels = "qrels.txt"', 'qrels = "qrels.txt"\ngains = { 1 = -3 }')
    )
    cases["gains"] = (gains, "[[testsets]] #1 key 'gains': gains: the gain of grade 1 must be")
    textless = write_project(folder / "texts", {"alpha": "good"})
    textless.write_text(textless.read_text().replace('queries = "queries.tsv"\n', ""))
    cases["texts"] = (textless, "config 'alpha': test set 'topics' has no query texts, and the "
                      "python searcher sends the text of each query (add queries = ")  # fmt: skip
    return cases


@pytest.mark.parametrize(
    "case",
    [
        "unset",
        "hook",
        "builtin",
        "param",
        "processes",
        "timeout",
        "retries",
        "reports",
        "gains",
        "texts",
    ],
)
def test_a_project_a_night_would_refuse_is_refused_first_and_by_the_dry_run(
    cli: Cli, db_url: str, tmp_path: Path, case: str
) -> None:
    path, expected = refused_projects(tmp_path)[case]
    before = table_counts(db_url)
    dry = cli("nightly", "--project", str(path), "--db", db_url, "--dry-run")
    real = cli("nightly", "--project", str(path), "--db", db_url)
    for result in (dry, real):
        assert result.exit_code == 2, (case, result.stdout, result.stderr)
        [line] = result.stderr.splitlines()
        assert line.startswith(f"error: {path} line "), line
        assert expected in line, line
    assert table_counts(db_url) == before


def test_a_valid_project_passes_the_dry_run(cli: Cli, db_url: str, tmp_path: Path) -> None:
    path = write_project(tmp_path, {"alpha": "good"})
    assert cli("nightly", "--project", str(path), "--db", db_url, "--dry-run").exit_code == 0


def test_a_backend_with_no_hits_at_all_gives_a_complete_run_judged_like_any_drop(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    good = write_project(tmp_path / "a", {"alpha": "good"})
    assert cli("nightly", "--project", str(good), "--db", db_url).exit_code == 0
    empty = write_project(tmp_path / "b", {"alpha": "empty"})
    result = cli("nightly", "--project", str(empty), "--db", db_url, "--json")
    assert result.exit_code == 1, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    run = next(s for s in steps if s["step"] == "run")
    assert (run["status"], run["failed_queries"], run["mean_nDCG@10"]) == ("complete", 0, 0.0)
    assert next(s for s in steps if s["step"] == "compare")["verdict"] == "regression"
    with Store.open(db_url) as store:
        scores = store.evaluation_scores(run["run"])
    ndcg = scores[scores["metric"] == "nDCG@10"]
    assert len(ndcg) == 30 and (ndcg["value"] == 0.0).all()


def test_import_of_a_run_with_no_known_queries_exits_2_and_leaves_nothing(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    path = write_project(tmp_path, {"alpha": "good"})
    assert cli("nightly", "--project", str(path), "--db", db_url).exit_code == 0
    before = table_counts(db_url)
    run_file = tmp_path / "other.run"
    run_file.write_text("x1 Q0 d1 1 2.0 bm25\nx2 Q0 d2 1 1.0 bm25\n")
    result = cli("import-run", str(run_file), "--config", "elsewhere", "--testset", "topics",
                 "--db", db_url)  # fmt: skip
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert "other.run" in line and "none of the run's 2 queries" in line
    assert table_counts(db_url) == before


def test_a_test_set_gain_map_is_stored_and_gated_under_the_mapped_name(
    cli: Cli, db_url: str, tmp_path: Path
) -> None:
    mapped = 'qrels = "qrels.txt"\ngains = { 1 = 10 }'
    good = write_project(tmp_path / "a", {"alpha": "good"})
    good.write_text(good.read_text().replace('qrels = "qrels.txt"', mapped))
    assert cli("nightly", "--project", str(good), "--db", db_url).exit_code == 0
    bad = write_project(tmp_path / "b", {"alpha": "bad"})
    bad.write_text(bad.read_text().replace('qrels = "qrels.txt"', mapped))
    result = cli("nightly", "--project", str(bad), "--db", db_url, "--json")
    assert result.exit_code == 1, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    run = next(s for s in steps if s["step"] == "run")
    assert run["mean_nDCG(gains={1:10})@10"] == 0.0 and "mean_nDCG@10" not in run
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"] == {"nDCG(gains={1:10})@10": "regression"}
    with Store.open(db_url) as store:
        scores = store.evaluation_scores(run["run"])
    assert set(scores["metric"]) >= {"nDCG(gains={1:10})@10", "P@5"}
