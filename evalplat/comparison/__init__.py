"""Comparing two runs: per-query deltas, paired statistics, verdicts and rank overlap.

- ``verdicts``: ``compare_scores``, from two runs' per-query scores to a verdict per metric;
- ``results``: what a comparison says (gates, options, rows, movers), as frozen dataclasses;
- ``stats``: the paired tests, bootstrap intervals, Holm's correction and effect sizes;
- ``guard``: the optimistic bound for unjudged documents and how a gate uses it;
- ``target_bound``: one run's optimistic bound, for a target's verdict;
- ``movers``: per-query values side by side and the queries that moved most;
- ``scores``: per-query score frames, the metrics compared and their judged coverage;
- ``segments``: query weights and the per-segment (query tag) rows and gates;
- ``overlap``: how much the rankings changed (Jaccard, RBO, Kendall's tau);
- ``changes``: what differs between the config and test set versions compared.

``from evalplat.comparison import compare_scores, Gate, CompareOptions`` keeps working; the names
load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalplat.comparison.results import CompareOptions, ComparisonResult, Gate
    from evalplat.comparison.verdicts import compare_scores

__all__ = ["CompareOptions", "ComparisonResult", "Gate", "compare_scores"]


def __getattr__(name: str) -> Any:
    if name == "compare_scores":
        from evalplat.comparison.verdicts import compare_scores

        return compare_scores
    if name in ("CompareOptions", "ComparisonResult", "Gate"):
        from evalplat.comparison import results

        return getattr(results, name)
    raise AttributeError(f"module 'evalplat.comparison' has no attribute {name!r}")
