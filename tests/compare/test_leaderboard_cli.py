"""``evalplat leaderboard`` end to end on both databases: choosing the runs three ways, the
baseline, the outputs, and the refusals (one line, exit 2, nothing written)."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.store import Store

from .helpers import content, good_rankings, store_run

HOSTILE = "<script>alert(1)</script>"


def _worse(rankings: dict[str, list[str]], every: int) -> dict[str, list[str]]:
    """Every ``every``-th query loses its relevant documents."""
    return {q: [d for d in docs if "-n" in d] if i % every == 0 else docs
            for i, (q, docs) in enumerate(sorted(rankings.items()))}  # fmt: skip


def _board(db_url: str) -> dict[str, int]:
    """Four configs on test set ``small``: ``bm25-prod`` (good), ``bm25-same`` (the same
    rankings), ``bm25-worse`` (half the queries lose everything), ``dense`` (labelled)."""
    with Store.open(db_url) as store:
        store.import_test_set("small", content())
        good = good_rankings(content())
        ids = {
            "bm25-prod": store_run(store, "bm25-prod", "small", good),
            "bm25-same": store_run(store, "bm25-same", "small", good, label="sprint-7"),
            "bm25-worse": store_run(store, "bm25-worse", "small", _worse(good, 2),
                                    label="sprint-7"),
            "dense": store_run(store, "dense", "small", _worse(good, 8), label=HOSTILE),
        }  # fmt: skip
    return ids


def test_named_runs_are_ranked_with_letters_and_verdicts_in_json_csv_and_a_page(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    ids = _board(db_url)
    out, page = tmp_path / "board.csv", tmp_path / "pages" / "board.html"
    result = cli("leaderboard", "bm25-prod@latest", str(ids["bm25-same"]), "bm25-worse@1",
                 f"#{ids['dense']}", "-m", "nDCG@10", "-m", "P@5", "--csv", str(out),
                 "--report", str(page), "--json", "--db", db_url)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["test_set"] == "small@1" and data["queries"] == 40
    assert data["baseline"] == "bm25-prod@1"
    assert [r["id"] for r in data["runs"]] == [ids[n] for n in ("bm25-prod", "bm25-same",
                                                               "bm25-worse", "dense")]  # fmt: skip
    assert [m["metric"] for m in data["metrics"]] == ["nDCG@10", "P@5"]
    runs = {r["run"]: r for r in data["metrics"][0]["runs"]}
    assert runs["bm25-worse@1 (sprint-7)"]["verdict"] == "regression"
    assert runs["bm25-worse@1 (sprint-7)"]["rank"] == 4
    assert runs["bm25-same@1 (sprint-7)"]["verdict"] == "unchanged"
    assert runs["bm25-prod@1"]["verdict"] is None
    assert runs["bm25-prod@1"]["letters"] == runs["bm25-same@1 (sprint-7)"]["letters"]
    assert not set(runs["bm25-prod@1"]["letters"]) & set(runs["bm25-worse@1 (sprint-7)"]["letters"])
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 8 and rows[0]["metric"] == "nDCG@10" and rows[0]["rank"] == "1"
    html = page.read_text(encoding="utf-8")
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_config_glob_label_and_the_pinned_baseline_choose_the_runs(
    db_url: str, cli: Callable[..., Any]
) -> None:
    ids = _board(db_url)
    with Store.open(db_url) as store:
        store.set_baseline("bm25-same", str(ids["bm25-same"]))
    glob = cli("leaderboard", "--config-glob", "bm25-*", "-m", "nDCG@10", "--json", "--db", db_url)
    assert glob.exit_code == 0, glob.stderr
    data = json.loads(glob.stdout)
    assert [r["id"] for r in data["runs"]] == [ids["bm25-prod"], ids["bm25-same"],
                                              ids["bm25-worse"]]  # fmt: skip
    assert data["baseline"] == "bm25-same@1 (sprint-7)"  # the pinned one: production
    label = cli("leaderboard", "--label", "sprint-7", "--testset", "small", "-m", "nDCG@10",
                "--baseline", "bm25-prod@latest", "--db", db_url)  # fmt: skip
    assert label.exit_code == 0, label.stderr
    table = label.stdout
    assert "bm25-prod@1" in table and "bm25-same@1 (sprint-7)" in table and "dense" not in table
    assert "baseline" in table and "▼ worse" in table and "Tukey HSD" in table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("bm25-prod@latest",), "needs two runs or more"),
        (("bm25-prod@latest", "999"), "no run with id 999"),
        (("bm25-prod@latest", "nope@latest"), "no config named 'nope'"),
        (("bm25-prod@latest", "bm25-prod@latest"), "named twice"),
        (("bm25-prod@latest", "--config-glob", "x*"), "name the runs one way"),
        (("--config-glob", "zzz*"), "no config matches 'zzz*'"),
        (("--label", "nothing"), "carries the label 'nothing'"),
        (("bm25-prod@latest", "bm25-same@latest", "-m", "NumRet"), "ranks means"),
        (("bm25-prod@latest", "bm25-same@latest", "--testset", "small"), "--testset narrows"),
        (("bm25-prod@latest", "other@latest"), "against small@1"),
    ],
)
def test_bad_choices_are_refused_in_one_line(
    db_url: str, cli: Callable[..., Any], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    _board(db_url)
    with Store.open(db_url) as store:
        store.import_test_set("other-set", content(queries=12))
        store_run(store, "other", "other-set", good_rankings(content(queries=12)))
        before = len(store.list_runs())
    out = tmp_path / "board.csv"
    result = cli("leaderboard", *args, "--csv", str(out), "--db", db_url)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not out.exists()
    with Store.open(db_url) as store:
        assert len(store.list_runs()) == before


def test_a_partial_run_is_refused_as_compare_refuses_it(
    db_url: str, cli: Callable[..., Any]
) -> None:
    _board(db_url)
    with Store.open(db_url) as store:
        partial = store_run(store, "flaky", "small", good_rankings(content()), status="partial")
    result = cli("leaderboard", "bm25-prod@latest", str(partial), "--db", db_url)
    assert result.exit_code == 3 and "partial" in result.stderr


def test_the_report_site_ranks_every_configs_latest_run_per_test_set(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    ids = _board(db_url)
    with Store.open(db_url) as store:  # a newer run of one config replaces its older one
        ids["bm25-prod"] = store_run(store, "bm25-prod", "small", good_rankings(content()))
        store.import_test_set("lonely", content(queries=12))
        store_run(store, "bm25-prod", "lonely", good_rankings(content(queries=12)))
    result = cli("report", "site", "--out", str(tmp_path / "site"), "--db", db_url)
    assert result.exit_code == 0, result.stderr
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert '<a href="leaderboard/small.html">small</a>' in index
    assert "leaderboard/lonely.html" not in index  # one config only: nothing to rank
    page = (tmp_path / "site" / "leaderboard" / "small.html").read_text(encoding="utf-8")
    assert page.count('class="leaderboard"') == 3  # nDCG@10, P@5, AP: compare's gated metrics
    assert f"#{ids['bm25-prod']}" in page and f'href="../runs/run-{ids["bm25-worse"]}.html"' in page
    assert HOSTILE not in page


def test_an_online_run_is_refused_in_one_line(db_url: str, cli: Callable[..., Any]) -> None:
    from sqlalchemy import update

    from evalplat.db.models import Run

    ids = _board(db_url)
    with Store.open(db_url) as store, store.session() as session:  # as events import marks it
        session.execute(update(Run).where(Run.id == ids["dense"]).values(trigger="online"))
    result = cli("leaderboard", "bm25-prod@latest", str(ids["dense"]), "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: run {ids['dense']} is an online run, scored over "
                                     "sessions: a leaderboard ranks runs per query of a judged "
                                     "test set")  # fmt: skip
