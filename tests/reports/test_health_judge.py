"""The judge list is ranked once for every config's page of a test set: the list a page gets from
the site's ``JudgeLists`` is the one it would compute alone, and a change of the configs' top k,
of the queries' weights or text, or of the limit is computed again."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from evalplat.comparison import health_judge
from evalplat.comparison.health_judge import JudgeLists, judge_list


def shared_top(configs: int = 4, queries: int = 30, k: int = 10, seed: int = 0) -> pd.DataFrame:
    """Every config's latest top ``k``: documents drawn from a small pool per query, so that
    configs show some of the same unjudged pairs at different ranks."""
    rng = np.random.default_rng(seed)
    rows = []
    for config in range(configs):
        for query in range(queries):
            docs = rng.choice(25, size=k, replace=False)
            for rank, doc in enumerate(docs, start=1):
                rows.append(
                    {
                        "config": f"c{config}",
                        "query_id": f"q{query}",
                        "doc_id": f"d{doc}",
                        "rank": rank,
                        "judged": bool(doc % 3 == 0),
                        "title": f"title {doc}",
                        "text": f"text {doc}",
                    }
                )
    return pd.DataFrame(rows)


def queries(count: int = 30, heavy: int = 2) -> tuple[pd.DataFrame, np.ndarray]:
    ids = [f"q{i}" for i in range(count)]
    weights = np.where(np.arange(count) % heavy == 0, 2.0, 1.0)
    return pd.DataFrame({"query_id": ids, "query": [f"about {i}" for i in ids]}), weights


def test_every_config_page_gets_the_list_it_would_compute_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    top = shared_top()
    table, weights = queries()
    lists = JudgeLists()
    alone = judge_list(top, table, weights, 50)
    calls = []

    def counted(*args: object) -> pd.DataFrame:
        calls.append(args)
        return judge_list(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(health_judge, "judge_list", counted)
    assert len(alone) == 50 and alone["configs"].max() > 1  # pairs shown by several configs
    for _ in range(4):  # one page per config
        got = lists.get(top, table, weights, 50)
        assert_frame_equal(got, alone)
        got.loc[0, "reason"] = "changed by a page"  # a page's change stays its own
    assert_frame_equal(lists.get(top, table, weights, 50), alone)
    assert len(calls) == 1  # ranked once for the five pages


def test_a_list_made_of_something_else_is_computed_again() -> None:
    top = shared_top()
    table, weights = queries()
    lists = JudgeLists()
    first = lists.get(top, table, weights, 40)
    other_top = shared_top(seed=1)
    heavier = np.where(np.arange(len(weights)) % 3 == 0, 5.0, 1.0)
    retitled = table.assign(query=[f"now {q}" for q in table["query_id"]])
    extra = pd.concat([table, pd.DataFrame({"query_id": ["q-extra"], "query": [""]})])
    cases = [
        (other_top, table, weights, 40),  # another night's top k
        (top.copy(), table, weights, 40),  # an equal frame read again: computed, not trusted
        (top, table, heavier, 40),
        (top, retitled, weights, 40),
        (top, extra.reset_index(drop=True), np.append(weights, 1.0), 40),  # the sum differs
        (top, table, weights, 10),
    ]
    for case in cases:
        assert_frame_equal(lists.get(*case), judge_list(*case))
    assert not lists.get(other_top, table, weights, 40).equals(first)
    assert not lists.get(top, table, heavier, 40).equals(first)
    assert not lists.get(top, retitled, weights, 40)["query"].equals(first["query"])
