"""The query-health page's "judge these" list: unjudged pairs of the configs' latest top k.

Each unjudged (query, document) pair in the top ``k`` of the configs' latest runs is ranked by
``sum over configs of weight / log2(rank + 1) / sum(weights)``: the width a grade at that rank
takes out of the optimistic/pessimistic bound of a rank-discounted metric (nDCG's discount),
summed over the configs that show the pair (:mod:`evalplat.comparison.query_health`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalplat.inputs.natural_order import natural_column

# The CSV annotators get back: the columns of ``evalplat unjudged``, so one workflow serves both;
# a document's title and the start of its text, so it can be graded from the file.
ANNOTATION_COLUMNS = ["query_id", "query", "doc_id", "rank", "title", "text"]


def judge_list(
    top: pd.DataFrame, table: pd.DataFrame, weights: np.ndarray, limit: int
) -> pd.DataFrame:
    """The ``limit`` unjudged pairs of ``top`` (every config's latest top k, with a ``judged``
    flag) of most impact, with where each is shown; ``table`` gives the queries' text and
    ``weights`` their weights (one per row of ``table``)."""
    columns = [*ANNOTATION_COLUMNS, "impact", "configs", "reason"]
    unjudged = top[~top["judged"].astype(bool)]
    if unjudged.empty:
        return pd.DataFrame(columns=columns)
    weight = pd.Series(weights, index=table["query_id"])
    total = float(weights.sum()) or 1.0
    rows = unjudged.assign(
        impact=unjudged["query_id"].map(weight).fillna(1.0)
        / np.log2(unjudged["rank"].to_numpy(dtype=float) + 1.0)
        / total
    )
    pairs = rows.groupby(["query_id", "doc_id"], sort=False).agg(
        rank=("rank", "min"), impact=("impact", "sum"), configs=("config", "nunique"),
        title=("title", "first"), text=("text", "first"),
    ).reset_index()  # fmt: skip
    pairs = pairs.sort_values(
        ["impact", "query_id", "doc_id"], ascending=[False, True, True], kind="stable",
        key=natural_column,
    ).head(limit)  # fmt: skip
    # where each kept pair shows, "beta #1, gamma #3": text built for the kept pairs only
    kept = rows.merge(pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    kept = kept.sort_values(["config"], kind="stable")
    shown = (
        (kept["config"].astype(str) + " #" + kept["rank"].astype(str))
        .groupby([kept["query_id"], kept["doc_id"]], sort=False)
        .agg(", ".join)
    )
    pairs["reason"] = "unjudged at " + pd.Series(
        list(zip(pairs["query_id"], pairs["doc_id"], strict=True)), index=pairs.index
    ).map(shown)
    pairs["query"] = pairs["query_id"].map(table.set_index("query_id")["query"]).fillna("")
    return pairs[columns].reset_index(drop=True)


class JudgeLists:
    """The judge list of each config's page, computed once for all of them.

    The list ranks the pairs of every config's top k (the same frame for each config of a test
    set: the store keeps it), weighted by the version's queries: it does not depend on whose page
    it is. A site with twenty configs would otherwise rank twenty configs' top k twenty times.
    The last list is kept with what it was made of (the ``top`` frame itself, the queries' ids,
    text and weights, and the limit) and given again only when all of those are the same;
    otherwise it is computed, as :func:`judge_list` does.
    """

    def __init__(self) -> None:
        self._last: tuple[pd.DataFrame, pd.DataFrame, int, pd.DataFrame] | None = None

    def get(
        self, top: pd.DataFrame, table: pd.DataFrame, weights: np.ndarray, limit: int
    ) -> pd.DataFrame:
        """:func:`judge_list` of the arguments (a copy: pages may change their frames)."""
        queries = pd.DataFrame(
            {"query_id": table["query_id"], "query": table["query"], "weight": weights}
        )
        last = self._last
        if last is not None and last[0] is top and last[2] == limit and last[1].equals(queries):
            return last[3].copy()
        judge = judge_list(top, table, weights, limit)
        self._last = (top, queries, limit, judge)
        return judge.copy()
