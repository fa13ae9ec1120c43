"""``run`` scores the project's metrics wherever it is run from (``--project``), as ``nightly``
does, so a later ``compare`` of its run with a night's has them; and when a run lacks a metric
a comparison asks for, the refusal names the exact command that scores it. On both databases."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalplat.nightly.job import run_nightly
from evalplat.nightly.project import load_project
from evalplat.store import Store

from .project import write_project

Cli = Callable[..., Any]
METRICS = '"nDCG@10", "P@5", "ERR@10"'


def _night(db_url: str, folder: Path) -> None:
    run_nightly(load_project(write_project(folder, 30, METRICS)), db_url=db_url, log=lambda _: None)


def test_run_elsewhere_scores_the_project_metrics(db_url: str, tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "project"
    _night(db_url, folder)
    done = cli("run", "engine", "--testset", "topics", "--project", str(folder / "evalplat.toml"),
               "--db", db_url, "--json")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    with Store.open(db_url) as store:
        scored = set(store.evaluation_scores(json.loads(done.stdout)["id"])["metric"])
    assert {"nDCG@10", "P@5", "ERR@10"} <= scored
    shown = cli("compare", "engine@baseline", "engine@latest", "-m", "ERR@10", "--db", db_url)
    assert shown.exit_code == 0, shown.stderr
    assert "ERR@10" in shown.stdout


def test_a_missing_metric_is_refused_with_the_command_that_scores_it(
    db_url: str, tmp_path: Path, cli: Cli
) -> None:
    folder = tmp_path / "project"
    _night(db_url, folder)
    # run without the project: the default metrics only, no ERR@10
    done = cli("run", "engine", "--testset", "topics", "--db", db_url, "--json")
    assert done.exit_code == 0, done.stderr
    run_id = json.loads(done.stdout)["id"]
    refused = cli("compare", "engine@baseline", str(run_id), "-m", "ERR@10", "--db", db_url)
    assert refused.exit_code == 2
    line = refused.stderr.strip()
    assert f"the candidate run (run {run_id}) has no scores for ERR@10 on topics@1" in line
    command = re.search(r"`evalplat (rescore [^`]+)`", line)
    assert command is not None, line
    args = [part.strip("'") for part in command.group(1).split()]
    assert cli(*args, "--db", db_url).exit_code == 0
    shown = cli("compare", "engine@baseline", str(run_id), "-m", "ERR@10", "--db", db_url,
                "--json")  # fmt: skip
    assert shown.exit_code == 0, shown.stderr
    assert [m["metric"] for m in json.loads(shown.stdout)["metrics"]] == ["ERR@10"]
    with Store.open(db_url) as store:  # the rescore kept the run's other metrics
        assert "nDCG@10" in set(store.evaluation_scores(run_id)["metric"])
