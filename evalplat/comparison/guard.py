"""The judged-coverage guard: the optimistic bound, and how a gate's verdict uses it.

Unjudged documents count as non-relevant in every metric (trec_eval's rule): the *pessimistic*
scores that evalplat stores. A candidate that brings new documents nobody has judged can only
lose by that rule. The optimistic bound asks the opposite question: what if every unjudged
document in the top ``k`` were relevant, at grade 1?

Both runs are scored against **one** augmented set of judgments: the test set's, plus grade 1
for every unjudged document in the top ``k`` of either run. A document has one grade whoever
retrieves it, so a document both runs show counts for both. A drop that is still there when
every unjudged document is relevant is not driven by missing judgments: the candidate lost
judged relevant documents, not merely swapped them for unjudged ones.

Why not the candidate's most favourable world (its unjudged documents relevant, the baseline's
not)? With sparse judgments (Cranfield's top 10 is about 70% unjudged) that world makes almost
any candidate that retrieves other unjudged documents look better than the baseline, so it
could never confirm a regression and the guard would hide real ones again.

``k`` is the metric's cutoff; a metric without one (AP, RR, Bpref) uses ``depth`` (the
comparison's coverage depth, 10 by default).

How a gate decides (``Gate.unjudged``), with ``P`` the verdict on the stored (pessimistic)
scores and ``C`` the verdict under the optimistic bound, each by the same threshold and
Holm-corrected test:

- ``bound`` (default): ``P`` when ``P == C``. A regression that the bound does not
  confirm is ``needs_judgments``: the drop turns on documents nobody has judged. Any other
  disagreement (typically a gain that only the bound shows) is ``needs_judgments`` only when
  the candidate shows more unjudged documents in its top k than the baseline does in its own;
  otherwise ``P`` stands, so that runs differing only in the order of unjudged documents stay
  what their stored scores say. Without ranked results (pruned by retention) the
  ``needs_judgments`` rule below stands in.
- ``needs_judgments``: ``P``, except that a regression becomes ``needs_judgments`` when the
  unjudged share of the candidate's top k rose by more than ``CompareOptions.judged_drop``.
- ``ignore``: ``P``.
- ``judge`` and ``grade``: as ``bound``, over the grades the gate lets count
  (``evalplat.comparison.model_views``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalplat.metrics.names import parse
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.coded import CodedPair


# ``judge`` and ``grade`` let a judge's grades in (evalplat.comparison.model_views); the
# verdict over whichever grades count is then decided as ``bound`` decides it.
_BOUND_LIKE = ("bound", "judge", "grade")


@dataclass(frozen=True)
class BoundScores:
    """Per-query scores of both runs under the optimistic bound (tidy ``query_id, metric,
    value`` frames) and, per metric, its depth ``k``, the candidate's unjudged documents in the
    top ``k`` (their number and the number of queries that have any) and the baseline's."""

    baseline: pd.DataFrame
    candidate: pd.DataFrame
    depth: dict[str, int]
    unjudged: dict[str, int]
    unjudged_queries: dict[str, int]
    baseline_unjudged: dict[str, int]


def optimistic_bound(
    judgments: pd.DataFrame,
    baseline_results: pd.DataFrame,
    candidate_results: pd.DataFrame,
    metrics: Sequence[str | Metric],
    topics: Sequence[str],
    *,
    depth: int = 10,
    coded: CodedPair | None = None,
) -> BoundScores:
    """Score both runs (``query_id, doc_id, rank`` frames, in stored rank order) against
    ``judgments`` (``query_id, doc_id, grade``) plus grade 1 for every unjudged document in
    either run's top ``k``. Metrics are grouped by ``k`` so each depth is scored once.

    ``coded``: the judgments and both frames coded already (``evalplat.comparison.coded``, with
    ``topics``); the same scores then come from the codes (``evalplat.metrics.coded_run``)."""
    import pandas as pd

    by_depth: dict[int, list[Metric]] = {}
    for name in metrics:
        metric = parse(name)
        if not metric.reads_judgments:
            continue  # unjudged documents cannot move a measure that reads no judgments
        by_depth.setdefault(metric.cutoff or depth, []).append(metric)
    if not by_depth:  # nothing to bound: only measures that read judgments have a bound
        empty = pd.DataFrame({"query_id": [], "metric": [], "value": []})
        return BoundScores(empty, empty.copy(), {}, {}, {}, {})
    if coded is not None and not (baseline_results.empty or candidate_results.empty):
        from evalplat.comparison.coded import coded_bound

        scored = coded_bound(coded, {k: [str(m) for m in group] for k, group in by_depth.items()})
        if scored is not None:
            return BoundScores(*scored)
    judged = judgments[["query_id", "doc_id", "grade"]].astype({"query_id": str, "doc_id": str})
    tops = {
        (side, k): results.loc[results["rank"] <= k, ["query_id", "doc_id"]].astype(str)
        for k in by_depth
        for side, results in (("candidate", candidate_results), ("baseline", baseline_results))
    }
    known = _Judged(judged, list(tops.values()))
    frames: dict[str, list[pd.DataFrame]] = {"baseline": [], "candidate": []}
    depths: dict[str, int] = {}
    unjudged: dict[str, int] = {}
    unjudged_queries: dict[str, int] = {}
    baseline_unjudged: dict[str, int] = {}
    for k, group in by_depth.items():
        new = known.unjudged(tops["candidate", k])
        base_new = known.unjudged(tops["baseline", k])
        # each pair once, the candidate's first
        extra = pd.concat([new, base_new], ignore_index=True).drop_duplicates().assign(grade=1)
        augmented = pd.concat([judged, extra], ignore_index=True)
        names = [str(m) for m in group]
        for side, results in (("baseline", baseline_results), ("candidate", candidate_results)):
            frames[side].append(score_results(augmented, results, names, topics))
        for name in names:
            depths[name] = k
            unjudged[name] = len(new)
            unjudged_queries[name] = int(new["query_id"].nunique())
            baseline_unjudged[name] = len(base_new)
    return BoundScores(
        baseline=pd.concat(frames["baseline"], ignore_index=True),
        candidate=pd.concat(frames["candidate"], ignore_index=True),
        depth=depths,
        unjudged=unjudged,
        unjudged_queries=unjudged_queries,
        baseline_unjudged=baseline_unjudged,
    )


def guard_verdict(
    mode: str,
    pessimistic: str,
    best_case: str | None,
    unjudged_rise: float | None,
    judged_drop: float,
    *,
    more_unjudged: bool = False,
) -> str:
    """A gate's verdict from the pessimistic one and the optimistic bound's (module doc).

    ``more_unjudged``: the candidate shows more unjudged documents in its top k than the
    baseline in its own."""
    if mode == "ignore":
        return pessimistic
    if mode in _BOUND_LIKE and best_case is not None:
        if best_case == pessimistic:
            return pessimistic
        if pessimistic == "regression" or more_unjudged:
            return "needs_judgments"
        return pessimistic
    rose = unjudged_rise is not None and unjudged_rise > judged_drop
    return "needs_judgments" if pessimistic == "regression" and rose else pessimistic


class _Judged:
    """Which (query, document) pairs of some top-k frames have a judgment.

    The text ids of the judgments and of every frame are coded to integers in one pass each
    (hashing a million text ids is the costly step, so it is done once, not per frame)."""

    def __init__(self, judged: pd.DataFrame, tops: list[pd.DataFrame]) -> None:
        import numpy as np
        import pandas as pd

        frames = [judged, *tops]
        queries, _ = pd.factorize(pd.concat([f["query_id"] for f in frames], ignore_index=True))
        docs, names = pd.factorize(pd.concat([f["doc_id"] for f in frames], ignore_index=True))
        keys = queries.astype(np.int64) * (len(names) + 1) + docs
        bounds = np.cumsum([0] + [len(f) for f in frames])
        self._judged = np.sort(keys[: bounds[1]])  # sorted, searched: no hash table
        self._keys = {id(f): keys[bounds[i + 1] : bounds[i + 2]] for i, f in enumerate(tops)}

    def unjudged(self, top: pd.DataFrame) -> pd.DataFrame:
        """``query_id, doc_id`` of the rows of ``top`` (one of the frames given) without a
        judgment, in ``top``'s order."""
        from evalplat.metrics.coded_run import find_sorted

        _, found = find_sorted(self._judged, self._keys[id(top)])
        return top.loc[~found, ["query_id", "doc_id"]].reset_index(drop=True)


def score_results(
    judgments: pd.DataFrame, results: pd.DataFrame, metrics: list[str], topics: Sequence[str]
) -> pd.DataFrame:
    """Per-query scores (``query_id, metric, value``) of ``results`` in their stored rank order
    against ``judgments``."""
    import pandas as pd

    from evalplat.metrics.evaluation import evaluate

    if results.empty:  # no results at all: every metric is 0 (the engine refuses an empty run)
        return pd.DataFrame(
            [(q, name, 0.0) for name in metrics for q in topics],
            columns=["query_id", "metric", "value"],
        )
    run = results.sort_values(["query_id", "rank"], kind="stable")[
        ["query_id", "doc_id", "rank", "score"]
    ].reset_index(drop=True)
    # The stored rank decides the order; a searcher may leave scores empty.
    run["score"] = run["score"].fillna(0.0)
    return evaluate(judgments, run, metrics, ordering="given", topics=list(topics)).per_query
