"""Rescoring keeps every (run, test set version) score set; comparisons pair scores on one
version; ``rescore --all`` rescores a test set's runs in bulk."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.running import runner
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

from .helpers import METRICS, content, good_rankings, store_run


def grown(base: TestSetContent) -> TestSetContent:
    """The same queries with one more relevant document judged per query (``qNN-u0``)."""
    extra = pd.DataFrame(
        [(q, f"{q}-u0", 2, None) for q in base.queries["query_id"]],
        columns=["query_id", "doc_id", "grade", "source"],
    )
    judgments = pd.concat([base.judgments, extra], ignore_index=True)
    judgments["grade"] = judgments["grade"].astype("int64")
    return TestSetContent(queries=base.queries, judgments=judgments)


def with_unjudged(rankings: dict[str, list[str]]) -> dict[str, list[str]]:
    return {q: [f"{q}-u0", *docs] for q, docs in rankings.items()}


@pytest.fixture
def two_versions(store: Store) -> tuple[Store, int, int]:
    store.import_test_set("small", content())
    first = store_run(store, "engine", "small", with_unjudged(good_rankings(content())))
    store.import_test_set("small", grown(content()))
    second = store_run(store, "engine", "small", with_unjudged(good_rankings(content())), label="b")
    return store, first, second


def test_rescoring_adds_a_score_set_and_keeps_the_old_one(
    two_versions: tuple[Store, int, int],
) -> None:
    store, first, _ = two_versions
    before = store.run_info(first).means["P@5"]
    info = runner.rescore(store, first, "small@2", metrics=METRICS)
    assert info.scored_against_version == 2 and info.means["P@5"] > before
    assert store.scored_versions(first) == [1, 2]
    point = next(p for p in store.history("engine") if p.run_id == first)
    assert point.judgment_version == 1 and point.means["P@5"] == before


def test_compare_pairs_the_scores_of_one_version(two_versions: tuple[Store, int, int]) -> None:
    store, first, second = two_versions
    with pytest.raises(InputError, match="rescore one on the other's version"):
        store.compare_runs(first, second)
    runner.rescore(store, first, "small@2", metrics=METRICS)
    runner.rescore(
        store, first, "small@1", metrics=METRICS
    )  # the newest scores are v1 again; v2 is kept
    result = store.compare_runs(first, second)
    assert result.test_set == "small@2" and result.verdict == "unchanged"


def test_a_run_whose_results_were_pruned_is_not_rescored_to_zero(
    two_versions: tuple[Store, int, int],
) -> None:
    from datetime import timedelta

    from evalplat.store.base import utcnow

    store, first, second = two_versions
    store.set_baseline("engine", second)
    assert first in store.prune_results(0, now=utcnow() + timedelta(days=1))
    with pytest.raises(InputError, match="pruned"):
        runner.rescore(store, first, "small@2", metrics=METRICS)


def test_rescore_all_rescores_a_test_set_in_bulk(
    two_versions: tuple[Store, int, int], db_url: str, cli: Callable[..., Any]
) -> None:
    _, first, second = two_versions
    result = cli("rescore", "--all", "--testset", "small@2", "--json", "--db", db_url)
    assert result.exit_code == 0, result.stderr
    outcomes = {o["run_id"]: o["outcome"] for o in json.loads(result.stdout)}
    assert outcomes == {first: "rescored", second: "kept"}
    again = cli("rescore", "--all", "--testset", "small@2", "--db", db_url)
    assert again.exit_code == 0 and "0 rescored, 2 kept, 0 skipped" in again.stderr
    bad = cli("rescore", str(first), "--all", "--testset", "small@2", "--db", db_url)
    assert bad.exit_code == 2 and "--all takes no run" in bad.stderr


def test_runs_list_and_show_name_the_judgments_of_the_figure_they_print(
    two_versions: tuple[Store, int, int], db_url: str, cli: Callable[..., Any]
) -> None:
    """A run searched on small@1 and rescored on small@2 prints v2's figure: it says so."""
    store, first, second = two_versions
    rescored = runner.rescore(store, first, "small@2", metrics=METRICS).means["nDCG@10"]
    rows = {
        line.split("│")[1].strip(): line
        for line in cli("runs", "list", "--db", db_url).stdout.splitlines()
        if line.count("│") > 2
    }
    assert f"{rescored:.4f} on v2" in rows[str(first)] and "small@1" in rows[str(first)]
    assert " on v" not in rows[str(second)]
    shown = cli("runs", "show", str(first), "--db", db_url).stdout.splitlines()
    assert [line.split() for line in shown if line.startswith("scored on")] == [
        ["scored", "on", "small@2,", "people's", "grades", "(rescored)"]
    ]
    assert f"nDCG@10            {rescored:.4f}" in shown
