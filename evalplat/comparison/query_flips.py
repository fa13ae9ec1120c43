"""Flips of a query between consecutive runs of the window, counted only where the ranking
moved by itself (see :mod:`evalplat.comparison.query_health` for the figure).

Instability is judged between runs of one config version: a change of side across a change of
config version is what the new version did on purpose, never a flip. Scored on the same
judgments, a query's value changes only with its ranking. Across a change of judgment version
new grades move values on their own, so there a change of side is counted only when both
rankings are still stored and differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from evalplat.comparison.query_health import HealthInputs


def flips(matrix: np.ndarray, good: np.ndarray, inputs: HealthInputs, ids: list[str]) -> np.ndarray:
    """Changes of side between consecutive runs in which the query has a value, where a change
    of side there comes from a change of ranking (see :func:`comparable`)."""
    if matrix.shape[1] < 2:
        return np.zeros(matrix.shape[0], dtype=int)
    present = ~np.isnan(matrix)
    both = present[:, 1:] & present[:, :-1] & comparable(inputs, ids)
    counted: np.ndarray = ((good[:, 1:] != good[:, :-1]) & both).sum(axis=1)
    return counted


def comparable(inputs: HealthInputs, ids: list[str]) -> np.ndarray:
    """Per query and pair of consecutive runs: True when a change of its value there comes from
    the ranking of one config version. Across a change of config version, never; scored on the
    same judgments, a value changes only with the ranking; across a change of judgments, only
    when the two rankings are known and differ."""
    pairs = max(len(inputs.runs) - 1, 0)
    counts = np.ones((len(ids), pairs), dtype=bool)
    if len(inputs.versions) == len(inputs.runs):
        same = np.array(inputs.versions[1:]) == np.array(inputs.versions[:-1])
        counts &= same.reshape(1, pairs)
    if len(inputs.judged_on) != len(inputs.runs):
        return counts
    rankings = inputs.rankings
    if rankings is None or rankings.empty:
        keyed = pd.DataFrame(index=pd.Index(ids))
    else:
        last = rankings.drop_duplicates(["query_id", "run_id"], keep="last")
        keyed = last.pivot(index="query_id", columns="run_id", values="ranking").reindex(ids)
    for pair in range(pairs):
        before, after = inputs.runs[pair], inputs.runs[pair + 1]
        if inputs.judged_on[pair] == inputs.judged_on[pair + 1] or not counts[:, pair].any():
            continue
        if before not in keyed.columns or after not in keyed.columns:
            counts[:, pair] = False
            continue
        a, b = keyed[before], keyed[after]
        counts[:, pair] = (a.notna() & b.notna() & (a != b)).to_numpy()
    return counts
