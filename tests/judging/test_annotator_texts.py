"""What annotators are handed carries each document's title and the start of its text: the
`evalplat unjudged` CSV and the query-health *judge these* list, from the test set's documents
or, without them, from the fields the searcher read from the hit."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest

from evalplat.comparison.query_health import query_health
from evalplat.formats.testset_files import read_judgments
from evalplat.running.search_driver import score_and_finish
from evalplat.store import QueryOutcome, Store
from evalplat.testsets.content import TestSetContent

LONG = "a wing in a propeller slipstream, " * 12  # 408 characters


def _world(url: str, *, documents: bool, graded: list[tuple[str, str | None]] | None = None) -> int:
    """q1 graded on d0 (or on the ``graded`` (document, source) pairs); the run's top 3 are
    d0, d1, d2. With ``documents``, d1 is in the test set's corpus (d2 is not); every hit
    carries ``title``/``text`` fields of its own."""
    queries = pd.DataFrame(
        {"query_id": ["q1"], "text": ["wing flutter"], "weight": [float("nan")], "tags": [None]}
    )
    graded = graded or [("d0", None)]
    judgments = pd.DataFrame(
        {"query_id": ["q1"] * len(graded), "doc_id": [d for d, _ in graded],
         "grade": [2] * len(graded), "source": [s for _, s in graded]}
    )  # fmt: skip
    corpus = pd.DataFrame(
        {"doc_id": ["d1"], "title": ["Wing flutter tests"], "text": [LONG], "fields": ["{}"]}
    )
    content = TestSetContent(
        queries=queries, judgments=judgments, documents=corpus if documents else None
    )
    with Store.open(url) as store:
        store.import_test_set("wings", content)
        store.add_config("engine", "python", {"function": "json:loads"})
        run_id = store.create_run(
            store.config_version_id("engine"), store.test_set_version_id("wings"),
            depth=3, queries_total=1,
        )  # fmt: skip
        ids = ["d0", "d1", "d2"]
        fields = [{"title": f"hit {d}", "text": f"hit text of {d}"} for d in ids]
        hits = [(d, 3.0 - r) for r, d in enumerate(ids)]
        store.record_outcomes(run_id, [QueryOutcome("q1", "ok", hits, 5.0, fields=fields)])
        score_and_finish(store, run_id, content, ["nDCG@10"])
    return run_id


def test_unjudged_csv_has_the_corpus_title_and_text_start_else_the_hit_fields(
    db_url: str, cli: Callable[..., Any]
) -> None:
    run_id = _world(db_url, documents=True)
    result = cli("unjudged", str(run_id), "--k", "3", "--db", db_url)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == "query_id,query,doc_id,rank,title,text"
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["doc_id"], r["title"]) for r in rows] == [
        ("d1", "Wing flutter tests"),  # the test set's document wins over the hit
        ("d2", "hit d2"),  # not in the corpus: what the searcher read from the hit
    ]
    assert rows[0]["text"] == LONG[:200] and rows[1]["text"] == "hit text of d2"


def test_a_graded_unjudged_csv_imports_back_with_its_title_and_text_read_past(
    db_url: str, cli: Callable[..., Any], tmp_path: Any
) -> None:
    run_id = _world(db_url, documents=False)
    result = cli("unjudged", str(run_id), "--k", "3", "--db", db_url)
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["title"] for r in rows] == ["hit d1", "hit d2"]
    graded = tmp_path / "graded.csv"
    with graded.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, [*rows[0], "grade"])
        writer.writeheader()
        writer.writerows({**r, "grade": 1} for r in rows)
    frame = read_judgments(graded)
    assert frame[["doc_id", "grade"]].values.tolist() == [["d1", 1], ["d2", 1]]
    added = cli("testset", "import", "wings", "--qrels", str(graded), "--add", "--db", db_url)
    assert added.exit_code == 0, added.stderr
    assert "imported wings@2: 1 query, 3 judgments" in added.stdout


def test_judge_these_carries_titles_and_texts_into_the_list_and_its_csv(db_url: str) -> None:
    _world(db_url, documents=True)
    with Store.open(db_url) as store:
        inputs = store.query_health_inputs("engine", "wings", timedelta(days=1), k=3)
    health = query_health(inputs)
    judge = health.judge.set_index("doc_id")
    assert judge.loc["d1", "title"] == "Wing flutter tests"
    assert judge.loc["d2", "text"] == "hit text of d2"
    lines = health.annotation_csv("judge").splitlines()
    assert lines[0] == "query_id,query,doc_id,rank,title,text"
    assert lines[1].startswith("q1,wing flutter,d1,2,Wing flutter tests,")


@pytest.mark.parametrize(
    ("graded", "offered"),
    [
        ([("d0", None), ("d1", "llm:gpt")], ["d1", "d2"]),
        # several grades of a pair: d2 graded by a person and the judge is graded
        ([("d0", "ann"), ("d1", "llm:gpt"), ("d2", "ann"), ("d2", "llm:gpt")], ["d1"]),
    ],
    ids=["one grade a pair", "several grades a pair"],
)
def test_a_pair_only_the_judge_graded_is_still_offered_to_people(
    db_url: str, cli: Callable[..., Any], graded: list[tuple[str, str]], offered: list[str]
) -> None:
    """A judge's grade is kept beside people's and read only where a gate lets it in: the pair
    it alone graded is still one for people to grade, in ``unjudged``, ``rate task
    --from-run`` and the judge-these list alike (:mod:`evalplat.store.people_judged`)."""
    run_id = _world(db_url, documents=True, graded=graded)
    listed = cli("unjudged", str(run_id), "--k", "3", "--db", db_url)
    assert listed.exit_code == 0, listed.stderr
    assert [r["doc_id"] for r in csv.DictReader(io.StringIO(listed.stdout))] == offered
    task = cli("rate", "task", "t1", "--testset", "wings", "--from-run", str(run_id), "--k", "3",
               "--db", db_url)  # fmt: skip
    assert task.exit_code == 0, task.stderr
    assert f"task t1: {len(offered)} pair" in task.stdout, task.stdout
    with Store.open(db_url) as store:
        inputs = store.query_health_inputs("engine", "wings", timedelta(days=1), k=3)
    assert sorted(query_health(inputs).judge["doc_id"]) == offered
