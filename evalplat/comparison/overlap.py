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
from typing import TYPE_CHECKING, Any

from evalplat.comparison.verdicts import OverlapSummary
from evalplat.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.coded import CodedPair


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
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    k: int = 10,
    p: float = 0.9,
    coded: CodedPair | None = None,
) -> tuple[OverlapSummary, pd.DataFrame]:
    """Overlap of two runs' rankings, per query and averaged.

    Both frames have ``query_id, doc_id, rank`` (as ``Store.load_results`` returns). Returns the
    summary and a frame ``query_id, jaccard, rbo, kendall_tau`` sorted by query id. ``coded``:
    the same two frames already coded (``evalplat.comparison.coded``), whose codes are used
    instead of coding the ids again.

    All queries are computed at once with array operations, in blocks of queries; each value is
    the one ``jaccard_at_k``, ``rbo`` and ``kendall_tau`` give for that query, to the last bit
    (the same operations in the same order).
    """
    import pandas as pd

    if k < 1:
        raise InputError(f"k must be 1 or more, got {k}")
    if not 0.0 < p < 1.0:
        raise InputError(f"RBO persistence p must be in (0, 1), got {p}")
    ranked_a, ranked_b, query_ids = (
        _positions(baseline, candidate) if coded is None else _coded_positions(coded)
    )
    rows: list[tuple[str, float, float, float | None]] = []
    for start in range(0, len(query_ids), _BLOCK):
        block = query_ids[start : start + _BLOCK]
        rows.extend(_overlap_block(block, start, ranked_a, ranked_b, k, p))
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


# Queries per block: bounds the pairwise Kendall arrays (block x 2k x 2k) and the RBO matrix.
_BLOCK = 4096


def _positions(
    baseline: pd.DataFrame, candidate: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Each run as ``q, d, pos``: the query's and the document's codes (shared by both runs;
    query codes follow the sorted query ids, returned third) and the position 1, 2, ... in rank
    order. Text ids are coded once: hashing them is the costly step at a million rows."""
    import pandas as pd

    for results in (baseline, candidate):
        missing = {"query_id", "doc_id", "rank"} - set(results.columns)
        if missing:
            raise InputError(f"ranked results need columns {', '.join(sorted(missing))}")
    both = pd.concat(
        [baseline[["query_id", "doc_id", "rank"]], candidate[["query_id", "doc_id", "rank"]]],
        ignore_index=True,
    )
    queries, names = pd.factorize(both["query_id"].astype(str), sort=True)
    docs, _ = pd.factorize(both["doc_id"].astype(str))
    ranks = both["rank"].to_numpy()
    rows = (slice(0, len(baseline)), slice(len(baseline), len(both)))
    coded = [(queries[part], docs[part], ranks[part]) for part in rows]
    return *_ranked(coded), [str(n) for n in names]


def _coded_positions(coded: CodedPair) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """``_positions`` from a pair coded already: the query codes renumbered over the queries
    either run answered (still in sorted order), the doc codes as they are."""
    import numpy as np

    sides = (coded.baseline, coded.candidate)
    seen = np.zeros(len(coded.queries), dtype=bool)
    for side in sides:
        seen[side.query] = True
    answered = np.flatnonzero(seen)
    if len(answered) == len(seen):  # every query answered: the codes stay as they are
        parts = [(side.query, side.doc, side.value) for side in sides]
    else:
        renumber = np.cumsum(seen) - 1
        parts = [(renumber[side.query], side.doc, side.value) for side in sides]
    return *_ranked(parts), [coded.queries[int(i)] for i in answered]


def _ranked(parts: list[tuple[Any, Any, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each run's (query code, doc code, rank) rows as ``q, d, pos`` in query then rank order."""
    import numpy as np
    import pandas as pd

    frames = []
    for queries, docs, ranks in parts:
        q, d, r = queries.astype(np.int64), docs.astype(np.int64), ranks
        if not _in_order(q, r):  # stored results come by query, then rank, already
            order = np.lexsort((r, q))  # by query, then rank; stable for equal ranks
            q, d = q[order], d[order]
        first = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if len(q) else np.zeros(0, int)
        sizes = np.diff(np.r_[first, len(q)])
        pos = np.arange(len(q)) - np.repeat(first, sizes) + 1
        frames.append(pd.DataFrame({"q": q, "d": d, "pos": pos}))
    return frames[0], frames[1]


def _overlap_block(
    query_ids: list[str],
    first: int,
    ranked_a: pd.DataFrame,
    ranked_b: pd.DataFrame,
    k: int,
    p: float,
) -> list[tuple[str, float, float, float | None]]:
    """The queries coded ``first`` to ``first + len(query_ids) - 1``."""
    import numpy as np

    n = len(query_ids)

    def coded(ranked: pd.DataFrame) -> tuple[pd.DataFrame, Any]:
        codes = ranked["q"].to_numpy()
        part = ranked[(codes >= first) & (codes < first + n)]
        part = part.assign(q=part["q"].to_numpy(dtype=np.int64) - first)
        lengths = np.bincount(part["q"].to_numpy(), minlength=n)
        return part[["q", "d", "pos"]], lengths

    a, len_a = coded(ranked_a)
    b, len_b = coded(ranked_b)
    q_common, pos_a, pos_b = _common(a, b)

    # Jaccard@k
    inter = np.bincount(q_common[(pos_a <= k) & (pos_b <= k)], minlength=n)
    top_a, top_b = np.minimum(len_a, k), np.minimum(len_b, k)
    union = top_a + top_b - inter
    jaccard = [1.0 if u == 0 else int(i) / int(u) for i, u in zip(inter, union, strict=True)]

    rbo_values = _rbo_block(q_common, np.maximum(pos_a, pos_b), len_a, len_b, n, p)
    taus = _kendall_block(a, b, top_a, top_b, n, k)
    return list(zip(query_ids, jaccard, rbo_values, taus, strict=True))


def _in_order(q: Any, r: Any) -> bool:
    """Are the rows by query, then rank (ties kept in place), as ``np.lexsort`` puts them?"""
    import numpy as np

    if len(q) < 2:
        return True
    step = np.diff(q)
    return bool(((step > 0) | ((step == 0) & (np.diff(r) >= 0))).all())


def _common(a: pd.DataFrame, b: pd.DataFrame) -> tuple[Any, Any, Any]:
    """The documents both rankings of a query hold: their query code and their position in
    each (``q, pos_a, pos_b``, in no set order: the callers count them).

    Each (query, document) is one integer; both sides sorted by it, one search finds the
    common ones. A side that repeats a document in a query falls back to the join, whose
    every-pair rows the callers then count as before."""
    import numpy as np

    from evalplat.metrics.coded_run import find_sorted

    q_a, d_a, q_b, d_b = (f[c].to_numpy(dtype=np.int64) for f in (a, b) for c in ("q", "d"))
    width = int(max(d_a.max(initial=0), d_b.max(initial=0))) + 1
    key_a, key_b = q_a * width + d_a, q_b * width + d_b
    by_a, by_b = np.argsort(key_a, kind="stable"), np.argsort(key_b, kind="stable")
    sorted_a, sorted_b = key_a[by_a], key_b[by_b]
    if (sorted_a[1:] == sorted_a[:-1]).any() or (sorted_b[1:] == sorted_b[:-1]).any():
        common = a.merge(b, on=["q", "d"], suffixes=("_a", "_b"))
        return (common["q"].to_numpy(), common["pos_a"].to_numpy(),
                common["pos_b"].to_numpy())  # fmt: skip
    if not len(sorted_a) or not len(sorted_b):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    at, hit = find_sorted(sorted_b, sorted_a)
    rows_a, rows_b = by_a[hit], by_b[at[hit]]
    return q_a[rows_a], a["pos"].to_numpy()[rows_a], b["pos"].to_numpy()[rows_b]


def _rbo_block(
    q_common: Any, depth_common: Any, len_a: Any, len_b: Any, n: int, p: float
) -> list[float]:
    """Extrapolated RBO per query (``rbo``): ``X_d`` counts the common documents whose deeper
    position is at most ``d``; the sums run over ``d`` in the scalar loop's order."""
    import numpy as np

    short, long = np.minimum(len_a, len_b), np.maximum(len_a, len_b)
    depth = int(long.max()) if n else 0
    counts = np.zeros((n, depth + 1), dtype=np.int64)
    np.add.at(counts, (q_common, depth_common), 1)
    overlap = np.cumsum(counts, axis=1)  # overlap[:, d] = X_d
    rows = np.arange(n)
    x_s = overlap[rows, short]
    x_l = overlap[rows, long]
    answered = short > 0
    safe_short = np.where(answered, short, 1)
    weighted = np.zeros(n)
    powers = [p**d for d in range(depth + 1)]  # Python's pow, as the scalar loop uses
    for d in range(1, depth + 1):
        live = d <= long
        weighted = weighted + np.where(live, overlap[:, d] / d * powers[d], 0.0)
        tail = live & (d > short) & answered
        extra = x_s * (d - short) / (safe_short * d) * powers[d]
        weighted = weighted + np.where(tail, extra, 0.0)
    power_long = np.array(powers)[long]
    value = (1 - p) / p * weighted + (
        (x_l - x_s) / np.where(long > 0, long, 1) + x_s / safe_short
    ) * power_long
    value = np.minimum(1.0, np.maximum(0.0, value))
    value = np.where(long == 0, 1.0, np.where(answered, value, 0.0))
    return [float(v) for v in value]


def _kendall_block(
    a: pd.DataFrame, b: pd.DataFrame, top_a: Any, top_b: Any, n: int, k: int
) -> list[float | None]:
    """Kendall's τ-b per query over the union of the two top-k lists (``kendall_tau``), with
    SciPy's formula: ``(C - D) / sqrt(n0 - n1) / sqrt(n0 - n2)``, clipped to [-1, 1]."""
    import numpy as np

    union = a[a["pos"] <= k].merge(
        b[b["pos"] <= k], on=["q", "d"], how="outer", suffixes=("_a", "_b")
    )
    q = union["q"].to_numpy(dtype=np.int64)
    x = union["pos_a"].fillna(0).to_numpy(dtype=np.int64)
    y = union["pos_b"].fillna(0).to_numpy(dtype=np.int64)
    x = np.where(x == 0, top_a[q] + 1, x)
    y = np.where(y == 0, top_b[q] + 1, y)
    order = np.argsort(q, kind="stable")
    q, x, y = q[order], x[order], y[order]
    sizes = np.bincount(q, minlength=n)
    width = int(sizes.max()) if n else 0
    slot = np.arange(len(q)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    valid = np.zeros((n, width), dtype=bool)
    # positions run to k + 1: one byte holds them and their differences (the sums below
    # count in 64 bits), an eighth of the memory the pairwise arrays take in int64
    small = np.int8 if k < 63 else np.int64
    xs = np.zeros((n, width), dtype=small)
    ys = np.zeros((n, width), dtype=small)
    valid[q, slot], xs[q, slot], ys[q, slot] = True, x, y
    pair = valid[:, :, None] & valid[:, None, :] & np.triu(np.ones((width, width), bool), 1)
    sx = np.sign(xs[:, :, None] - xs[:, None, :])
    sy = np.sign(ys[:, :, None] - ys[:, None, :])
    concordance = np.where(pair, sx * sy, 0).sum(axis=(1, 2))
    x_ties = (pair & (sx == 0)).sum(axis=(1, 2))
    y_ties = (pair & (sy == 0)).sum(axis=(1, 2))
    total = sizes * (sizes - 1) // 2
    defined = (sizes >= 2) & (top_a > 0) & (top_b > 0) & (x_ties < total) & (y_ties < total)
    # the scalar formula's operations, element by element: the same values to the bit
    left = np.sqrt(np.where(defined, total - x_ties, 1).astype(np.float64))
    right = np.sqrt(np.where(defined, total - y_ties, 1).astype(np.float64))
    tau = np.minimum(1.0, np.maximum(-1.0, concordance.astype(np.float64) / left / right))
    return [float(t) if ok else None for t, ok in zip(tau.tolist(), defined.tolist(), strict=True)]
