"""The PostgreSQL full-text example of docs/searchers.md and the README, run as written against
a real PostgreSQL on the bundled Cranfield set: the OR form answers (nearly) every question, the
AND form it replaced answers few."""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from evalplat import evaluate
from evalplat.resources import bundled_testset
from evalplat.searchers import SearchContext, get_kind
from evalplat.testsets.content import load_testset

REPO_ROOT = Path(__file__).resolve().parents[2]
AND_FORM = (
    "SELECT id, ts_rank_cd(tsv, q) AS score FROM docs, websearch_to_tsquery('english', :query) "
    "AS q WHERE tsv @@ q ORDER BY score DESC, id LIMIT :depth"
)


def documented_query() -> str:
    page = (REPO_ROOT / "docs" / "searchers.md").read_text(encoding="utf-8")
    for block in re.findall(r"^```toml\n(.*?)^```$", page, flags=re.S | re.M):
        for config in tomllib.loads(block).get("configs", []):
            if config["name"] == "pg-fts":
                return str(config["params"]["query"])
    raise AssertionError("docs/searchers.md has no pg-fts example")


def readme_query() -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"^evalplat config add pg-fts .*?[^\\]\n", readme, flags=re.S | re.M)
    assert command is not None
    words = shlex.split(command.group(0).replace("\\\n", " "))
    return next(w[len("query=") :] for w in words if w.startswith("query="))


def documented_ddl() -> str:
    page = (REPO_ROOT / "docs" / "searchers.md").read_text(encoding="utf-8")
    section = page.split("## PostgreSQL full-text search", 1)[1]
    (ddl,) = re.findall(r"^```sql\n(.*?)^```$", section, flags=re.S | re.M)[:1]
    return ddl


def test_the_readme_and_the_docs_show_the_same_statement() -> None:
    assert " ".join(readme_query().split()) == " ".join(documented_query().split())


@pytest.fixture
def cranfield_docs_table(postgres_server: Any) -> Iterator[str]:
    """The URL of a database of its own holding Cranfield as ``docs`` (id, title, body), set
    up with the documented DDL."""
    url = postgres_server.create_database()
    folder = bundled_testset("cranfield")
    content = load_testset(folder / "qrels.txt", docs=folder / "docs.jsonl")
    assert content.documents is not None
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE docs (id text PRIMARY KEY, title text, body text)"))
        connection.execute(
            text("INSERT INTO docs VALUES (:id, :title, :body)"),
            [
                {"id": d, "title": t, "body": b}
                for d, t, b in content.documents[["doc_id", "title", "text"]].itertuples(
                    index=False
                )
            ],
        )
        for statement in filter(str.strip, documented_ddl().split(";")):
            connection.execute(text(statement))
    engine.dispose()
    yield url
    postgres_server.drop_database(url)


def _answered(url: str, query: str) -> tuple[int, dict[str, list[tuple[str, float]]]]:
    folder = bundled_testset("cranfield")
    queries = load_testset(folder / "qrels.txt", queries=folder / "queries.tsv").queries
    hits: dict[str, list[tuple[str, float]]] = {}
    searcher = get_kind("sql").create({"url": url, "query": query}, SearchContext())
    with searcher:
        searcher.check()
        for query_id, question in queries[["query_id", "text"]].itertuples(index=False):
            hits[str(query_id)] = [(d, float(s)) for d, s in searcher.search(
                str(query_id), str(question), 100)]  # fmt: skip
    return len(queries), hits


@pytest.mark.postgres
def test_documented_or_statement_answers_nearly_every_cranfield_question(
    cranfield_docs_table: str,
) -> None:
    total, hits = _answered(cranfield_docs_table, documented_query())
    answered = sum(1 for found in hits.values() if found)
    assert answered >= 0.95 * total, f"{answered} of {total} questions have results"
    folder = bundled_testset("cranfield")
    qrels = load_testset(folder / "qrels.txt").judgments
    import pandas as pd

    run = pd.DataFrame(
        [(q, d, s) for q, found in hits.items() for d, s in found],
        columns=["query_id", "doc_id", "score"],
    )
    ndcg = evaluate(qrels, run, ["nDCG@10"]).means["nDCG@10"]
    assert ndcg > 0.2  # a real ranking, not just any document

    _, and_hits = _answered(cranfield_docs_table, AND_FORM)
    and_answered = sum(1 for found in and_hits.values() if found)
    assert and_answered < 0.25 * total  # why the docs use OR: AND leaves most questions empty
