"""What changed between a baseline and a candidate: the pure diff, the store and the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from evalplat.comparison.changes import Changes, diff_configs, diff_test_sets
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

from .helpers import content, good_rankings, store_run


def test_a_changed_parameter_reads_old_to_new_with_json_values() -> None:
    changes = diff_configs({"tokenizer": "porter", "operator": "or"},
                           {"tokenizer": "porter", "operator": "and"})  # fmt: skip
    assert [str(c) for c in changes] == ['operator: "or" → "and"']
    assert changes[0].kind == "changed"


def test_added_removed_and_nested_keys_are_listed_by_dotted_key() -> None:
    before = {"depth": 100, "headers": {"Authorization": "Bearer ${TOKEN}", "X-A": "1"}}
    after = {"headers": {"Authorization": "Bearer ${TOKEN}", "X-B": "2"}, "boost": 1.5}
    changes = diff_configs(before, after)
    assert [(c.key, c.kind) for c in changes] == [
        ("boost", "added"),
        ("depth", "removed"),
        ("headers.X-A", "removed"),
        ("headers.X-B", "added"),
    ]
    assert str(changes[0]) == "boost: added 1.5"
    assert str(changes[1]) == "depth: removed (was 100)"


def test_a_number_and_its_string_are_different_values() -> None:
    (change,) = diff_configs({"k": 2}, {"k": "2"})
    assert str(change) == 'k: 2 → "2"'


def test_searcher_kind_and_label_are_part_of_the_diff() -> None:
    changes = diff_configs({}, {}, searchers=("builtin", "sql"), labels=("abc123", None))
    assert [str(c) for c in changes] == ['searcher: "builtin" → "sql"',
                                         'label: removed (was "abc123")']  # fmt: skip
    assert diff_configs({"a": [1, 2]}, {"a": [1, 2]}, searchers=("x", "x")) == ()


def _frames(queries: dict[str, str], judgments: list[tuple[str, str, int, str | None]]) -> Any:
    return (
        pd.DataFrame(list(queries.items()), columns=["query_id", "text"]),
        pd.DataFrame(judgments, columns=["query_id", "doc_id", "grade", "source"]),
    )


def test_test_set_diff_counts_queries_and_judgments_added_removed_and_changed() -> None:
    qa, ja = _frames(
        {"1": "a", "2": "b", "3": "c"},
        [("1", "d1", 1, None), ("1", "d2", 0, None), ("2", "d3", 2, None)],
    )
    qb, jb = _frames({"1": "a", "2": "b!", "4": "d", "5": "e"},
                     [("1", "d1", 2, None), ("2", "d3", 2, None), ("2", "d3", 1, "llm"),
                      ("4", "d9", 1, None)])  # fmt: skip
    diff = diff_test_sets("cranfield", (1, 2), qa, qb, ja, jb)
    assert (diff.queries_added, diff.queries_removed, diff.queries_text_changed) == (2, 1, 1)
    # ("2","d3","llm") is a second rater's grade: a new judgment, not a changed one
    assert (diff.judgments_added, diff.judgments_removed, diff.grades_changed) == (2, 1, 1)
    assert diff.lines() == [
        "test set cranfield v1 → v2: queries 2 added, 1 removed, 1 with new text; "
        "judgments 2 added, 1 removed, 1 with a new grade"
    ]


def test_changes_round_trip_through_their_dict() -> None:
    qa, ja = _frames({"1": "a"}, [("1", "d1", 1, None)])
    qb, jb = _frames({"1": "a"}, [("1", "d1", 1, None), ("1", "d2", 1, None)])
    changes = Changes(
        diff_configs({"operator": "or"}, {"operator": "and"}),
        diff_test_sets("t", (1, 2), qa, qb, ja, jb),
    )
    assert Changes.from_dict(json.loads(json.dumps(changes.to_dict()))) == changes
    assert changes.lines()[0] == 'operator: "or" → "and"'
    assert Changes().empty and not changes.empty


def test_stored_comparison_carries_the_parameter_diff(store: Store) -> None:
    store.import_test_set("small", content())
    rankings = good_rankings(content())
    first = store_run(store, "engine", "small", rankings, params={"operator": "or"})
    second = store_run(store, "engine", "small", rankings, params={"operator": "and"})
    result = store.compare_runs("engine@1", "engine@2")
    assert (result.baseline_run_id, result.candidate_run_id) == (first, second)
    assert result.changes is not None
    assert result.changes.lines() == ['operator: "or" → "and"']
    assert result.to_dict()["changes"]["config"][0]["after"] == '"and"'
    assert store.load_comparison(result.id).changes == result.changes  # type: ignore[arg-type]


def _grown(base: TestSetContent) -> TestSetContent:
    judgments = base.judgments.copy()
    extra = pd.DataFrame([("q00", "q00-x1", 1, None), ("q01", "q01-x1", 2, None)],
                         columns=["query_id", "doc_id", "grade", "source"])  # fmt: skip
    judgments = pd.concat([judgments, extra], ignore_index=True)
    judgments.loc[0, "grade"] = 0
    return TestSetContent(queries=base.queries, judgments=judgments)


def test_runs_on_different_test_set_versions_show_the_test_set_diff(store: Store) -> None:
    store.import_test_set("small", content())
    rankings = good_rankings(content())
    first = store_run(store, "engine", "small", rankings)
    store.import_test_set("small", _grown(content()))
    second = store_run(store, "engine", "small", rankings)  # on v2
    from evalplat.running.runner import rescore

    rescore(store, first, "small@2")
    result = store.compare_runs(first, second)
    assert result.changes is not None and result.changes.config == ()
    assert result.changes.same_config_version
    diff = result.changes.test_set
    assert diff is not None
    assert (diff.baseline_version, diff.candidate_version) == (1, 2)
    assert (diff.judgments_added, diff.grades_changed, diff.queries_added) == (2, 1, 0)


def test_compare_prints_what_changed(db_url: str, cli: Callable[..., Any]) -> None:
    with Store.open(db_url) as store:
        store.import_test_set("small", content())
        store_run(store, "engine", "small", good_rankings(content()), params={"operator": "or"})
        store_run(store, "engine", "small", good_rankings(content()), params={"operator": "and"})
    result = cli("compare", "engine@1", "engine@2", "--db", db_url)
    assert result.exit_code == 0, result.stderr
    assert 'changed   operator: "or" → "and"' in result.stdout
    data = json.loads(cli("compare", "engine@1", "engine@2", "--json", "--db", db_url).stdout)
    assert data["changes"]["config"] == [
        {"key": "operator", "kind": "changed", "before": '"or"', "after": '"and"'}
    ]
