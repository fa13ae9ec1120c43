"""A target's optimistic bound: the most one run could score once its unjudged documents are
judged, so that a target is ``missed`` only when no grading of them could meet it.

Stored scores count an unjudged document as non-relevant (trec_eval's rule), the least it could
be. The bound asks the other way: per query, the highest value the measure takes under any
grades, from 0 to the test set's top grade, of the unjudged documents in the run's top ``k``
(``k`` the metric's cutoff, or ``depth`` for a metric without one). The top grade is the
highest grade among the test set version's judgments (at least 1).

Grading every unjudged document at the top grade gives the most for a measure that only gains
from a better grade (P, R, Success, RR, DCG, ERR), not for one that divides by what is judged:
nDCG's ideal rises with every grade, so a document graded 3 below judged documents graded 1
lifts the ideal more than the ranking, and a lower grade, or a mix, can score higher. The
ideal depends only on *which* grades are given, not on where, and a ranking gains most when
the higher grades go to the earlier documents. So the best grading is one in which grades fall
along the ranking: the first ``c_G`` unjudged documents of a query's top ``k`` at the top grade
``G``, the next ``c_(G-1)`` at ``G - 1``, and so on, the rest left unjudged. The bound is the
highest value over every such count vector ``(c_G, ..., c_1)``: the highest under any grading,
for every measure (for a grade-to-gain map, "higher" is the higher gain). There are
``C(u + G, G)`` vectors for ``u`` unjudged documents (286 for a top 10 on a 0-3 scale); past
``MAX_WORLDS`` only the vectors of one grade are tried (``u G`` of them), which is still the
highest value for the measures that only gain from a better grade, but can fall short for nDCG.
A measure whose relevance is a threshold (it takes ``rel``: P, R, AP, Rprec, Bpref, ...) needs
the top grade alone, so ``u + 1`` worlds. Bpref can also gain from a document judged *not*
relevant (it raises ``min(R, N)``); its bound covers the gradings that make documents relevant
or leave them unjudged.

Only measures that read judgments have a bound: unjudged documents cannot move Coverage,
Latency or ZeroResult.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations_with_replacement
from math import comb
from typing import TYPE_CHECKING

from evalplat.comparison.guard import _Judged, score_results
from evalplat.metrics.names import parse
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import pandas as pd

# The most gradings a bound scores per metric depth (each is one scoring of the queries with
# enough unjudged documents): every falling grading of a top 10 on a 0-3 scale fits.
MAX_WORLDS = 300


def top_grade(judgments: pd.DataFrame) -> int:
    """The highest grade the test set allows: the highest among its judgments, at least 1 (a
    test set without a relevant judgment still allows a relevant document)."""
    grades = judgments["grade"]
    return max(1, int(grades.max())) if len(grades) else 1


def falling_grades(metric: Metric, top: int) -> tuple[int, ...]:
    """The grades 1 to ``top`` from the one worth most in ``metric`` to the one worth least
    (by gain under a grade-to-gain map, the higher grade first on a tie); only ``top`` for a
    measure whose relevance is a threshold (it takes ``rel``): every grade at or above the
    threshold counts alike there, and ``top`` is at or above it if any grade is. A measure
    whose ``rel`` is unset by default (RBP) is graded until one is given."""
    if metric.param("rel") is not None and "rel" in metric.spec.params:
        return (top,)
    gains = metric.gains
    return tuple(sorted(range(1, top + 1), key=lambda g: (gains.get(g, float(g)), g), reverse=True))


def gradings(grades: tuple[int, ...], most: int) -> Iterator[tuple[int, ...]]:
    """The grades of the first unjudged documents of a query, one tuple per grading that falls
    along ``grades`` (module doc), from 1 to ``most`` documents; only the gradings of one grade
    when there are more than ``MAX_WORLDS``."""
    if comb(most + len(grades), len(grades)) - 1 > MAX_WORLDS:
        for m in range(1, most + 1):
            yield from ((grade,) * m for grade in grades)
        return
    for m in range(1, most + 1):
        # a multiset of m grades, laid out in the order of ``grades``
        for chosen in combinations_with_replacement(range(len(grades)), m):
            yield tuple(grades[i] for i in chosen)


def target_bound(
    judgments: pd.DataFrame,
    results: pd.DataFrame,
    metrics: Sequence[str | Metric],
    topics: Sequence[str],
    *,
    depth: int = 10,
) -> pd.DataFrame:
    """Per-query bound (``query_id, metric, value``) of one run's ``results`` (``query_id,
    doc_id, rank``, in stored rank order) against ``judgments`` (``query_id, doc_id, grade``),
    for the metrics that read judgments (module doc); the others are left out."""
    import numpy as np
    import pandas as pd

    top = top_grade(judgments)
    groups: dict[tuple[int, tuple[int, ...]], list[str]] = {}
    for name in metrics:
        metric = parse(name)
        if metric.reads_judgments:
            key = (metric.cutoff or depth, falling_grades(metric, top))
            groups.setdefault(key, []).append(str(metric))
    if not groups:
        return pd.DataFrame({"query_id": [], "metric": [], "value": []})
    judged = judgments[["query_id", "doc_id", "grade"]].astype({"query_id": str, "doc_id": str})
    ordered = results.sort_values(["query_id", "rank"], kind="stable")
    tops = {k: ordered.loc[ordered["rank"] <= k, ["query_id", "doc_id"]] for k, _ in groups}
    tops = {k: top.astype(str) for k, top in tops.items()}
    known = _Judged(judged, list(tops.values()))
    frames = [score_results(judged, results, [n for g in groups.values() for n in g], topics)]
    result_queries = results["query_id"].astype(str)
    for (k, grades), names in groups.items():
        unjudged = known.unjudged(tops[k])
        place = unjudged.groupby("query_id", sort=False).cumcount().to_numpy()
        most = int(place.max()) + 1 if len(place) else 0
        sized = 0  # the length of the gradings the frames below are for
        for grading in gradings(grades, most):
            if len(grading) != sized:
                # only the queries with m unjudged documents or more: a query with fewer has
                # its grading among the shorter ones
                sized = m = len(grading)
                inside = unjudged.loc[place == m - 1, "query_id"]
                first = (place < m) & unjudged["query_id"].isin(inside).to_numpy()
                extra, at = unjudged[first], place[first]
                graded = judged[judged["query_id"].isin(inside)]
                ranked = results[result_queries.isin(inside).to_numpy()]
            augmented = pd.concat([graded, extra.assign(grade=np.asarray(grading)[at])])
            frames.append(score_results(augmented, ranked, names, list(inside)))
    scored = pd.concat(frames, ignore_index=True)
    return scored.groupby(["query_id", "metric"], sort=False)["value"].max().reset_index()
