"""Interleaving: team draft and balanced merging, click credit and the preference over sessions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.errors import InputError
from evalplat.events.interleaving import (
    combine,
    credit,
    credit_balanced,
    credit_balanced_many,
    credit_many,
    interleave,
    preference,
    rounds,
)
from evalplat.events.synthetic import interleaved_records

DOCS = st.lists(st.sampled_from([f"d{i}" for i in range(14)]), unique=True, max_size=10)
METHOD = st.sampled_from(["team_draft", "balanced"])


def test_team_draft_follows_the_coin_and_skips_what_the_other_team_gave() -> None:
    # coins 0: A picks first in every round; d2 is B's best but A already gave it in round 2
    merged = interleave(["d1", "d2", "d3"], ["d2", "d4", "d5"], coins=0, names=("p@1", "c@2"))
    assert merged.hit_ids == ("d1", "d2", "d3", "d4", "d5")
    assert merged.teams == ("p@1", "c@2", "p@1", "c@2", "c@2")
    flipped = interleave(["d1", "d2", "d3"], ["d2", "d4", "d5"], coins=0b1)
    assert flipped.hit_ids[:2] == ("d2", "d1") and flipped.teams[:2] == ("b", "a")


def test_balanced_walks_both_rankings_in_lockstep() -> None:
    merged = interleave(["d1", "d2", "d3", "d4"], ["d2", "d5", "d1"], method="balanced", coins=0)
    assert merged.hit_ids == ("d1", "d2", "d5", "d3", "d4")
    assert merged.ranks == ((1, 2, None, 3, 4), (3, 1, 2, None, None))
    ubi = merged.as_ubi()
    assert ubi["query_attributes"]["ranks"] == {"a": [1, 2, None, 3, 4], "b": [3, 1, 2, None, None]}
    assert "ranks" not in interleave(["d1"], ["d2"]).as_ubi()["query_attributes"]


def test_as_ubi_is_the_shape_the_importer_reads() -> None:
    merged = interleave(["x", "y"], ["y", "z"], seed=3, names=("prod@3", "cand@1"), depth=2)
    ubi = merged.as_ubi()
    assert ubi["query_response_hit_ids"] == list(merged.hit_ids) and len(merged.hit_ids) == 2
    assert ubi["query_attributes"] == {"interleaving": "team_draft", "teams": list(merged.teams),
                                       "rankers": ["prod@3", "cand@1"]}  # fmt: skip
    assert set(merged.teams) <= {"prod@3", "cand@1"}
    json.dumps(ubi)


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"method": "probabilistic"}, "unknown interleaving method"),
        ({"depth": 0}, "depth must be at least 1"),
        ({"names": ("x", "x")}, "two different"),
        ({"coins": -1}, "coins must be at least 0"),
    ],
)
def test_interleave_refuses_bad_options(kwargs: dict[str, object], problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        interleave(["d1"], ["d2"], **kwargs)  # type: ignore[arg-type]


def test_a_ranking_with_a_document_twice_is_refused() -> None:
    with pytest.raises(InputError, match="ranking b: doc id 'd2' appears twice"):
        interleave(["d1"], ["d2", "d2"])


def test_credit_counts_clicked_documents_per_team() -> None:
    teams = ["a", "b", "a", "b", None]
    assert credit(teams, [], a="a", b="b") == "tie"
    assert credit(teams, [0, 2, 1], a="a", b="b") == "a"
    assert credit(teams, [1, 1, 1, 0, 3], a="a", b="b") == "b"  # a position counts once
    assert credit(teams, [4, 9, -1], a="a", b="b") == "tie"  # no team, outside the list
    many = credit_many(
        np.array([[0, 1, 0, 1], [0, 1, -1, -1]], dtype=np.int8),
        np.array([[True, True, True, False], [False, True, False, False]]),
    )
    assert many.tolist() == [1, -1]


def test_balanced_credit_counts_clicks_in_both_top_k() -> None:
    # merged d1 d2 d5 d3 (A: d1 d2 d3 d4, B: d2 d5 d1); a click on d5 alone: k = 2 (its rank
    # in B), A's top 2 holds no click, B's top 2 one: B wins
    ranks_a, ranks_b = [1, 2, None, 3], [3, 1, 2, None]
    assert credit_balanced(ranks_a, ranks_b, [2]) == "b"
    # clicks on d1 and d3: the lowest is d3, k = 3; A's top 3 holds both, B's top 3 only d1
    assert credit_balanced(ranks_a, ranks_b, [0, 3]) == "a"
    assert credit_balanced(ranks_a, ranks_b, [1]) == "b"  # d2: rank 1 in B, 2 in A; k = 1
    assert credit_balanced(ranks_a, ranks_b, [0, 1]) == "tie"  # k = 1: d1 for A, d2 for B
    assert credit_balanced(ranks_a, ranks_b, []) == "tie"
    inf = np.inf
    many = credit_balanced_many(
        np.array([[1, 2, inf, 3]] * 2),
        np.array([[3, 1, 2, inf]] * 2),
        np.array([[False, False, True, False], [True, False, False, True]]),
    )
    assert many.tolist() == [-1, 1]


def test_preference_is_delta_ab_with_a_sign_test() -> None:
    result = preference(["a"] * 60 + ["b"] * 40 + ["tie"] * 100, seed=1)
    assert (result.wins_a, result.wins_b, result.ties, result.n) == (60, 40, 100, 200)
    assert result.delta == pytest.approx((60 + 50) / 200 - 0.5)  # positive: A preferred
    assert result.low < result.delta < result.high
    from scipy.stats import binomtest

    assert result.p_value == pytest.approx(binomtest(60, 100).pvalue)
    assert preference(["b"] * 30, draws=100).delta == -0.5
    assert preference(["tie"] * 5).p_value == 1.0
    assert preference(["a", "b"], seed=4) == preference(["a", "b"], seed=4)


@pytest.mark.parametrize(
    ("outcomes", "kwargs", "problem"),
    [
        ([], {}, "no interleaved outcomes"),
        (["a", "A"], {}, "an outcome is 'a', 'b' or 'tie', got 'A'"),
        (["a"], {"confidence": 1.0}, "confidence must be less than 1"),
        (["a"], {"draws": 0}, "draws must be at least 1"),
    ],
)
def test_preference_refuses_bad_input(outcomes: list[str], kwargs: dict[str, float],
                                      problem: str) -> None:  # fmt: skip
    with pytest.raises(InputError, match=problem):
        preference(outcomes, **kwargs)  # type: ignore[arg-type]


def test_combine_gives_a_session_the_ranker_that_won_more_searches() -> None:
    assert combine(["a", "b", "a", "tie"]) == "a"
    assert combine(["a", "b"]) == "tie" and combine([]) == "tie"


def test_interleaved_log_records_carry_the_attribution() -> None:
    rankings_a = {"wing": ["d1", "d2", "d3"], "flow": ["d4", "d5"]}
    rankings_b = {"wing": ["d3", "d1", "d6"], "flow": ["d5", "d7"]}
    grades = {"wing": {"d3": 3}, "flow": {"d5": 2}}
    records = list(interleaved_records(rankings_a, rankings_b, grades, names=("p@1", "c@1"),
                                       sessions=40, seed=2))  # fmt: skip
    searches = {r["query_id"]: r for r in records if "action_name" not in r}
    clicks = [r for r in records if r.get("action_name") == "click"]
    assert searches and clicks
    for search in searches.values():
        attributes = search["query_attributes"]
        assert attributes["interleaving"] == "team_draft"
        assert len(attributes["teams"]) == len(search["query_response_hit_ids"])
    for click in clicks:
        hits = searches[click["query_id"]]["query_response_hit_ids"]
        position = click["event_attributes"]["position"]["ordinal"]
        assert hits[position - 1] == click["event_attributes"]["object"]["object_id"]
    again = list(interleaved_records(rankings_a, rankings_b, grades, names=("p@1", "c@1"),
                                     sessions=40, seed=2))  # fmt: skip
    assert again == records


@settings(max_examples=150, deadline=None)
@given(
    a=DOCS, b=DOCS, method=METHOD, seed=st.integers(0, 2**32), depth=st.none() | st.integers(1, 12)
)
def test_merged_list_takes_each_document_once_from_a_ranking(
    a: list[str], b: list[str], method: str, seed: int, depth: int | None
) -> None:
    merged = interleave(a, b, method=method, seed=seed, depth=depth)
    union = set(a) | set(b)
    assert len(set(merged.hit_ids)) == len(merged.hit_ids)
    assert len(merged.hit_ids) == (len(union) if depth is None else min(depth, len(union)))
    for doc, team in zip(merged.hit_ids, merged.teams, strict=True):
        assert doc in (a if team == "a" else b)
    assert merged == interleave(a, b, method=method, seed=seed, depth=depth)  # same seed
    if method == "balanced":  # the merged list is a prefix-union of both rankings' tops
        for k in range(1, len(merged.hit_ids) + 1):
            ka = max((r for r in merged.ranks[0][:k] if r is not None), default=0)
            kb = max((r for r in merged.ranks[1][:k] if r is not None), default=0)
            assert set(merged.hit_ids[:k]) <= set(a[:ka]) | set(b[:kb])


@settings(max_examples=150, deadline=None)
@given(a=DOCS, b=DOCS, seed=st.integers(0, 2**32))
def test_team_draft_teams_stay_balanced_while_both_can_pick(
    a: list[str], b: list[str], seed: int
) -> None:
    merged = interleave(a, b, seed=seed)
    count = {"a": 0, "b": 0}
    for k, team in enumerate(merged.teams):
        before = set(merged.hit_ids[:k])
        if not (set(a) - before and set(b) - before):
            break  # one ranking has nothing new left: the other fills the list
        count[team] += 1
        assert abs(count["a"] - count["b"]) <= 1


@settings(max_examples=40, deadline=None)
@given(ranking=DOCS.filter(bool), method=METHOD, clicked=st.sets(st.integers(0, 9), max_size=3))
def test_an_a_a_test_credits_both_sides_alike(
    ranking: list[str], method: str, clicked: set[int]
) -> None:
    # identical rankings: every interleaving and its coin-flipped twin credit opposite sides
    wins = {"a": 0, "b": 0, "tie": 0}
    for coins in range(2 ** rounds(method, len(ranking))):
        merged = interleave(ranking, ranking, method=method, coins=coins)
        if method == "team_draft":
            wins[credit(merged.teams, clicked, a="a", b="b")] += 1
        else:
            wins[credit_balanced(*merged.ranks, clicked)] += 1
    assert wins["a"] == wins["b"]


@settings(max_examples=30, deadline=None)
@given(a=DOCS, b=DOCS, method=METHOD)
def test_the_coins_enumerate_every_seeded_interleaving(a: list[str], b: list[str],
                                                        method: str) -> None:  # fmt: skip
    every = {
        interleave(a, b, method=method, coins=c, depth=10) for c in range(2 ** rounds(method, 10))
    }
    seeded = {interleave(a, b, method=method, seed=s, depth=10) for s in range(64)}
    assert seeded <= every


def test_the_python_api_interleaves_lazily() -> None:
    import subprocess
    import sys

    import evalplat

    merged = evalplat.interleave(["d1", "d2"], ["d2", "d3"], seed=7, names=("prod@3", "cand@1"))
    assert merged.as_ubi()["query_attributes"]["teams"] == list(merged.teams)
    # ``import evalplat`` alone loads none of it
    code = "import sys, evalplat; print('evalplat.events.interleaving' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_documented_log_record_has_the_shape_as_ubi_writes() -> None:
    import re
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "online.md").read_text(encoding="utf-8")
    section = page.split("## Interleaved logs", 1)[1]
    (example,) = re.findall(r"^```json\n(.*?)^```$", section, flags=re.S | re.M)
    record = json.loads(example)
    shape = interleave(["d1"], ["d2"], seed=1, names=("prod@3", "cand@1")).as_ubi()
    assert set(shape) <= set(record)
    assert set(shape["query_attributes"]) <= set(record["query_attributes"])
    assert len(record["query_attributes"]["teams"]) == len(record["query_response_hit_ids"])
