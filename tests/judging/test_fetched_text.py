"""Without stored documents, a judge reads the title and text the run's searcher returned.

An ``http`` config's ``hit_fields`` store fields of every hit with the run's results; a test set
imported without ``--docs`` then still gets its unjudged documents judged, from those fields.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from evalplat.running.search_driver import score_and_finish
from evalplat.store import QueryOutcome, Store
from evalplat.testsets.content import TestSetContent

from .chat_server import ChatServer


def _world(url: str) -> int:
    """Queries q1, q2; people graded d0 of each; the run's top 4 are d0..d3 with hit fields
    carrying GRADE=i, except q2-d3, whose hit carries no fields (nothing to judge it by)."""
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["first", "second"],
                            "weight": [float("nan")] * 2, "tags": [None] * 2})  # fmt: skip
    judgments = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["q1-d0", "q2-d0"],
                              "grade": [0, 0], "source": ["human", "human"]})  # fmt: skip
    content = TestSetContent(queries=queries, judgments=judgments)
    with Store.open(url) as store:
        store.import_test_set("nodocs", content)
        store.add_config("engine", "python", {"function": "json:loads"})
        run_id = store.create_run(
            store.config_version_id("engine"), store.test_set_version_id("nodocs"),
            depth=4, queries_total=2,
        )  # fmt: skip
        outcomes = []
        for q in ("q1", "q2"):
            ids = [f"{q}-d{i}" for i in range(4)]
            fields: list[dict[str, Any]] = [
                {"title": f"about {d}", "text": f"document {d} GRADE={i}"}
                for i, d in enumerate(ids)
            ]
            if q == "q2":
                fields[3] = {}
            outcomes.append(QueryOutcome(q, "ok", [(d, 4.0 - r) for r, d in enumerate(ids)],
                                         latency_ms=5.0, fields=fields))  # fmt: skip
        store.record_outcomes(run_id, outcomes)
        score_and_finish(store, run_id, content, ["nDCG@10"])
    return run_id


def test_unjudged_documents_are_judged_from_the_text_the_searcher_returned(
    db_url: str, tmp_path: Path, cli: Callable[..., Any], server: ChatServer
) -> None:
    run_id = _world(db_url)
    project = tmp_path / "evalplat.toml"
    project.write_text(f'[[judges]]\nname = "stub"\nurl = "{server.url}"\nmodel = "m"\n')
    result = cli(
        "judge", "stub", "-t", "nodocs", "--unjudged-of", str(run_id), "--json",
        "-p", str(project), "--db", db_url,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["pairs"], data["added"], data["no_text"]) == (6, 5, 1)
    with Store.open(db_url) as store:
        judgments = store.load_test_set("nodocs", documents=False).judgments
    model = judgments[judgments["source"] == "llm:stub"]
    grades = dict(zip(model["doc_id"], model["grade"], strict=True))
    # the server answers the GRADE=i marker of the text it was sent: the hit's own text
    assert grades == {"q1-d1": 1, "q1-d2": 2, "q1-d3": 3, "q2-d1": 1, "q2-d2": 2}
    assert sorted(server.documents_asked()) == sorted(grades)
