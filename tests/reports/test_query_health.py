"""Query health, the monthly read: a planted project where one query fails for every config,
one flips from night to night and one never gets an answer; the figures by hand, the store's
read on both databases, ``evalplat queries`` and the page."""

from __future__ import annotations

import dataclasses
import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.comparison.query_health import HealthInputs, parse_since, query_health
from evalplat.errors import InputError
from evalplat.reports.health import health_html, health_page, render_health
from evalplat.store import Store

HOSTILE = "<script>alert(1)</script>"
NIGHTS = 6
ENGINE = """
import pathlib


def search(query, depth, mode="alpha", folder="", **params):
    night = int((pathlib.Path(folder) / "night.txt").read_text())
    topic = query.split()[-1]
    if topic == "never":
        return []
    if topic == "fail":
        return [("n-fail", 1.0)]
    if topic == "flip" and mode == "alpha":
        return [("d-flip", 1.0)] if night % 2 == 0 else [("n-flip", 1.0)]
    if mode == "beta":
        return [("u-" + topic, 2.0), ("d-" + topic, 1.0)]  # unjudged first, relevant second
    return [("d-" + topic, 1.0), ("n-" + topic, 0.5)]
"""
TOPICS = ["fail", "flip", "never", "t1", "t2", "t3"]


def plant(cli: Callable[..., Any], db_url: str, folder: Path) -> None:
    """Test set ``topics`` and configs ``alpha`` and ``beta``, run on ``NIGHTS`` nights."""
    (folder / "health_engine.py").write_text(ENGINE, encoding="utf-8")
    queries = [
        {"query_id": t, "text": f"{HOSTILE} {t}" if t == "t1" else f"topic {t}",
         "weight": 2.0 if t == "t2" else 1.0, "tags": ["head"] if t in ("t1", "t2") else []}
        for t in TOPICS
    ]  # fmt: skip
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8"
    )
    qrels = "".join(f"{t} 0 d-{t} 1\n{t} 0 n-{t} 0\n" for t in TOPICS)
    (folder / "qrels.txt").write_text(qrels, encoding="utf-8")
    files = ("--qrels", str(folder / "qrels.txt"), "--queries", str(folder / "queries.jsonl"))
    assert cli("testset", "import", "topics", *files, "--db", db_url).exit_code == 0
    for mode in ("alpha", "beta"):
        added = cli("config", "add", mode, "--searcher", "python", "--param",
                    "function=health_engine:search", "--param", f"path={folder}", "--param",
                    f"mode={mode}", "--param", f"folder={folder}", "--db", db_url)  # fmt: skip
        assert added.exit_code == 0, added.stderr
    for night in range(NIGHTS):
        (folder / "night.txt").write_text(str(night), encoding="utf-8")
        for mode in ("alpha", "beta"):
            ran = cli("run", mode, "--testset", "topics", "-m", "nDCG@10", "--db", db_url)
            assert ran.exit_code == 0, ran.stderr


@pytest.fixture
def planted(cli: Callable[..., Any], db_url: str, tmp_path: Path) -> str:
    plant(cli, db_url, tmp_path)
    return db_url


def test_planted_project_lists_the_gap_the_unstable_and_the_never_answered_query(
    cli: Callable[..., Any], planted: str, tmp_path: Path
) -> None:
    csvs = ("--judge-csv", str(tmp_path / "judge.csv"), "--fix-csv", str(tmp_path / "fix.csv"))
    result = cli("queries", "alpha", "--testset", "topics", "--json", "--db", planted, *csvs)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["metric"], data["configs"], len(data["runs"])) == (
        "nDCG@10",
        ["alpha", "beta"],
        NIGHTS,
    )
    assert set(data["gaps"]) == {"fail", "never"}  # no config scores above 0
    assert data["unstable"] == ["flip"]
    assert data["never_answered"] == ["never"]
    rows = {q["query_id"]: q for q in data["queries"]}
    flip = rows["flip"]
    assert (flip["flips"], flip["mean"], flip["last"]) == (NIGHTS - 1, 0.5, 0.0)
    # nights 0..5 alternate 1, 0: slope of the least-squares line is -3/35 per run
    assert flip["slope"] == pytest.approx(-3 / 35)
    assert rows["never"]["zero_result_rate"] == 1.0 and rows["t1"]["zero_result_rate"] == 0.0
    assert rows["t1"]["query"] == f"{HOSTILE} t1" and rows["t1"]["tags"] == ["head"]
    assert rows["t2"]["weight"] == 2.0
    assert rows["t1"]["unjudged_share"] == 0.0
    # beta finds flip's relevant document every night; alpha's last night did not
    assert data["fix"][0]["query_id"] == "flip" and data["fix"][0]["best_config"] == "beta"
    # 1/log2(3) = 0.6309 for beta (rank 2), weights sum to 7: the gap adds 0.6309 / 7
    assert (
        "beta scores 0.6309 here, alpha 0: closing the gap adds +0.0901" in data["fix"][0]["reason"]
    )
    # beta's unjudged documents sit at rank 1: t2 weighs twice, so it comes first
    assert [j["query_id"] for j in data["judge"][:1]] == ["t2"]
    assert (
        data["judge"][0]["doc_id"] == "u-t2" and data["judge"][0]["reason"] == "unjudged at beta #1"
    )
    judge_csv = (tmp_path / "judge.csv").read_text(encoding="utf-8").splitlines()
    # the planted test set has no documents and the engine reads no hit fields: empty texts
    assert judge_csv[0] == "query_id,query,doc_id,rank,title,text"
    assert judge_csv[1] == "t2,topic t2,u-t2,1,,"
    assert (tmp_path / "fix.csv").read_text(encoding="utf-8").splitlines()[
        1
    ] == "flip,topic flip,n-flip,1,,"


BAD_INPUT = [
    (("--since", "30x"), "--since: '30x' is not a window"),
    (("--metric", "P@5"), "--metric: P@5 was not scored in the window"),
    (("--metric", "nDCG(gains={1:-1})@10"), "must be finite and ≥ 0"),
    (("-t", "nope"), "no test set named 'nope'"),
]


def test_plain_output_csv_and_bad_input(cli: Callable[..., Any], planted: str) -> None:
    plain = cli("queries", "alpha", "--testset", "topics", "--db", planted)
    assert plain.exit_code == 0, plain.stderr
    assert "unstable: flip (topic flip)" in plain.stdout
    assert "never answered: never (topic never)" in plain.stdout
    table = cli("queries", "alpha", "-t", "topics", "--csv", "--db", planted)
    frame = pd.read_csv(io.StringIO(table.stdout))
    assert list(frame["query_id"]) == TOPICS and "zero_result_rate" in frame.columns
    for args, message in BAD_INPUT:
        result = cli("queries", "alpha", "-t", "topics", *args, "--db", planted)
        assert result.exit_code == 2, (args, result.stdout)
        [line] = result.stderr.splitlines()
        assert message in line


def test_the_page_and_the_site_index_show_the_monthly_read(
    cli: Callable[..., Any], planted: str, tmp_path: Path
) -> None:
    with Store.open(planted) as store:
        path = render_health(store, "alpha", "topics", tmp_path / "page.html")
    html = path.read_text(encoding="utf-8")
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt; t1" in html
    for section in ("gaps", "unstable", "never"):
        assert f'id="section-{section}"' in html
    never = html.split('id="section-never"')[1].split("</section>")[0]
    assert '<td class="id">never</td>' in never
    assert "data:text/csv;charset=utf-8,query_id%2Cquery%2Cdoc_id%2Crank" in html
    site = cli("report", "site", "--out", str(tmp_path / "site"), "--db", planted)
    assert site.exit_code == 0, site.stderr
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="health/alpha--topics.html">queries</a>' in index
    assert (tmp_path / "site" / "health" / "beta--topics.html").is_file()


def _inputs(values: list[list[float]], higher_is_better: bool = True) -> HealthInputs:
    runs = tuple(range(1, len(values[0]) + 1))
    scores = pd.DataFrame(
        [(r, f"q{i}", v) for i, row in enumerate(values) for r, v in zip(runs, row, strict=True)
         if not math.isnan(v)],
        columns=["run_id", "query_id", "value"],
    )  # fmt: skip
    ids = [f"q{i}" for i in range(len(values))]
    return HealthInputs(
        config="c", test_set="t", metric="nDCG@10", higher_is_better=higher_is_better, runs=runs,
        scores=scores,
        records=pd.DataFrame(columns=["run_id", "query_id", "results_count", "status"]),
        queries=pd.DataFrame({"query_id": ids, "text": ids, "weight": None, "tags": None}),
        peers=pd.DataFrame(columns=["config", "query_id", "value"]),
        top=pd.DataFrame(columns=["config", "query_id", "doc_id", "rank", "judged"]),
    )  # fmt: skip


def test_trend_and_flips_by_hand() -> None:
    health = query_health(_inputs([[0.2, 0.4, 0.6, 0.8], [1.0, 0.0, math.nan, 1.0]]))
    table = health.table.set_index("query_id")
    assert table.loc["q0", "slope"] == pytest.approx(0.2)
    assert table.loc["q0", "flips"] == 1  # 0.4 -> 0.6 crosses 0.5
    assert table.loc["q1", "flips"] == 1  # run 3 has no value: only 1 -> 2 is a pair
    assert table.loc["q1", "mean"] == pytest.approx(2 / 3) and table.loc["q1", "last"] == 1.0
    # x = 0, 1, 3 and y = 1, 0, 1: slope = (3*3 - 4*2) / (3*10 - 16) = 1/14
    assert table.loc["q1", "slope"] == pytest.approx(1 / 14)
    assert health.weakest == ("q0", "q1") and health.strongest == ("q1", "q0")


def test_lower_is_better_reverses_weakest_and_good() -> None:
    health = query_health(_inputs([[10.0, 20.0], [1.0, 1.0]], higher_is_better=False), good=5)
    assert health.weakest[0] == "q0"
    assert health.table.set_index("query_id").loc["q0", "flips"] == 0  # both above 5: bad


@pytest.mark.parametrize("text", ["30", "d", "0d", "3y", "-1d", "1.5d"])
def test_a_window_needs_a_number_and_a_known_unit(text: str) -> None:
    with pytest.raises(InputError, match="--since"):
        parse_since(text)
    assert parse_since("2w").days == 14 and parse_since("36h").total_seconds() == 36 * 3600


def test_a_page_built_from_plain_data_is_deterministic() -> None:
    health = query_health(_inputs([[0.2, 0.4], [1.0, 0.0]]))
    assert health_html(health_page(health)) == health_html(health_page(health))


def test_the_configs_top_k_is_read_once_per_store_until_a_run_is_pruned(planted: str) -> None:
    """Every config's read on a test set shares the top k of all configs' latest runs: the
    store keeps the last one, keyed by those runs, and reads again when one is pruned."""
    from datetime import timedelta

    from sqlalchemy import update

    from evalplat.db.evaluations import Baseline
    from evalplat.db.models import Run
    from evalplat.store import Store
    from evalplat.store.base import utcnow

    since = timedelta(days=30)
    with Store.open(planted) as fresh:
        alone = fresh.query_health_inputs("beta", "topics", since).top
    with Store.open(planted) as store:
        alpha = store.query_health_inputs("alpha", "topics", since)
        beta = store.query_health_inputs("beta", "topics", since)
        assert beta.top is alpha.top  # kept, not read again
        assert beta.top.equals(alone)
        assert set(beta.top["config"]) == {"alpha", "beta"}
        with store.session() as session:  # age every run so retention prunes the latest ones
            session.execute(update(Run).values(finished_at=utcnow() - timedelta(days=9)))
            assert session.query(Baseline).count() == 0
        assert store.prune_results(7)
        after = store.query_health_inputs("beta", "topics", since).top
    assert after is not alpha.top and after.empty


def test_query_ids_are_listed_in_natural_order() -> None:
    """``q2`` before ``q10``: the table, and ties in the weakest and unstable lists, order ids
    as numbers within text, not as text (the store hands the queries over in text order)."""
    inputs = _inputs([[0.0, 1.0, 0.0]] * 12)
    text_order = inputs.queries.sort_values("query_id").reset_index(drop=True)
    health = query_health(dataclasses.replace(inputs, queries=text_order), limit=12, min_flips=1)
    natural = [f"q{i}" for i in range(12)]
    assert health.table["query_id"].tolist() == natural
    assert list(health.weakest) == natural and list(health.unstable) == natural
