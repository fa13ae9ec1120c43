"""A week of nightly runs on the bundled Cranfield set in which night 3 brings new judgments.

Annotators judge what ``evalplat unjudged`` exported; the next night imports the grown qrels as a
new test set version. No night may stop on it (exit 2): the baseline and the previous night are
scored on the new version from their stored results, and history marks the change.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.resources import bundled_testset

CRANFIELD = bundled_testset("cranfield")


def project_file(folder: Path, qrels: Path, operator: str) -> Path:
    path = folder / "evalplat.toml"
    path.write_text(
        f"""
[[testsets]]
name = "cranfield"
qrels = "{qrels}"
queries = "{CRANFIELD / "queries.tsv"}"
docs = "{CRANFIELD / "docs.jsonl"}"

[[configs]]
name = "docs-bm25"
searcher = "builtin"
testsets = ["cranfield"]
[configs.params]
tokenizer = "porter"
operator = "{operator}"

[metrics]
names = ["nDCG@10", "P@10", "Bpref", "Judged@10"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01

[reports]
dir = "site"
""",
        encoding="utf-8",
    )
    return path


def test_a_week_with_new_judgments_on_night_three_never_stops(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text((CRANFIELD / "qrels.txt").read_text(encoding="utf-8"), encoding="utf-8")

    def night(operator: str) -> tuple[int, list[dict[str, Any]]]:
        path = project_file(tmp_path, qrels, operator)
        result = cli("nightly", "--project", str(path), "--db", db_url, "--json")
        steps = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        assert result.exit_code in (0, 1), (result.exit_code, result.stderr, steps)
        return result.exit_code, steps

    codes = [night("or")[0], night("or")[0]]
    # the annotators' week: every unjudged document of the latest top 10, judged relevant or not
    pool = cli("unjudged", "docs-bm25@latest", "--k", "10", "--db", db_url)
    rows = list(csv.DictReader(io.StringIO(pool.stdout)))
    assert len(rows) > 100
    with qrels.open("a", encoding="utf-8") as handle:
        for i, row in enumerate(rows):
            handle.write(f"{row['query_id']} 0 {row['doc_id']} {1 if i % 3 == 0 else 0}\n")

    code, steps = night("or")  # night 3: new judgments
    codes.append(code)
    imported = next(s for s in steps if s["step"] == "testset")
    assert imported["version"] == 2 and imported["created"] is True
    rescored = {s["run"] for s in steps if s["step"] == "rescore"}
    assert len(rescored) == 2  # the baseline (night 1) and the previous night (night 2)
    compare = next(s for s in steps if s["step"] == "compare")
    assert compare["verdicts"] == {"nDCG@10": "unchanged"}  # same results, same judgments

    codes += [night("and")[0], night("or")[0]]
    assert all(code in (0, 1) for code in codes)

    history = cli("history", "docs-bm25", "--metric", "Bpref", "--json", "--db", db_url)
    points = json.loads(history.stdout)
    assert [p["judgment_version"] for p in points] == [1, 1, 2, 2, 2]
    # nights 1 and 2 keep the scores they had on version 1, not the rescored ones
    assert points[0]["means"]["Bpref"] == points[1]["means"]["Bpref"]
    assert points[2]["means"]["Bpref"] != points[1]["means"]["Bpref"]
    table = cli("history", "docs-bm25", "--db", db_url)
    assert "◆" in table.stdout and "new judgments" in table.stdout
    page = next((tmp_path / "site" / "history").glob("*.html")).read_text(encoding="utf-8")
    assert 'class="c-judgments"' in page and "◆ new judgments" in page


@pytest.mark.usefixtures("no_report_site")  # reads no page
def test_new_judgments_after_the_previous_nights_results_were_pruned(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    from datetime import timedelta

    from evalplat.store import Store
    from evalplat.store.base import utcnow

    qrels = tmp_path / "qrels.txt"
    qrels.write_text((CRANFIELD / "qrels.txt").read_text(encoding="utf-8"), encoding="utf-8")

    def night() -> tuple[int, list[dict[str, Any]]]:
        path = project_file(tmp_path, qrels, "or")
        result = cli("nightly", "--project", str(path), "--db", db_url, "--json")
        steps = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        return result.exit_code, steps

    assert night()[0] == 0 and night()[0] == 0
    with Store.open(db_url) as store:  # retention prunes night 2 (the baseline keeps its own)
        assert len(store.prune_results(0, now=utcnow() + timedelta(days=1))) == 1
    with qrels.open("a", encoding="utf-8") as handle:
        handle.write("1 0 not-in-the-corpus 1\n")
    code, steps = night()
    assert code == 0, steps
    skipped = [s for s in steps if s["step"] == "rescore" and "skipped" in s]
    assert len(skipped) == 1 and "pruned" in skipped[0]["skipped"]
    assert next(s for s in steps if s["step"] == "compare")["verdicts"] == {"nDCG@10": "unchanged"}
