"""Query weights and segments in a comparison.

**Weights.** A test set's queries may carry a weight (``weight`` in the queries file). With
weights the means of a comparison are ``sum(w v) / sum(w)`` — the means ``evaluate`` and the
stored run means give — and the paired tests and the bootstrap are their weighted forms
(``evalplat.comparison.stats``). A query without a weight counts 1. ``Num*`` counts stay sums.

**Segments.** A query's tags (``tags``, several per query) define segments: segment ``tail`` is
every query tagged ``tail``; a query with two tags is in both, a query without tags in none.
Every compared metric is measured over every segment exactly as over all queries: weighted
means, delta, the paired test, the bootstrap CI, wins/ties/losses, and a verdict.

- A ``Gate`` naming a ``segment`` gates its metric on that segment; naming a tag that no query
  carries is refused (a misspelt segment would otherwise never fail).
- Holm's correction runs over one family: the gated metrics *and* the gated (metric, segment)
  pairs, since each of them can fail a CI job. Ungated segment rows are corrected among
  themselves, for display only; they never change the ungated metrics' figures.
- A segment with fewer than ``CompareOptions.min_segment_queries`` queries (default 20) is
  reported but never gated, even when a gate names it; its ``note`` says why.
- Unjudged documents: a segment verdict uses the Judged@k rule over the segment's queries (the
  optimistic bound is computed over all queries only), see ``evalplat.comparison.guard``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalplat.comparison.guard import guard_verdict
from evalplat.comparison.results import CompareOptions, Gate, SegmentComparison
from evalplat.comparison.scores import judged_coverage
from evalplat.errors import InputError
from evalplat.metrics.numbers import counted
from evalplat.metrics.registry import Metric

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

    from evalplat.comparison.paired_latency import PairedTimings

__all__ = [
    "decide_segment",
    "measure_segments",
    "segment_gates",
    "tag_map",
    "weight_vector",
]

Measure = Callable[..., dict[str, Any]]


def weight_vector(
    query_ids: pd.Index, weights: Mapping[str, float] | pd.Series | None
) -> NDArray[np.float64] | None:
    """Each query's weight in ``query_ids`` order (1 when it has none, or NaN); None without
    weights. Refuses a weight that is not a finite number > 0."""
    import numpy as np

    if weights is None:
        return None
    lookup = {str(k): float(v) for k, v in dict(weights).items()}
    values = [lookup.get(str(q), math.nan) for q in query_ids]
    vector = np.array([1.0 if math.isnan(v) else v for v in values], dtype=np.float64)
    bad = ~np.isfinite(vector) | (vector <= 0)
    if bad.any():
        query = query_ids[int(np.flatnonzero(bad)[0])]
        raise InputError(f"query {query!r}: weight must be a finite number > 0")
    return vector


def tag_map(tags: Mapping[str, Iterable[str] | str | None] | None) -> dict[str, tuple[str, ...]]:
    """Query id -> its tags, sorted, without repeats; accepts lists or the stored JSON text."""
    result: dict[str, tuple[str, ...]] = {}
    for query_id, value in (tags or {}).items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        listed = json.loads(value) if isinstance(value, str) else list(value)
        if listed:
            result[str(query_id)] = tuple(sorted({str(t) for t in listed}))
    return result


def segment_gates(
    gates: Sequence[Gate] | None, query_tags: Mapping[str, tuple[str, ...]]
) -> dict[tuple[str, str], Gate]:
    """The gates that name a segment, keyed by (metric, segment)."""
    from evalplat.metrics.names import parse

    known = {tag for tags in query_tags.values() for tag in tags}
    result: dict[tuple[str, str], Gate] = {}
    for gate in gates or ():
        if gate.segment is None:
            continue
        metric = parse(gate.metric)
        if not metric.gateable:
            raise InputError(f"{metric} is an informational count and cannot be gated")
        if gate.segment not in known:
            raise InputError(
                f"gate on {metric} names segment {gate.segment!r}, which no query of the test "
                "set carries as a tag"
            )
        key = (str(metric), gate.segment)
        if key in result:
            raise InputError(f"more than one gate on {metric} in segment {gate.segment!r}")
        result[key] = gate
    return result


def measure_segments(
    chosen: Sequence[Metric],
    wide_a: pd.DataFrame,
    wide_b: pd.DataFrame,
    weights: NDArray[np.float64] | None,
    query_tags: Mapping[str, tuple[str, ...]],
    gates: Mapping[tuple[str, str], Gate],
    options: CompareOptions,
    measure: Measure,
    timings: PairedTimings | None = None,
) -> list[dict[str, Any]]:
    """A row per (segment, metric), segments in tag order, metrics in ``chosen`` order:
    ``measure``'s row (``verdicts._measure``) plus ``segment``, ``queries``, ``note`` and the Holm
    ``family`` it belongs to. A timing measure (latency) is decided on the paired ``timings``
    of the segment's queries, as over all queries."""
    import numpy as np

    from evalplat.comparison.paired_latency import not_gated_text, timed_row

    if not query_tags:
        return []
    index = [str(q) for q in wide_a.index]
    members: dict[str, list[int]] = {}
    for position, query_id in enumerate(index):
        for tag in query_tags.get(query_id, ()):
            members.setdefault(tag, []).append(position)
    rows = []
    for segment in sorted(members):
        picked = np.asarray(members[segment], dtype=np.intp)
        seg_a, seg_b = wide_a.iloc[picked], wide_b.iloc[picked]
        seg_w = None if weights is None else weights[picked]
        small = picked.size < options.min_segment_queries
        note = (
            f"{counted(picked.size, 'query')}, fewer than {options.min_segment_queries}: not gated"
            if small
            else None
        )
        for metric in chosen:
            name = str(metric)
            gate = gates.get((name, segment))
            a = seg_a[name].to_numpy(dtype=np.float64)
            b = seg_b[name].to_numpy(dtype=np.float64)
            judged = judged_coverage(metric, seg_a, seg_b)
            row = measure(metric, a, b, gate, options, judged, weights=seg_w)
            row["gated"] = gate is not None and not small
            row.update(segment=segment, queries=int(picked.size), note=note)
            if metric.spec.paired_timings:
                ids = {index[i] for i in picked}
                timed_row(row, metric, None if timings is None else timings.of_queries(ids))
                if row.get("not_gated") and not small:
                    row["note"] = f"not gated: {not_gated_text(row['not_gated'])}"
            row["family"] = True if row["gated"] else "segments"
            rows.append(row)
    return rows


def decide_segment(
    row: dict[str, Any],
    options: CompareOptions,
    plain_verdict: Callable[[dict[str, Any]], str],
) -> SegmentComparison:
    """The verdict of one segment row: threshold and corrected test, then the Judged@k rule."""
    verdict = guard_verdict(
        row["unjudged_mode"], plain_verdict(row), None, row["unjudged_rise"], options.judged_drop
    )
    return SegmentComparison(
        metric=row["metric"],
        segment=row["segment"],
        queries=row["queries"],
        higher_is_better=row["higher_is_better"],
        baseline=row["baseline"],
        candidate=row["candidate"],
        delta=row["delta"],
        relative_delta=row["relative_delta"],
        ci_low=row["ci_low"],
        ci_high=row["ci_high"],
        test=row["test"],
        p_value=row["p_value"],
        p_corrected=row["p_corrected"],
        gated=row["gated"],
        verdict=verdict,
        note=row["note"],
    )
