"""Click judgments: grades for (query, document) pairs estimated from interaction logs.

An **impression** is one hit shown by one search, at its position (1-based). It is *clicked*
(or *purchased*) when an event of that action on the search names the document (its
``object_id``, or, without one, its position). Searches are grouped into queries by their
normalised text (:func:`normalise`); a query's id is ``q`` and the first 12 hexadecimal digits
of the SHA-256 of that text, so the same text gets the same id in every log and version.

Models (the rate of a pair, over its impressions i = 1..n):

- ``ctr``: clicked impressions / impressions.
- ``coec``: clicks over expected clicks (Zhang & Jones, 2007; Chapelle & Zhang, 2009):
  COEC(q, d) = Σ_i c_i / Σ_i CTR(p_i), where c_i is 1 when impression i was clicked and
  CTR(p) is the log's click-through at position p, over every query: clicked impressions at p
  / impressions at p. A document clicked as often as an average hit at its positions has
  COEC 1, so a hit shown low is not penalised for being seen less. Impressions at a position
  that nobody ever clicked (CTR(p) = 0) are left out of both sums; a pair left with none has no
  rate.
- ``purchase``: purchased impressions / impressions.

Pairs with fewer than ``min_impressions`` impressions are left out. A rate becomes a grade by
ascending thresholds: the grade is the number of thresholds at or below the rate
(:data:`DEFAULT_THRESHOLDS`; ``0.5, 1, 2`` grades COEC 0.7 as 1 and 1.3 as 2).
"""

from __future__ import annotations

import hashlib
import itertools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.validation import DECIMAL

if TYPE_CHECKING:
    import pandas as pd

MODELS = ("ctr", "coec", "purchase")
DEFAULT_THRESHOLDS: dict[str, tuple[float, ...]] = {
    "ctr": (0.05, 0.15, 0.3),
    "coec": (0.5, 1.0, 2.0),
    "purchase": (0.01, 0.05, 0.1),
}
_ACTION = {"ctr": "click", "coec": "click", "purchase": "purchase"}


@dataclass(frozen=True)
class ClickJudgments:
    """Estimated judgments and what they were estimated from (the provenance)."""

    queries: pd.DataFrame  # query_id, text
    judgments: pd.DataFrame  # query_id, doc_id, grade, source, rate, impressions, hits
    searches: int
    impressions: int
    priors: dict[int, float] = field(default_factory=dict)  # coec: CTR by position

    def provenance(self) -> dict[str, Any]:
        return {
            "searches": self.searches,
            "impressions": self.impressions,
            "pairs": len(self.judgments),
            "position_ctr": {str(p): round(v, 6) for p, v in sorted(self.priors.items())},
        }


def normalise(text: str) -> str:
    """The text a query is grouped by: NFKC, case-folded, whitespace runs made one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def query_id(text: str) -> str:
    """``q`` + the first 12 hex digits of the SHA-256 of the normalised text."""
    return "q" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:12]


def parse_thresholds(text: str | None, model: str) -> tuple[float, ...]:
    """``0.5,1,2`` → ascending thresholds (the model's default without ``text``)."""
    check_model(model)
    if text is None:
        return DEFAULT_THRESHOLDS[model]
    parts = [part.strip() for part in text.split(",")]
    if not all(
        DECIMAL.fullmatch(part) for part in parts
    ):  # ASCII (float() reads "1_0"); no empty place
        raise InputError(f"--thresholds: expected numbers such as 0.5,1,2, got {text!r}")
    values = tuple(float(part) for part in parts)
    if not values or any(b <= a for a, b in itertools.pairwise(values)):
        raise InputError(f"--thresholds must be strictly ascending numbers, got {text!r}")
    if any(v != v or v < 0 or v == float("inf") for v in values):
        raise InputError(f"--thresholds must be finite numbers ≥ 0, got {text!r}")
    return values


def check_model(model: str) -> None:
    if model not in MODELS:
        raise InputError(f"unknown click model {model!r} (models: {', '.join(MODELS)})")


def click_judgments(
    searches: pd.DataFrame,
    events: pd.DataFrame,
    *,
    model: str,
    min_impressions: int,
    thresholds: Sequence[float] | None = None,
) -> ClickJudgments:
    """Judgments of ``model`` from ``searches`` (``query_id``, ``user_query``, ``hit_ids``: a
    list) and their ``events`` (``query_id``, ``action``, ``object_id``, ``position``)."""
    import numpy as np
    import pandas as pd

    check_model(model)
    if isinstance(min_impressions, bool) or min_impressions < 1:
        raise InputError(f"--min-impressions must be 1 or more, got {min_impressions}")
    cuts = np.asarray(thresholds if thresholds is not None else DEFAULT_THRESHOLDS[model])
    shown = _impressions(searches)
    if shown.empty:
        raise InputError("no searches with hits and query text to estimate judgments from")
    counts = shown.groupby(["text", "doc_id"]).size()
    shown["hit"] = _acted(shown, events, _ACTION[model])
    priors: dict[int, float] = {}
    if model == "coec":
        by_position = shown.groupby("position")["hit"].mean()
        priors = dict(zip(by_position.index.astype(int), by_position.astype(float), strict=True))
        shown["expected"] = shown["position"].map(by_position)
        shown = shown[shown["expected"] > 0]
    else:
        shown["expected"] = 1.0  # a plain rate: hits over impressions
    pairs = shown.groupby(["text", "doc_id"], sort=True).agg(
        impressions=("hit", "size"), hits=("hit", "sum"), expected=("expected", "sum")
    )
    pairs["impressions"] = counts.reindex(pairs.index).to_numpy()
    pairs = pairs[pairs["impressions"] >= min_impressions].reset_index()
    if pairs.empty:
        raise InputError(f"no query-document pair was shown {min_impressions} times or more "
                         "(lower --min-impressions)")  # fmt: skip
    pairs["hits"] = pairs["hits"].astype("int64")
    pairs["rate"] = pairs["hits"] / pairs["expected"]
    pairs["grade"] = np.searchsorted(cuts, pairs["rate"].to_numpy(), side="right").astype("int64")
    pairs["query_id"] = [query_id(t) for t in pairs["text"]]
    pairs["source"] = f"clicks:{model}"
    queries = pairs[["query_id", "text"]].drop_duplicates("query_id").reset_index(drop=True)
    judgments = pairs[["query_id", "doc_id", "grade", "source", "rate", "impressions", "hits"]]
    return ClickJudgments(
        queries=pd.DataFrame(queries),
        judgments=judgments.reset_index(drop=True),
        searches=int(searches["query_id"].nunique()),
        impressions=int(counts.sum()),
        priors=priors,
    )


def _impressions(searches: pd.DataFrame) -> pd.DataFrame:
    """One row per hit shown: search record id, normalised text, doc id, position."""
    import pandas as pd

    rows = [
        (record, text, doc, position)
        for record, raw, hits in searches[["query_id", "user_query", "hit_ids"]].itertuples(
            index=False
        )
        if (text := normalise(raw or ""))
        for position, doc in enumerate(hits or (), start=1)
    ]
    return pd.DataFrame(rows, columns=["search", "text", "doc_id", "position"])


def _acted(shown: pd.DataFrame, events: pd.DataFrame, action: str) -> list[float]:
    """Per impression: 1.0 when an ``action`` event of its search names it, else 0.0. An event
    names a document by its ``object_id``, or, without one, by its position."""
    import pandas as pd

    chosen = events[events["action"] == action]
    named: set[tuple[str, str]] = set()
    placed: set[tuple[str, int]] = set()
    for search, doc, position in chosen[["query_id", "object_id", "position"]].itertuples(
        index=False
    ):
        if not pd.isna(doc):
            named.add((str(search), str(doc)))
        elif not pd.isna(position):
            placed.add((str(search), int(position)))
    return [
        1.0 if (s, d) in named or (s, p) in placed else 0.0
        for s, d, p in shown[["search", "doc_id", "position"]].itertuples(index=False)
    ]
