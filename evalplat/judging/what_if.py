"""What a judge's grades would change: recent comparisons replayed with the model's grades.

Calibration measures agreement grade by grade; a team also asks whether the disagreements
matter. For the most recent stored comparisons on the calibrated test set, both runs are
scored twice from their stored results, in their stored order:

- the **human view**: the judgments of the comparison's test set version, people's grades
  only (grades with an ``llm:`` source left out), resolved as the version resolves them;
- the **model view**: the same, with the grade of every pair the judge graded during the
  calibration replaced by the judge's grade.

Each view is compared with the comparison's own stored options and gates, the unjudged-document
guard's optimistic bound included, so the figures differ only by the grades. A verdict that
changes between the views is a verdict the judge's disagreements would have decided. Only pairs
in the calibration sample change: the larger the sample, the closer this is to "the judge
instead of the people".

Metrics that read no judgments (latency, coverage, online KPIs) are not replayed; neither are
comparisons whose runs have no stored results (pruned, or online runs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.store import Store
    from evalplat.store.comparisons import StoredComparison
    from evalplat.testsets.content import TestSetContent

RECENT = 3  # comparisons replayed by default


@dataclass(frozen=True)
class MetricShift:
    metric: str
    human_delta: float
    model_delta: float
    human_verdict: str
    model_verdict: str
    changed: bool  # the verdicts differ


@dataclass(frozen=True)
class ComparisonShift:
    comparison_id: int
    baseline: str
    candidate: str
    test_set: str
    replaced: int  # human-graded pairs of the version whose grade the model view replaces
    metrics: tuple[MetricShift, ...]
    skipped: str | None = None  # why the comparison could not be replayed


def what_if(
    store: Store, test_set: str, model_grades: pd.DataFrame, *, limit: int = RECENT
) -> list[ComparisonShift]:
    """Replay the ``limit`` most recent comparisons on ``test_set`` (any of its versions) with
    ``model_grades`` (``query_id, doc_id, judge``) in place of people's grades (module doc)."""
    name = test_set.partition("@")[0]
    return [
        _replay(store, stored, model_grades) for stored in store.recent_comparisons(name, limit)
    ]


def _replay(store: Store, stored: StoredComparison, model: pd.DataFrame) -> ComparisonShift:
    from evalplat.comparison.results import CompareOptions, Gate
    from evalplat.metrics.names import parse

    def shift(replaced: int, metrics: Sequence[MetricShift], why: str | None) -> ComparisonShift:
        return ComparisonShift(
            stored.id, stored.baseline, stored.candidate, stored.test_set, replaced,
            tuple(metrics), why,
        )  # fmt: skip

    names = [m for m in stored.metrics if parse(m).gateable and parse(m).reads_judgments]
    if not names:
        return shift(0, (), "no compared metric reads judgments")
    if not stored.has_results:
        return shift(0, (), "the runs' ranked results are not stored (pruned or online)")
    content = store.load_test_set(stored.test_set, documents=False)
    human = _human_qrels(content)
    swapped = human.merge(model, on=["query_id", "doc_id"], how="left")
    replaced = int(swapped["judge"].notna().sum())
    swapped["grade"] = swapped["judge"].fillna(swapped["grade"]).astype("int64")
    swapped = swapped.drop(columns="judge")
    options = CompareOptions(**stored.options["compare"])
    gates = [Gate(**g) for g in stored.options.get("gates", []) if g["metric"] in names]
    runs = [store.load_results(run_id) for run_id in stored.run_ids]
    verdicts = [_compare(content, qrels, runs, names, gates, options) for qrels in (human, swapped)]
    metrics = [
        MetricShift(
            name,
            round(verdicts[0][name][0], 6),
            round(verdicts[1][name][0], 6),
            verdicts[0][name][1],
            verdicts[1][name][1],
            verdicts[0][name][1] != verdicts[1][name][1],
        )
        for name in names
    ]
    return shift(replaced, metrics, None)


def _human_qrels(content: TestSetContent) -> pd.DataFrame:
    return content.people_qrels[["query_id", "doc_id", "grade"]].reset_index(drop=True)


def _compare(
    content: TestSetContent,
    qrels: pd.DataFrame,
    runs: list[pd.DataFrame],
    names: list[str],
    gates: list[Any],
    options: Any,
) -> dict[str, tuple[float, str]]:
    from evalplat.comparison.guard import optimistic_bound
    from evalplat.comparison.verdicts import compare_scores
    from evalplat.metrics.evaluation import evaluate

    topics = list(content.queries["query_id"])
    given = content.queries.dropna(subset=["weight"])
    weights = dict(zip(given["query_id"], given["weight"], strict=True)) if len(given) else None
    scores = [
        evaluate(
            qrels,
            results.sort_values(["query_id", "rank"], kind="stable")[
                ["query_id", "doc_id", "rank", "score"]
            ],
            names,
            ordering="given",
            topics=topics,
            weights=weights,
        ).per_query
        for results in runs
    ]
    # the guard's optimistic bound as the stored comparison had it, under this view's grades
    bound = optimistic_bound(qrels, runs[0], runs[1], names, topics)
    result = compare_scores(
        scores[0], scores[1], names, gates, options, bound=bound, weights=weights
    )
    return {m.metric: (m.delta, m.verdict) for m in result.metrics}
