"""Query health over a window: the monthly read of one config on one test set.

Plain data in (:class:`HealthInputs`, frames the store reads in a few columnar queries), plain
data out (:class:`QueryHealth`). Per query, over the window's runs of the config:

- ``mean`` and ``last``: the metric's mean over the runs, and its value in the latest run;
- ``slope``: the least-squares slope of the value against the run's position in the window
  (change per run; positive is a rise whatever the metric's direction);
- ``flips``: how often the query changed side between two consecutive runs of the same config
  version, a side being *good* when the value is at least ``good`` (at most, for a
  lower-is-better metric). A change of config version is a deliberate change, never a flip.
  Only a change of ranking counts: between two runs scored on different judgment versions, a change
  of side is a flip only when the query's ranking differs too (new grades move a score without
  the engine doing anything); when either ranking is no longer stored (pruned), it is not;
- ``zero_result_rate``: the share of runs in which the query returned nothing (or failed);
- ``unjudged_share``: the share of the latest run's top ``k`` that nobody has judged;
- ``weight`` and ``tags`` from the test set; ``best_config``/``best_value``: the config of the
  project whose latest run scores the query best, and ``gap``, how far this config is behind it.

Sections: weakest and strongest queries (by mean), *content or judgment gaps* (no config's
latest run scores above ``floor``), *unstable* queries (``flips >= min_flips``), *never
answered* (no results in any run of the window), and two ranked lists of what to do next:

- **fix these**: queries ranked by ``weight * gap / sum(weights)``, what closing the gap to the
  best config adds to this config's (weighted) mean. The share of each is measured against a
  *distance*:

  - with a target on the metric (``min = t``; ``max`` mirrors it) that the latest run's mean
    ``m`` falls short of, the distance is ``t - m``; each query's share is its gain over that
    distance, and the list stops at the first query whose cumulative share reaches 1: the
    fewest queries whose gaps, closed, take the mean to the target (the largest gains first is
    the shortest such list). When even every gap closed leaves the mean short, every query
    with a gap is listed and the reason says how far short it stays;
  - without a target, or when the mean meets it, the distance is from the config's mean to the
    best-of-configs mean (the sum of every gain), and every query with a gap is listed;
- **judge these**: unjudged (query, document) pairs in the top ``k`` of the configs' latest
  runs, ranked by ``sum over configs of weight / log2(rank + 1) / sum(weights)``: the width a
  grade at that rank takes out of the optimistic/pessimistic bound of a rank-discounted metric
  (nDCG's discount), summed over the configs that show the pair.

Everything is vectorised over a queries-by-runs matrix (one pivot), never a loop per query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
import pandas as pd

from evalplat.comparison.health_judge import ANNOTATION_COLUMNS, JudgeLists, judge_list
from evalplat.comparison.query_flips import flips
from evalplat.comparison.targets import Target
from evalplat.errors import InputError
from evalplat.inputs.natural_order import natural_column, natural_key

_UNITS = {"h": 1 / 24, "d": 1, "w": 7}


def parse_since(text: str, option: str = "--since") -> timedelta:
    """``30d``, ``12h`` or ``4w`` as a duration; anything else is an ``InputError`` naming it."""
    match = re.fullmatch(r"\s*([0-9]{1,5})\s*([a-zA-Z]+)\s*", text)
    if match is None or match.group(2).lower() not in _UNITS or int(match.group(1)) < 1:
        raise InputError(
            f"{option}: {text!r} is not a window; write a whole number and a unit, h (hours), "
            "d (days) or w (weeks), e.g. 30d"
        )
    return timedelta(days=int(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class HealthInputs:
    """What the store read for one config on one test set over a window (see the module doc).

    - ``runs``: ``run_id`` of the config's runs in the window, oldest first;
    - ``scores``: ``run_id, query_id, value`` of the metric in those runs;
    - ``records``: ``run_id, query_id, results_count, status`` of those runs;
    - ``queries``: ``query_id, text, weight, tags`` of the test set version;
    - ``peers``: ``config, query_id, value``: the metric in the latest run of every config of
      the test set in the window, this one included;
    - ``top``: ``config, query_id, doc_id, rank, judged`` (1-based rank), and optionally
      ``title`` and ``text`` (the start of the document's text): the top ``k`` of those latest
      runs;
    - ``judged_on``: the test set version each of ``runs`` was scored on (empty: all one);
    - ``rankings``: ``run_id, query_id, ranking`` (the ranked doc ids as one string) of the runs
      next to a change of ``judged_on``, whose results are still stored;
    - ``versions``: the config version of each of ``runs`` (empty: all one); flips are counted
      only between runs of one version.
    """

    config: str
    test_set: str
    metric: str
    higher_is_better: bool
    runs: tuple[int, ...]
    scores: pd.DataFrame
    records: pd.DataFrame
    queries: pd.DataFrame
    peers: pd.DataFrame
    top: pd.DataFrame
    k: int = 10
    window: str = "30d"
    notes: tuple[str, ...] = ()  # e.g. the gain map in force
    # the target of the metric on all queries, if one is declared (fix these measures against it)
    target: Target | None = None
    judged_on: tuple[int, ...] = ()
    rankings: pd.DataFrame | None = None
    versions: tuple[int, ...] = ()


@dataclass(frozen=True)
class QueryHealth:
    """The monthly read: per-query table, sections and the two ranked lists (module doc)."""

    config: str
    test_set: str
    metric: str
    higher_is_better: bool
    window: str
    runs: tuple[int, ...]
    k: int
    floor: float
    good: float
    table: pd.DataFrame
    weakest: tuple[str, ...]
    strongest: tuple[str, ...]
    gaps: tuple[str, ...]
    unstable: tuple[str, ...]
    never_answered: tuple[str, ...]
    fix: pd.DataFrame
    judge: pd.DataFrame
    fix_documents: pd.DataFrame  # the latest top k of each query to fix, in fix order
    configs: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    # what the fix list's shares are of: the distance to the target, or to the best configs
    fix_basis: str = ""
    target: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, snake_case fields; NaN becomes null."""
        return {
            "config": self.config,
            "testset": self.test_set,
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "window": self.window,
            "runs": list(self.runs),
            "configs": list(self.configs),
            "k": self.k,
            "floor": self.floor,
            "good": self.good,
            "notes": list(self.notes),
            "queries": records(self.table),
            "weakest": list(self.weakest),
            "strongest": list(self.strongest),
            "gaps": list(self.gaps),
            "unstable": list(self.unstable),
            "never_answered": list(self.never_answered),
            "target": self.target,
            "fix_basis": self.fix_basis,
            "fix": records(self.fix),
            "judge": records(self.judge),
        }

    def annotation_csv(self, which: str) -> str:
        """``fix`` or ``judge`` as CSV in ``evalplat unjudged``'s columns, in priority order.

        ``judge``: the pairs themselves; ``fix``: the latest top ``k`` of each query to fix, so
        annotators can check what it shows."""
        frame = self.judge if which == "judge" else self.fix_documents
        return str(frame[ANNOTATION_COLUMNS].to_csv(index=False, lineterminator="\n"))


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    clean = frame.astype(object).where(frame.notna(), None)
    return [{str(k): v for k, v in row.items()} for row in clean.to_dict(orient="records")]


def query_health(
    inputs: HealthInputs,
    *,
    floor: float = 0.0,
    good: float = 0.5,
    min_flips: int = 2,
    limit: int = 20,
    list_limit: int = 1000,
    judge_lists: JudgeLists | None = None,
) -> QueryHealth:
    """The query health of ``inputs`` (see the module doc for every figure and section).

    ``limit`` bounds the weakest and strongest lists, ``list_limit`` the fix and judge lists
    (an annotation batch, not the whole backlog). ``judge_lists``: the site's, to rank the
    configs' shared top k once for all their pages."""
    sign = 1.0 if inputs.higher_is_better else -1.0
    ids = _query_ids(inputs)
    top = inputs.top
    for column in ("title", "text"):
        if column not in top:
            top = top.assign(**{column: ""})
    matrix = (
        inputs.scores.pivot_table(
            index="query_id", columns="run_id", values="value", aggfunc="last"
        )
        .reindex(index=ids, columns=list(inputs.runs))
        .to_numpy(dtype=float)
    )
    table = pd.DataFrame({"query_id": ids})
    queries = inputs.queries.set_index("query_id").reindex(ids)
    table["query"] = queries["text"].fillna("").astype(str).to_numpy()
    table["weight"] = queries["weight"].to_numpy(dtype=float)
    table["tags"] = [tuple(t) if isinstance(t, list | tuple) else () for t in queries["tags"]]
    table["runs"], table["mean"], table["last"], table["slope"] = _trend(matrix)
    table["flips"] = flips(matrix, sign * matrix >= sign * good, inputs, ids)
    table["zero_result_rate"] = _zero_rate(inputs.records).reindex(ids).to_numpy()
    table["unjudged_share"] = _unjudged_share(inputs.top, inputs.config).reindex(ids).to_numpy()
    best_config, best_value = _best(inputs.peers, sign, ids)
    table["best_config"], table["best_value"] = best_config, best_value
    table["gap"] = np.clip(sign * (best_value - table["last"].to_numpy()), 0.0, None)
    weights = table["weight"].fillna(1.0).to_numpy()
    ranked = table.assign(_key=sign * table["mean"]).dropna(subset=["_key"])
    weakest = ranked.sort_values(["_key", "query_id"], kind="stable", key=natural_column)[
        "query_id"
    ].head(limit)
    strongest = ranked.sort_values(
        ["_key", "query_id"], ascending=[False, True], kind="stable", key=natural_column
    )
    answered_any = ~np.isnan(best_value)
    gaps = table.loc[answered_any & (sign * best_value <= sign * floor), "query_id"]
    unstable = table[table["flips"] >= min_flips].sort_values(
        ["flips", "query_id"], ascending=[False, True], kind="stable", key=natural_column
    )["query_id"]
    never = table.loc[table["zero_result_rate"] == 1.0, "query_id"]
    basis = _distance(table, weights, sign, inputs.target)
    fix, fix_documents = _fix_list(table, weights, inputs.config, top, list_limit, basis)
    if judge_lists is None:
        judge = judge_list(top, table, weights, list_limit)
    else:
        judge = judge_lists.get(top, table, weights, list_limit)
    return QueryHealth(
        config=inputs.config,
        test_set=inputs.test_set,
        metric=inputs.metric,
        higher_is_better=inputs.higher_is_better,
        window=inputs.window,
        runs=inputs.runs,
        k=inputs.k,
        floor=floor,
        good=good,
        table=table,
        weakest=tuple(weakest),
        strongest=tuple(strongest["query_id"].head(limit)),
        gaps=tuple(gaps),
        unstable=tuple(unstable),
        never_answered=tuple(never),
        fix=fix,
        judge=judge,
        fix_documents=fix_documents,
        configs=tuple(sorted(inputs.peers["config"].unique())) if len(inputs.peers) else (),
        notes=inputs.notes,
        fix_basis=basis[1],
        target=None if inputs.target is None else inputs.target.label,
    )


def _query_ids(inputs: HealthInputs) -> list[str]:
    known = inputs.queries["query_id"].astype(str).tolist()
    extra = set(inputs.scores["query_id"].astype(str).unique().tolist()) - set(known)
    return sorted([*known, *extra], key=natural_key)


def _trend(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: runs with a value, mean, last value and least-squares slope per run."""
    present = ~np.isnan(matrix)
    values = np.where(present, matrix, 0.0)
    count = present.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, values.sum(axis=1) / count, np.nan)
        x = np.broadcast_to(np.arange(matrix.shape[1], dtype=float), matrix.shape) * present
        sx, sy = x.sum(axis=1), values.sum(axis=1)
        sxx, sxy = (x * x).sum(axis=1), (x * values).sum(axis=1)
        denominator = count * sxx - sx * sx
        slope = np.where(denominator > 0, (count * sxy - sx * sy) / denominator, np.nan)
    rows = np.arange(matrix.shape[0])
    last_column = matrix.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1) if matrix.size else 0
    last = np.where(count > 0, matrix[rows, last_column] if matrix.size else np.nan, np.nan)
    return count, mean, last, slope


def _zero_rate(records: pd.DataFrame) -> pd.Series:
    if records.empty:
        return pd.Series(dtype=float)
    nothing = (records["results_count"] == 0) | (records["status"] != "ok")
    return nothing.groupby(records["query_id"].astype(str)).mean()


def _unjudged_share(top: pd.DataFrame, config: str) -> pd.Series:
    own = top[top["config"] == config]
    if own.empty:
        return pd.Series(dtype=float)
    return (~own["judged"].astype(bool)).groupby(own["query_id"].astype(str)).mean()


def _best(peers: pd.DataFrame, sign: float, ids: list[str]) -> tuple[list[Any], np.ndarray]:
    if peers.empty:
        return [None] * len(ids), np.full(len(ids), np.nan)
    ordered = peers.assign(_key=sign * peers["value"]).sort_values(
        ["query_id", "_key", "config"], ascending=[True, False, True], kind="stable"
    )
    best = ordered.drop_duplicates("query_id").set_index("query_id").reindex(ids)
    names = [None if pd.isna(c) else str(c) for c in best["config"]]
    return names, best["value"].to_numpy(dtype=float)


def _distance(
    table: pd.DataFrame, weights: np.ndarray, sign: float, target: Target | None
) -> tuple[float | None, str]:
    """The distance the fix list is measured against (None: the sum of the gains, the distance
    to the best-of-configs mean) and the sentence that says which."""
    last = table["last"].to_numpy(dtype=float)
    known = ~np.isnan(last)
    if target is None or target.segment is not None or not known.any():
        return None, "shares of the distance to the best-of-configs mean"
    mean = float(np.dot(weights[known], last[known]) / weights[known].sum())
    short = sign * (target.value - mean)
    if short <= 0:
        return None, (
            f"the mean {mean:.4f} meets the target {target.label}: shares of the distance to "
            "the best-of-configs mean"
        )
    gaps = np.nan_to_num(table["gap"].to_numpy(dtype=float))
    reachable = float(np.dot(weights, gaps) / weights.sum())
    stays = (
        f"; closing every gap leaves it {short - reachable:.4f} short" if reachable < short else ""
    )
    return short, (
        f"the mean {mean:.4f} is {short:.4f} short of the target {target.label}: shares of "
        f"that distance{stays}"
    )


def _fix_list(
    table: pd.DataFrame,
    weights: np.ndarray,
    config: str,
    top: pd.DataFrame,
    limit: int,
    basis: tuple[float | None, str] = (None, ""),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    total = float(weights.sum()) or 1.0
    gain = np.nan_to_num(weights * table["gap"].to_numpy() / total)
    fix = table.assign(contribution=gain)
    fix = fix[fix["contribution"] > 0].sort_values(
        ["contribution", "query_id"], ascending=[False, True], kind="stable", key=natural_column
    )
    short = basis[0]
    distance = (float(fix["contribution"].sum()) if short is None else short) or 1.0
    fix = fix.assign(share=fix["contribution"] / distance)
    fix = fix.assign(cumulative=fix["share"].cumsum())
    if short is not None:
        # the fewest queries that close the distance: up to the first that reaches it
        reached = np.flatnonzero(fix["cumulative"].to_numpy() >= 1.0 - 1e-12)
        if reached.size:
            fix = fix.head(int(reached[0]) + 1)
    fix = fix.head(limit)
    of = "of the distance to the best-of-configs mean" if short is None else (
        "of the distance to the target"
    )  # fmt: skip
    fix["reason"] = [
        f"{best} scores {b:.4g} here, {config} {v:.4g}: closing the gap adds "
        f"{c:+.4f} to the mean ({s:.0%} {of}, {cum:.0%} with the queries above)"
        for best, b, v, c, s, cum in zip(
            fix["best_config"], fix["best_value"], fix["last"], fix["contribution"], fix["share"],
            fix["cumulative"], strict=True,
        )
    ]  # fmt: skip
    columns = ["query_id", "query", "weight", "last", "best_config", "best_value", "gap"]
    fix = fix[[*columns, "contribution", "share", "cumulative", "reason"]].reset_index(drop=True)
    own = top[top["config"] == config]
    documents = own.merge(fix[["query_id", "query"]], on="query_id")
    order = {q: i for i, q in enumerate(fix["query_id"])}
    documents = documents.assign(_order=documents["query_id"].map(order)).sort_values(
        ["_order", "rank"], kind="stable"
    )
    return fix, documents[ANNOTATION_COLUMNS].reset_index(drop=True)
