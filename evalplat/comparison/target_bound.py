"""A target's optimistic bound: the most one run could score once its unjudged documents are
judged, so that a target is ``missed`` only when no grading of them could meet it.

Stored scores count an unjudged document as non-relevant (trec_eval's rule), the least it could
be. The bound asks the other way: per query, the highest value the measure takes under any
grades, from 0 to the test set's top grade, of the unjudged documents in the run's top ``k``
(``k`` the metric's cutoff, or ``depth`` for a metric without one). The top grade is the
highest grade among the test set version's judgments (at least 1); a metric with a grade-to-gain
map (``nDCG(gains={...})@10``) uses the grade of that range with the highest gain instead.

Counting every unjudged document at the top grade is the largest value of a measure that only
gains from a better grade (P, R, Success, RR, DCG, ERR), but not of one that divides by what is
judged (nDCG's ideal, AP's and Rprec's R, Bpref's): a document graded at the top below judged
relevant ones raises the ideal more than the ranking. For those, for a given number ``m`` of
unjudged documents graded at the top, the best choice is the ``m`` ranked first (an earlier
place adds more to the ranking and the same to the ideal), so the bound is the largest value
over the ``m + 1`` worlds in which the first ``m`` unjudged documents of each query's top ``k``
take the top grade and the others stay unjudged (for every measure but Bpref, the same as
grade 0).

Only measures that read judgments have a bound: unjudged documents cannot move Coverage,
Latency or ZeroResult.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalplat.comparison.guard import _Judged, score_results
from evalplat.metrics.registry import Metric, parse

if TYPE_CHECKING:
    import pandas as pd


def top_grade(judgments: pd.DataFrame) -> int:
    """The highest grade the test set allows: the highest among its judgments, at least 1 (a
    test set without a relevant judgment still allows a relevant document)."""
    grades = judgments["grade"]
    return max(1, int(grades.max())) if len(grades) else 1


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
    import pandas as pd

    top = top_grade(judgments)
    groups: dict[int, list[str]] = {}
    for name in metrics:
        metric = parse(name)
        if metric.reads_judgments:
            groups.setdefault(metric.cutoff or depth, []).append(str(metric))
    if not groups:
        return pd.DataFrame({"query_id": [], "metric": [], "value": []})
    judged = judgments[["query_id", "doc_id", "grade"]].astype({"query_id": str, "doc_id": str})
    ordered = results.sort_values(["query_id", "rank"], kind="stable")
    tops = {k: ordered.loc[ordered["rank"] <= k, ["query_id", "doc_id"]] for k in groups}
    tops = {k: top.astype(str) for k, top in tops.items()}
    known = _Judged(judged, list(tops.values()))
    frames = [score_results(judged, results, [n for g in groups.values() for n in g], topics)]
    result_queries = results["query_id"].astype(str)
    for k, names in groups.items():
        unjudged = known.unjudged(tops[k])
        place = unjudged.groupby("query_id", sort=False).cumcount().to_numpy()
        for m in range(1, int(place.max()) + 2 if len(place) else 1):
            # only the queries with m unjudged documents or more: the others' worlds are done
            inside = unjudged.loc[place == m - 1, "query_id"]
            first = unjudged[(place < m) & unjudged["query_id"].isin(inside).to_numpy()]
            ranked = results[result_queries.isin(inside).to_numpy()]
            graded = judged[judged["query_id"].isin(inside)]
            for grade in range(1, top + 1):
                augmented = pd.concat([graded, first.assign(grade=grade)], ignore_index=True)
                frames.append(score_results(augmented, ranked, names, list(inside)))
    scored = pd.concat(frames, ignore_index=True)
    return scored.groupby(["query_id", "metric"], sort=False)["value"].max().reset_index()
