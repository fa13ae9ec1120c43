"""People's grades and a judge's kept apart: which grade a pair has in each view."""

from __future__ import annotations

import pandas as pd
import pytest

from evalplat.comparison.model_views import gate_judge, human_grades, model_grades, model_sources
from evalplat.comparison.results import Gate
from evalplat.errors import InputError


def ratings() -> pd.DataFrame:
    rows = [
        ("q1", "a", 2, "human"),
        ("q1", "b", 3, "llm:gpt"),  # reviewed: the person's 1 wins in both views
        ("q1", "b", 1, "review"),
        ("q1", "c", 0, "llm:gpt"),  # the model alone graded it
        ("q1", "d", 2, "llm:other"),  # another judge's grade: never in gpt's view
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "grade", "source"])


def test_the_human_view_holds_only_peoples_grades() -> None:
    human = human_grades(ratings(), None)
    assert sorted(zip(human["doc_id"], human["grade"], strict=True)) == [("a", 2), ("b", 1)]
    assert model_sources(ratings()) == {"gpt", "other"}


def test_the_model_view_adds_the_judges_grade_only_where_no_person_graded() -> None:
    human = human_grades(ratings(), None)
    filled = model_grades(ratings(), "gpt", human)
    got = sorted(zip(filled["doc_id"], filled["grade"], filled["model"], strict=True))
    assert got == [("a", 2, False), ("b", 1, False), ("c", 0, True)]


def test_a_comparison_takes_one_judge() -> None:
    gates = [
        Gate("nDCG@10", unjudged="judge", judge="a"),
        Gate("P@10", unjudged="grade", judge="b"),
    ]
    with pytest.raises(InputError, match="gates name different judges"):
        gate_judge(gates)
    assert gate_judge([Gate("nDCG@10", unjudged="bound")]) is None
    with pytest.raises(InputError, match="needs the judge whose grades to use"):
        Gate("nDCG@10", unjudged="grade")
