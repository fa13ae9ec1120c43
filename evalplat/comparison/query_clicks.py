"""Per-query click-through joined to a test set's queries, next to a per-query offline metric.

Online searches carry the text the user typed, not a test set's query id, so they are joined to
the test set's queries by normalised text (``evalplat.events.click_models.normalise``: NFKC,
case-folded, whitespace runs made one space), the key ``testset from-events`` groups searches
by. Inputs:

- ``queries``: ``query_id, text``: the test set's queries;
- ``searches``: ``version, user_query, searches, clicked``: per config version and raw text,
  how many searches were run and how many of them had a ``click`` event;
- ``offline``: ``version, query_id, value``: the per-query offline metric of each version.

Per version and test-set query: searches, clicked searches and click-through = clicked /
searches (the per-search rate of ``online:CTR``, pooled over sessions here since a query is
searched across sessions). Two test-set queries with the same normalised text both get its
searches. Searches whose text matches no test-set query are counted per version, not dropped
silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

QUERY_COLUMNS = ["query_id", "text"]
SEARCH_COLUMNS = ["version", "user_query", "searches", "clicked"]
OFFLINE_COLUMNS = ["version", "query_id", "value"]


@dataclass(frozen=True)
class QueryClicks:
    """The join: ``rows`` has ``version, query_id, text, value, searches, clicked, ctr``, one
    row per version and test-set query that has an offline value or a matched search
    (``value`` NaN without an offline score, ``ctr`` NaN without a search)."""

    metric: str
    rows: pd.DataFrame
    versions: list[str]
    searches: dict[str, int] = field(default_factory=dict)  # version -> searches in all
    unmatched: dict[str, int] = field(default_factory=dict)  # version -> searches not joined


def match_searches(queries: pd.DataFrame, searches: pd.DataFrame) -> pd.DataFrame:
    """``version, query_id, searches, clicked``: each version's searches summed per test-set
    query whose normalised text they share; searches matching none are left out."""
    import pandas as pd

    from evalplat.events.click_models import normalise

    keys = pd.DataFrame(
        {"query_id": queries["query_id"].astype(str), "key": [normalise(str(t or ""))
                                                             for t in queries["text"]]}
    )  # fmt: skip
    keys = keys[keys["key"] != ""]
    typed = searches.assign(key=[normalise(str(t or "")) for t in searches["user_query"]])
    joined = typed.merge(keys, on="key", how="inner")
    summed = joined.groupby(["version", "query_id"], as_index=False, sort=True)[
        ["searches", "clicked"]
    ].sum()
    return summed.astype({"searches": "int64", "clicked": "int64"})


def unmatched_searches(queries: pd.DataFrame, searches: pd.DataFrame) -> dict[str, int]:
    """Per version, the searches whose normalised text is no test-set query's."""
    from evalplat.events.click_models import normalise

    known = {normalise(str(t or "")) for t in queries["text"]} - {""}
    counts: dict[str, int] = {}
    for version, text, number in searches[["version", "user_query", "searches"]].itertuples(
        index=False
    ):
        if normalise(str(text or "")) not in known:
            counts[str(version)] = counts.get(str(version), 0) + int(number)
    return dict(sorted(counts.items()))


def query_clicks(
    metric: str,
    queries: pd.DataFrame,
    searches: pd.DataFrame,
    offline: pd.DataFrame,
    versions: Sequence[str],
) -> QueryClicks:
    """The per-query join of ``versions`` (module doc)."""
    import numpy as np

    chosen = list(versions)
    mine = searches[searches["version"].isin(chosen)]
    matched = match_searches(queries, mine)
    scores = offline[offline["version"].isin(chosen)][OFFLINE_COLUMNS]
    rows = scores.merge(matched, on=["version", "query_id"], how="outer")
    rows["searches"] = rows["searches"].fillna(0).astype("int64")
    rows["clicked"] = rows["clicked"].fillna(0).astype("int64")
    rows["value"] = rows["value"].astype("float64")
    with np.errstate(invalid="ignore", divide="ignore"):
        rows["ctr"] = np.where(rows["searches"] > 0, rows["clicked"] / rows["searches"], np.nan)
    texts = dict(zip(queries["query_id"].astype(str), queries["text"], strict=True))
    rows["text"] = [str(texts.get(q) or "") for q in rows["query_id"]]
    rows = rows.sort_values(["version", "query_id"], kind="stable").reset_index(drop=True)
    totals = mine.groupby("version")["searches"].sum()
    return QueryClicks(
        metric=metric,
        rows=rows[["version", "query_id", "text", "value", "searches", "clicked", "ctr"]],
        versions=chosen,
        searches={str(v): int(n) for v, n in totals.items()},
        unmatched=unmatched_searches(queries, mine),
    )
