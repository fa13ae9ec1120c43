"""The pure rules of a rating task: each rater's order, who gets which pair, what a closed
task adds to the test set."""

from __future__ import annotations

import pandas as pd
import pytest

from evalplat.errors import InputError
from evalplat.rating.tasks import (
    RaterAgreement,
    agreement,
    assigned_pairs,
    check_rater,
    disagreements,
    judgments_of,
    parse_scale,
    rater_order,
    scale_of,
)
from evalplat.store.rating_views import GradeRow, PairRow
from evalplat.testsets.raters import agreement_by_source, resolve_grades


def grades(*rows: tuple[int, str, int | None]) -> list[GradeRow]:
    return [GradeRow(p, f"q{p}", f"d{p}", r, g, g is None, None) for p, r, g in rows]


def test_each_rater_has_an_order_of_their_own_that_a_reload_finds_again() -> None:
    pairs = list(range(1, 501))
    ana, bo = rater_order(pairs, "ana"), rater_order(pairs, "bo")
    assert sorted(ana) == pairs and sorted(bo) == pairs
    assert ana != bo and ana != pairs
    assert rater_order(list(reversed(pairs)), "ana") == ana


def test_a_pair_leaves_the_other_lists_once_it_has_its_raters() -> None:
    given = grades((1, "ana", 2), (1, "bo", 0), (2, "ana", 1))
    assert set(assigned_pairs([1, 2, 3], given, "cy", 2)) == {2, 3}
    assert set(assigned_pairs([1, 2, 3], given, "ana", 2)) == {1, 2, 3}
    assert set(assigned_pairs([1, 2, 3], given, "cy", 1)) == {3}


def test_disagreements_leave_out_the_unsure() -> None:
    given = grades((1, "ana", 2), (1, "bo", 0), (2, "ana", 1), (2, "bo", None), (3, "bo", 1))
    assert disagreements(given) == {1: {"ana": 2, "bo": 0}}


def test_a_settled_pair_keeps_the_raters_grades_and_the_leads_settles_it() -> None:
    given = grades((1, "ana", 2), (1, "bo", 0), (2, "ana", 1), (3, "bo", None))
    pairs = [PairRow(p, f"q{p}", f"d{p}", None, 1 if p == 1 else None) for p in (1, 2, 3)]
    added = judgments_of(given, pairs, {1: "lee"})
    assert added.values.tolist() == [
        ["q1", "d1", 2, "ana"], ["q1", "d1", 0, "bo"], ["q2", "d2", 1, "ana"],
        ["q1", "d1", 1, "lead:lee"],
    ]  # fmt: skip
    # the lead's grade wins whatever the rule (max would say 2) and stays out of agreement
    resolved = resolve_grades(added, "max")
    assert resolved[["query_id", "grade"]].values.tolist() == [["q1", 1], ["q2", 1]]
    [pair] = agreement_by_source(added, (0, 3))
    assert (pair.source_a, pair.source_b, pair.pairs) == ("ana", "bo", 1)
    assert agreement(given, (0, 3)) == [RaterAgreement("ana", "bo", 1, pair.kappa, pair.alpha)]


def test_scales_and_rater_names() -> None:
    assert parse_scale("0-3") == (0, 3)
    for bad in ("3-0", "0-10", "a-b", "03", "1-1"):
        with pytest.raises(InputError):
            parse_scale(bad)
    assert scale_of(pd.DataFrame({"grade": [0, 2, 1]})) == (0, 2)
    assert scale_of(pd.DataFrame({"grade": [1, 1]})) == (0, 3)
    assert check_rater("ana") == "ana"
    for bad in ("llm:gpt", "lead:x", " ana", "a/b", "x" * 41):
        with pytest.raises(InputError):
            check_rater(bad)
