"""KendallTau@k and Spearman@k: hand-computed examples and agreement with SciPy per query."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from evalplat.metrics import parse
from evalplat.metrics.evaluation import evaluate

UNJUDGED = None


def _frames(grades: list[int | None]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One query ranking d0..dn in that order; ``None`` leaves a document unjudged."""
    docs = [f"d{i}" for i in range(len(grades))]
    judged = {doc: grade for doc, grade in zip(docs, grades, strict=True) if grade is not None}
    qrels = pd.DataFrame({"query_id": "q", "doc_id": list(judged), "grade": list(judged.values())})
    if qrels.empty:
        qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["elsewhere"], "grade": [1]})
    scores = [100.0 - i for i in range(len(docs))]
    run = pd.DataFrame({"query_id": "q", "doc_id": docs, "score": scores})
    if run.empty:  # a run with no rows at all is refused: another topic answers instead
        run = pd.DataFrame({"query_id": ["other"], "doc_id": ["x"], "score": [1.0]})
    return qrels, run


def _value(grades: list[int | None], name: str) -> float:
    return float(evaluate(*_frames(grades), [name], topics=["q"]).means[str(parse(name))])


def test_kendall_tau_b_of_the_graded_example() -> None:
    # [3, 2, 3, 0, 1]: of the 10 pairs, 7 concordant, 2 discordant ((2,3) and (0,1)) and one
    # tie (the two 3s): tau_b = (7 - 2) / sqrt(10 * (10 - 1))
    assert _value([3, 2, 3, 0, 1], "KendallTau@5") == pytest.approx(5 / math.sqrt(90))
    assert round(_value([3, 2, 3, 0, 1], "KendallTau@5"), 4) == 0.5270


def test_spearman_rho_of_the_graded_example() -> None:
    # position ranks 5 4 3 2 1, grade ranks 4.5 3 4.5 1 2 (the two 3s share 4 and 5); both
    # means are 3: sum dx dy = 2*1.5 + 1*0 + 0*1.5 + (-1)(-2) + (-2)(-1) = 7,
    # sum dx^2 = 10, sum dy^2 = 2.25 + 0 + 2.25 + 4 + 1 = 9.5
    assert _value([3, 2, 3, 0, 1], "Spearman@5") == pytest.approx(7 / math.sqrt(95))
    assert round(_value([3, 2, 3, 0, 1], "Spearman@5"), 4) == 0.7182


def test_unjudged_documents_take_no_part() -> None:
    # judged 2, 0, 1 at positions 1, 3, 4: pairs (2,0) C, (2,1) C, (0,1) D -> (2 - 1) / 3
    grades = [2, UNJUDGED, 0, 1]
    assert _value(grades, "KendallTau@4") == pytest.approx(1 / 3)
    # position ranks 3 2 1, grade ranks 3 1 2: dx = 1 0 -1, dy = 1 -1 0 -> 1 / sqrt(2 * 2)
    assert _value(grades, "Spearman@4") == pytest.approx(0.5)


def test_the_cutoff_counts_ranks_and_judged_only_counts_judged_documents() -> None:
    grades = [2, UNJUDGED, 0, 1]
    assert _value(grades, "KendallTau@2") == 0.0  # only one judged document in the top 2
    # the first two judged documents: 2 then 0, in order
    assert _value(grades, "KendallTau(judged_only=true)@2") == 1.0
    assert _value(grades, "Spearman(judged_only=true)@2") == 1.0


@pytest.mark.parametrize(
    ("grades", "expected"),
    [([3, 2, 1, 0], 1.0), ([0, 1, 2, 3], -1.0), ([-1, 1], -1.0), ([2, -1], 1.0)],
    ids=["by-grade", "against-grade", "negative-as-zero-below", "negative-as-zero-above"],
)
def test_ordered_and_reversed_rankings_reach_the_bounds(
    grades: list[int | None], expected: float
) -> None:
    assert _value(grades, "KendallTau@10") == pytest.approx(expected)
    assert _value(grades, "Spearman@10") == pytest.approx(expected)


@pytest.mark.parametrize(
    "grades",
    [[], [2], [2, UNJUDGED, UNJUDGED], [1, 1, 1], [0, -1, 0], [UNJUDGED, UNJUDGED]],
    ids=["no-results", "one", "one-judged", "all-tied", "negative-ties-zero", "none-judged"],
)
def test_fewer_than_two_judged_or_all_tied_grades_score_zero(grades: list[int | None]) -> None:
    assert _value(grades, "KendallTau") == 0.0
    assert _value(grades, "Spearman") == 0.0


@st.composite
def rankings(draw: st.DrawFn) -> tuple[list[list[int | None]], int | None, bool]:
    """Several queries, each a ranking of grades (None: unjudged), plus a cutoff and judged_only."""
    grade = st.one_of(st.none(), st.integers(-1, 4))
    queries = draw(st.lists(st.lists(grade, max_size=12), min_size=1, max_size=5))
    cutoff = draw(st.one_of(st.none(), st.integers(1, 12)))
    return queries, cutoff, draw(st.booleans())


def _scipy(grades: list[int | None], cutoff: int | None, judged_only: bool,
           ) -> tuple[float, float]:  # fmt: skip
    pairs = list(enumerate(grades))
    if judged_only:  # trec_eval -J: a document graded below zero counts as unjudged
        pairs = [(i, g) for i, g in pairs if g is not None and g >= 0]
    pairs = [(i, max(g, 0)) for i, g in pairs[:cutoff] if g is not None]
    x = [-i for i, _ in pairs]
    y = [g for _, g in pairs]
    if len(set(y)) < 2:
        return 0.0, 0.0  # documented: 0 where SciPy has no value
    return float(stats.kendalltau(x, y).statistic), float(stats.spearmanr(x, y).statistic)


@given(rankings())
def test_kernels_match_scipy_per_query(
    case: tuple[list[list[int | None]], int | None, bool],
) -> None:
    queries, cutoff, judged_only = case
    qrels_rows, run_rows = [], []
    for q, grades in enumerate(queries):
        for i, grade in enumerate(grades):
            run_rows.append((f"q{q}", f"d{i}", 100.0 - i))
            if grade is not None:
                qrels_rows.append((f"q{q}", f"d{i}", grade))
        qrels_rows.append((f"q{q}", "never-retrieved", 3))  # every query is a topic
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "grade"])
    if not run_rows:
        run_rows.append(("q0", "unjudged", 1.0))
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    params = "(judged_only=true)" if judged_only else ""
    at = "" if cutoff is None else f"@{cutoff}"
    names = [f"KendallTau{params}{at}", f"Spearman{params}{at}"]
    result = evaluate(qrels, run, names)
    tau, rho = (result.values[str(parse(name))] for name in names)
    expected = np.array([_scipy(g, cutoff, judged_only) for g in queries])
    order = [result.query_ids.index(f"q{q}") for q in range(len(queries))]
    np.testing.assert_allclose(tau[order], expected[:, 0], atol=1e-12)
    np.testing.assert_allclose(rho[order], expected[:, 1], atol=1e-12)
