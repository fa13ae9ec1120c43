"""Rank overlap between two runs of the same queries: how much did the results change?

Per query, for rankings ``A`` (baseline) and ``B`` (candidate):

- **Jaccard@k**: size of the intersection over size of the union of the two top-k document
  sets; 1 when both are empty.
- **RBO** (rank-biased overlap, Webber, Moffat & Zobel 2010), extrapolated to infinite depth
  (their equation 32). With ``X_d = |A_d ∩ B_d|`` the overlap at depth ``d``, ``s`` and ``l``
  the lengths of the shorter and longer list (the shorter contributes all its documents beyond
  ``s``)::

      RBO_ext = (1-p)/p * (Σ_{d=1..l} X_d/d p^d + Σ_{d=s+1..l} X_s (d-s)/(s d) p^d)
                + ((X_l - X_s)/l + X_s/s) p^l

  ``p = 0.9`` puts about 86 % of the weight on the top 10. Two identical lists give 1, two
  disjoint lists 0; both empty give 1, one empty 0.
- **Kendall τ** (τ-b, SciPy) over the **union** of the two top-k lists. Each document of the
  union gets its rank in ``A``'s top k and in ``B``'s top k; a document missing from a list
  ranks below every document of that list, all such documents tied (rank ``len(list) + 1``),
  and τ-b accounts for those ties. Two identical lists give 1, reversed lists -1, and two lists
  that share almost nothing come out negative (each list's documents are the other's bottom),
  never 1. Undefined (skipped in the mean) when the union has fewer than two documents or one
  list is empty.

The summary averages over the queries that either run answered.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalplat.comparison.verdicts import OverlapSummary
from evalplat.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


def jaccard_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """Intersection over union of the two top-k sets; 1 when both are empty."""
    if k < 1:
        raise InputError(f"k must be 1 or more, got {k}")
    top_a, top_b = set(a[:k]), set(b[:k])
    union = top_a | top_b
    return 1.0 if not union else len(top_a & top_b) / len(union)


def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap of two rankings (formula in the module docstring)."""
    if not 0.0 < p < 1.0:
        raise InputError(f"RBO persistence p must be in (0, 1), got {p}")
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    s, n_long = len(short), len(long)
    seen_short: set[str] = set()
    seen_long: set[str] = set()
    overlap = 0
    weighted = 0.0
    x_s = 0
    for d in range(1, n_long + 1):
        # Grow both prefixes by one document and count the new matches (each doc once).
        item_long = long[d - 1]
        if d <= s:
            item_short = short[d - 1]
            if item_short == item_long:
                overlap += 1
            else:
                overlap += (item_short in seen_long) + (item_long in seen_short)
            seen_short.add(item_short)
        else:
            overlap += item_long in seen_short
        seen_long.add(item_long)
        if d == s:
            x_s = overlap
        weighted += overlap / d * p**d
        if d > s:
            weighted += x_s * (d - s) / (s * d) * p**d
    x_l = overlap
    value = (1 - p) / p * weighted + ((x_l - x_s) / n_long + x_s / s) * p**n_long
    return min(1.0, max(0.0, value))


def kendall_tau(a: Sequence[str], b: Sequence[str], k: int | None = None) -> float | None:
    """Kendall's τ-b over the union of the two top-k lists (rules in the module docstring);
    ``k=None`` takes the whole lists. None when undefined."""
    from scipy import stats

    if k is not None and k < 1:
        raise InputError(f"k must be 1 or more, got {k}")
    top_a = list(a[:k]) if k is not None else list(a)
    top_b = list(b[:k]) if k is not None else list(b)
    union = list(dict.fromkeys(top_a + top_b))
    if len(union) < 2:
        return None
    rank_a = {doc: rank for rank, doc in enumerate(top_a, start=1)}
    rank_b = {doc: rank for rank, doc in enumerate(top_b, start=1)}
    x = [rank_a.get(doc, len(top_a) + 1) for doc in union]
    y = [rank_b.get(doc, len(top_b) + 1) for doc in union]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        tau = float(stats.kendalltau(x, y).statistic)
    return None if math.isnan(tau) else tau


def rank_overlap(
    baseline: pd.DataFrame, candidate: pd.DataFrame, *, k: int = 10, p: float = 0.9
) -> tuple[OverlapSummary, pd.DataFrame]:
    """Overlap of two runs' rankings, per query and averaged.

    Both frames have ``query_id, doc_id, rank`` (as ``Store.load_results`` returns). Returns the
    summary and a frame ``query_id, jaccard, rbo, kendall_tau`` sorted by query id.
    """
    import pandas as pd

    rankings_a = _rankings(baseline)
    rankings_b = _rankings(candidate)
    rows = []
    for query_id in sorted(set(rankings_a) | set(rankings_b)):
        a = rankings_a.get(query_id, [])
        b = rankings_b.get(query_id, [])
        rows.append((query_id, jaccard_at_k(a, b, k), rbo(a, b, p), kendall_tau(a, b, k)))
    frame = pd.DataFrame(rows, columns=["query_id", "jaccard", "rbo", "kendall_tau"])
    taus = [t for t in frame["kendall_tau"] if t is not None and not math.isnan(t)]
    summary = OverlapSummary(
        k=k,
        p=p,
        jaccard=float(frame["jaccard"].mean()) if rows else 1.0,
        rbo=float(frame["rbo"].mean()) if rows else 1.0,
        kendall_tau=sum(taus) / len(taus) if taus else None,
        queries=len(rows),
    )
    return summary, frame


def _rankings(results: pd.DataFrame) -> dict[str, list[str]]:
    missing = {"query_id", "doc_id", "rank"} - set(results.columns)
    if missing:
        raise InputError(f"ranked results need columns {', '.join(sorted(missing))}")
    ordered = results.sort_values(["query_id", "rank"], kind="stable")
    return {
        str(query_id): [str(doc) for doc in group["doc_id"]]
        for query_id, group in ordered.groupby("query_id", sort=False)
    }
