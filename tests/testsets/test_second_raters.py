"""Second raters: grades of one pair from several sources are kept per source, resolved by the
version's grade rule, and their agreement is shown."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.store import Store
from evalplat.testsets.content import load_testset
from evalplat.testsets.raters import agreement_by_source, resolve_grades, weighted_kappa


def test_weighted_kappa_matches_a_worked_example() -> None:
    # 10 items, grades 0..2. Observed disagreements (0,1), (1,0), (2,1): weight 1/2 each, so
    # sum(w O) = 1.5 / 10 = 0.15. Marginals: rater a (0.3, 0.3, 0.4), rater b (0.3, 0.4, 0.3);
    # sum(w E) = 0.5 * (.12 + .09 + .09 + .16) + 1 * (.09 + .12) = 0.44; kappa = 1 - .15/.44.
    a = [0, 0, 1, 1, 2, 2, 2, 0, 1, 2]
    b = [0, 1, 1, 1, 2, 1, 2, 0, 0, 2]
    assert weighted_kappa(a, b) == pytest.approx(1 - 0.15 / 0.44)  # 29/44 = 0.659
    # two grade values: Cohen's original kappa, (0.75 - 0.5) / (1 - 0.5)
    assert weighted_kappa([0, 1, 1, 0], [0, 1, 0, 0]) == pytest.approx(0.5)
    assert weighted_kappa([2, 2], [2, 2]) is None and weighted_kappa([], []) is None


RATINGS = pd.DataFrame(
    [
        ("q1", "d1", 1, "alice"),
        ("q1", "d1", 2, "bob"),
        ("q1", "d2", 0, "alice"),
        ("q1", "d2", 3, "bob"),
        ("q1", "d2", 3, "carol"),
        ("q1", "d3", 2, "alice"),
    ],
    columns=["query_id", "doc_id", "grade", "source"],
)


@pytest.mark.parametrize(
    ("rule", "grades"),
    [
        ("mean", {"d1": 2, "d2": 2, "d3": 2}),
        ("max", {"d1": 2, "d2": 3, "d3": 2}),
        ("majority", {"d1": 2, "d2": 3, "d3": 2}),
        ("source:alice", {"d1": 1, "d2": 0, "d3": 2}),
        ("source:carol", {"d1": 2, "d2": 3, "d3": 2}),
    ],
)
def test_a_grade_rule_gives_one_grade_per_pair(rule: str, grades: dict[str, int]) -> None:
    resolved = resolve_grades(RATINGS, rule)
    assert dict(zip(resolved["doc_id"], resolved["grade"], strict=True)) == grades
    assert resolved.set_index("doc_id").loc["d3", "source"] == "alice"  # one rater: kept


def test_an_unknown_grade_rule_is_refused() -> None:
    with pytest.raises(InputError, match="grade rule must be"):
        resolve_grades(RATINGS, "median")


def test_agreement_is_computed_per_pair_of_sources() -> None:
    pairs = {(a.source_a, a.source_b): a for a in agreement_by_source(RATINGS)}
    assert set(pairs) == {("alice", "bob"), ("alice", "carol"), ("bob", "carol")}
    assert pairs[("alice", "bob")].pairs == 2 and pairs[("alice", "bob")].exact == 0.0
    assert pairs[("bob", "carol")].pairs == 1 and pairs[("bob", "carol")].exact == 1.0


def write_judgments(folder: Path, extra: str = "") -> Path:
    path = folder / "judgments.jsonl"
    lines = [
        json.dumps({"query_id": q, "doc_id": d, "grade": g, "source": s})
        for q, d, g, s in RATINGS.itertuples(index=False)
    ]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def test_second_raters_are_stored_resolved_and_shown(
    db_url: str, cli: Callable[..., Any], tmp_path: Path
) -> None:
    path = write_judgments(tmp_path)
    imported = cli("testset", "import", "raters", "--qrels", str(path), "--grades", "max",
                   "--json", "--db", db_url)  # fmt: skip
    assert imported.exit_code == 0, imported.stderr
    info = json.loads(imported.stdout)
    assert info["judgments"] == 3 and info["grade_rule"] == "max"
    with Store.open(db_url) as store:
        content = store.load_test_set("raters")
        assert len(content.judgments) == 6 and content.grade_rule == "max"
        assert dict(zip(content.qrels["doc_id"], content.qrels["grade"], strict=True)) == {
            "d1": 2, "d2": 3, "d3": 2,
        }  # fmt: skip
        assert content.content_hash() == store.test_set_version("raters").content_hash
    again = cli("testset", "import", "raters", "--qrels", str(path), "--grades", "max",
                "--db", db_url)  # fmt: skip
    assert again.exit_code == 0 and "unchanged" in again.stderr
    other_rule = cli("testset", "import", "raters", "--qrels", str(path), "--grades", "mean",
                     "--json", "--db", db_url)  # fmt: skip
    assert json.loads(other_rule.stdout)["version"] == 2  # the rule is part of the version
    shown = cli("testset", "show", "raters@1", "--db", db_url)
    assert "resolved by max" in shown.stdout
    assert "alice / bob: weighted kappa" in shown.stdout and "2 pairs" in shown.stdout
    data = json.loads(cli("testset", "show", "raters@1", "--json", "--db", db_url).stdout)
    assert {(a["source_a"], a["source_b"]) for a in data["agreement"]} == {
        ("alice", "bob"), ("alice", "carol"), ("bob", "carol"),
    }  # fmt: skip


def test_the_same_source_grading_a_pair_twice_is_still_a_duplicate(tmp_path: Path) -> None:
    extra = json.dumps({"query_id": "q1", "doc_id": "d1", "grade": 0, "source": "bob"}) + "\n"
    with pytest.raises(InputError, match=r"line 7: duplicate judgment .* from source 'bob'"):
        load_testset(write_judgments(tmp_path, extra))
