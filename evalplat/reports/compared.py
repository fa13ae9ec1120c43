"""Data of the comparison page: metric rows, moved queries side by side, the per-query table.

Side-by-side results, per query and k (default 10):

- a candidate document is marked ``new`` when the baseline's ranking for that query does not
  contain it at all, ``up``/``down`` when the baseline ranked it lower/higher (``other_rank`` is
  the baseline's rank), nothing when the rank is the same;
- a baseline document is marked ``gone`` when it is not in the candidate's top k
  (``other_rank`` = the candidate's rank beyond k, or None when it left the ranking);
- ``grade`` is the judgment's grade, or None for an unjudged document (shown as unjudged, which
  every metric counts as non-relevant);
- ``title`` is the document's title when the test set stores documents, else the first
  ``TITLE_WORDS`` words of its text, else empty (the page then shows the id alone).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from evalplat.inputs.natural_order import natural_key
from evalplat.reports.data import (
    Column,
    QueryTable,
    RunHeader,
    floats,
    sorted_rows,
    strings,
)

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.verdicts import ComparisonResult, MetricComparison

TITLE_WORDS = 12  # a document without a title is shown by the first words of its text
TITLE_CHARS = 120
_NO_VALUES = (None, None, None)  # a metric the query has no score for


def document_title(title: str | None, text: str | None) -> str:
    """The title, or the first ``TITLE_WORDS`` words of the text (``…`` when cut), or ``""``."""
    for candidate, cut_words in ((title, False), (text, True)):
        words = str(candidate or "").split()
        if not words:
            continue
        shown = " ".join(words[:TITLE_WORDS] if cut_words else words)
        cut = (cut_words and len(words) > TITLE_WORDS) or len(shown) > TITLE_CHARS
        return shown[:TITLE_CHARS].rstrip() + ("…" if cut else "")
    return ""


@dataclass(frozen=True)
class Hit:
    rank: int
    doc_id: str
    grade: int | None
    change: str = ""  # "", "new", "up", "down", "gone"
    other_rank: int | None = None
    title: str = ""


@dataclass(frozen=True)
class SideBySide:
    """One moved query with both runs' top-k results."""

    query_id: str
    text: str
    baseline: float
    candidate: float
    delta: float
    baseline_hits: tuple[Hit, ...]
    candidate_hits: tuple[Hit, ...]


@dataclass(frozen=True)
class MetricRow:
    comparison: MetricComparison
    description: str


@dataclass(frozen=True)
class ComparisonPage:
    result: ComparisonResult
    baseline: RunHeader
    candidate: RunHeader
    metrics: tuple[MetricRow, ...]
    primary: str
    primary_higher_is_better: bool
    worse: tuple[SideBySide, ...]
    better: tuple[SideBySide, ...]
    k: int
    results_available: bool
    table: QueryTable
    # (metrics sharing it, baseline Judged@k, candidate Judged@k), one row per distinct pair
    coverage: tuple[tuple[str, float, float], ...] = ()
    # the primary metric's per-query values, in query id order, for the charts
    baseline_values: tuple[float, ...] = field(repr=False, default=())
    candidate_values: tuple[float, ...] = field(repr=False, default=())


def comparison_page(
    result: ComparisonResult,
    *,
    baseline: RunHeader,
    candidate: RunHeader,
    query_text: Mapping[str, str],
    judgments: pd.DataFrame,
    baseline_results: pd.DataFrame | None,
    candidate_results: pd.DataFrame | None,
    k: int = 10,
    movers: int = 10,
    titles: Mapping[str, str] | None = None,
) -> ComparisonPage:
    """Assemble the comparison page. ``result.per_query`` must be set (the tidy frame
    ``metric, query_id, baseline, candidate, delta``). The primary metric — the one whose movers
    are shown side by side and whose delta orders the table — is, among the gated metrics whose
    verdict is the overall verdict (else all gated metrics, else all metrics), the one on which
    the most queries moved (wins + losses; the first on a tie). Results
    frames may be None (pruned by retention): the page says so. ``titles`` maps doc ids to
    what the side-by-side tables show beside them (see ``document_title``)."""
    from evalplat.errors import InputError
    from evalplat.metrics.names import parse

    if result.per_query is None:
        raise InputError("the comparison has no per-query scores to report")
    primary = _primary(result)
    rows = tuple(MetricRow(m, parse(m.metric).spec.description) for m in result.metrics)
    per_query = result.per_query
    table = _comparison_table(per_query, result.metrics, primary, query_text)
    if result.query_tags:
        table = replace(table, tags=result.query_tags)
    primary_frame = per_query[per_query["metric"] == primary.metric].sort_values("query_id")
    worse, better = _movers(result, primary, per_query, movers)
    available = baseline_results is not None and candidate_results is not None
    side = _side_by_side_builder(
        [q.query_id for q in worse + better],
        judgments,
        baseline_results,
        candidate_results,
        k,
        titles or {},
    )
    return ComparisonPage(
        result=result,
        baseline=baseline,
        candidate=candidate,
        metrics=rows,
        primary=primary.metric,
        primary_higher_is_better=primary.higher_is_better,
        worse=tuple(side(q, query_text) for q in worse),
        better=tuple(side(q, query_text) for q in better),
        k=k,
        results_available=available,
        table=table,
        coverage=_coverage(result.metrics),
        baseline_values=tuple(float(v) for v in primary_frame["baseline"]),
        candidate_values=tuple(float(v) for v in primary_frame["candidate"]),
    )


def side_by_side_queries(result: ComparisonResult, *, movers: int = 10) -> list[str]:
    """The queries whose results :func:`comparison_page` shows side by side (the primary
    metric's movers): a caller reading results from the store needs these queries only."""
    if result.per_query is None:
        return []
    worse, better = _movers(result, _primary(result), result.per_query, movers)
    return [m.query_id for m in worse + better]


def _primary(result: ComparisonResult) -> MetricComparison:
    """Among the gated metrics whose verdict is the overall verdict (else all gated metrics,
    else all metrics), the one on which the most queries moved; the first on a tie."""
    from evalplat.errors import InputError

    if not result.metrics:
        raise InputError("the comparison has no metrics to report")
    gated = [m for m in result.metrics if m.gated]
    decisive = [m for m in gated if m.verdict == result.verdict]
    pool = decisive or gated or list(result.metrics)
    return max(pool, key=lambda m: m.wins + m.losses)


def _coverage(metrics: Sequence[MetricComparison]) -> tuple[tuple[str, float, float], ...]:
    """Judged coverage rows: metrics measured against the same Judged@k share one row."""
    groups: dict[tuple[float, float], list[str]] = {}
    for m in metrics:
        if m.baseline_judged is not None and m.candidate_judged is not None:
            groups.setdefault((m.baseline_judged, m.candidate_judged), []).append(m.metric)
    return tuple((", ".join(names), b, c) for (b, c), names in groups.items())


@dataclass(frozen=True)
class _Move:
    query_id: str
    baseline: float
    candidate: float
    delta: float


def _movers(
    result: ComparisonResult, primary: MetricComparison, per_query: pd.DataFrame, count: int
) -> tuple[list[_Move], list[_Move]]:
    """The result's movers of the primary metric; recomputed from per-query deltas when the
    result has none for it (a stored comparison read back without them)."""
    known = result.movers.get(primary.metric)
    if known is not None:
        return (
            [_Move(q.query_id, q.baseline, q.candidate, q.delta) for q in known.worse[:count]],
            [_Move(q.query_id, q.baseline, q.candidate, q.delta) for q in known.better[:count]],
        )
    sign = 1 if primary.higher_is_better else -1
    frame = per_query[per_query["metric"] == primary.metric]
    moves = [
        _Move(str(q), float(b), float(c), float(d))
        for q, b, c, d in frame[["query_id", "baseline", "candidate", "delta"]].itertuples(
            index=False
        )
        if d != 0
    ]
    worse = sorted(
        (m for m in moves if sign * m.delta < 0), key=lambda m: (sign * m.delta, m.query_id)
    )
    better = sorted(
        (m for m in moves if sign * m.delta > 0), key=lambda m: (-sign * m.delta, m.query_id)
    )
    return worse[:count], better[:count]


def _comparison_table(
    per_query: pd.DataFrame,
    metrics: Sequence[MetricComparison],
    primary: MetricComparison,
    query_text: Mapping[str, str],
) -> QueryTable:
    columns = [Column("q", "Query", "id"), Column("t", "Text", "text")]
    by_metric: dict[str, dict[str, tuple[float, float, float]]] = {}
    # plain lists first: iterating Arrow-backed columns row by row is several times slower
    metric_names, query_ids = (strings(per_query[n].tolist()) for n in ("metric", "query_id"))
    sides = (floats(per_query[n].tolist()) for n in ("baseline", "candidate", "delta"))
    triples = zip(*sides, strict=True)
    for metric, query_id, triple in zip(metric_names, query_ids, triples, strict=True):
        by_metric.setdefault(metric, {})[query_id] = triple
    for i, m in enumerate(metrics):
        hib = m.higher_is_better
        columns += [
            Column(f"b{i}", "baseline", "num", hib, m.metric),
            Column(f"c{i}", "candidate", "num", hib, m.metric),
            Column(f"d{i}", "Δ", "delta", hib, m.metric),
        ]
    ordered = sorted({q for per in by_metric.values() for q in per}, key=natural_key)
    # column by column: one lookup per metric and query, the three values split in C
    cells: list[Sequence[Any]] = [[query_text.get(q, "") for q in ordered]]
    for m in metrics:
        per = by_metric.get(m.metric, {})
        cells += list(zip(*[per.get(q, _NO_VALUES) for q in ordered], strict=True))
    rows: list[tuple[Any, ...]] = list(zip(ordered, *cells, strict=True))
    index = [c.key for c in columns].index(f"d{list(metrics).index(primary)}")
    # Worst first: ascending deltas when higher is better, descending otherwise.
    descending = not primary.higher_is_better
    return QueryTable(
        tuple(columns), sorted_rows(rows, index, descending), columns[index].key, descending
    )


def _side_by_side_builder(
    query_ids: Sequence[str],
    judgments: pd.DataFrame,
    baseline_results: pd.DataFrame | None,
    candidate_results: pd.DataFrame | None,
    k: int,
    titles: Mapping[str, str],
) -> Any:
    """A function ``(move, query_text) -> SideBySide`` over pre-indexed results and grades of
    only the queries shown (results of 10,000 queries by 100 documents are never walked per
    query)."""
    wanted = set(query_ids)
    grades: dict[tuple[str, str], int] = {}
    if len(judgments):
        mine = judgments[judgments["query_id"].isin(wanted)]
        for q, d, g in mine[["query_id", "doc_id", "grade"]].itertuples(index=False):
            grades[(str(q), str(d))] = int(g)

    def rankings(frame: pd.DataFrame | None) -> dict[str, list[str]]:
        if frame is None or not len(frame):
            return {}
        mine = frame[frame["query_id"].isin(wanted)].sort_values(["query_id", "rank"])
        out: dict[str, list[str]] = {}
        for q, d in mine[["query_id", "doc_id"]].itertuples(index=False):
            out.setdefault(str(q), []).append(str(d))
        return out

    base, cand = rankings(baseline_results), rankings(candidate_results)

    def build(move: _Move, query_text: Mapping[str, str]) -> SideBySide:
        a, b = base.get(move.query_id, []), cand.get(move.query_id, [])
        baseline_hits = _baseline_hits(move.query_id, a, b, k, grades)
        candidate_hits = _candidate_hits(move.query_id, a, b, k, grades)
        return SideBySide(
            query_id=move.query_id,
            text=query_text.get(move.query_id, ""),
            baseline=move.baseline,
            candidate=move.candidate,
            delta=move.delta,
            baseline_hits=tuple(replace(h, title=titles.get(h.doc_id, "")) for h in baseline_hits),
            candidate_hits=tuple(
                replace(h, title=titles.get(h.doc_id, "")) for h in candidate_hits
            ),
        )

    return build


def _baseline_hits(
    query_id: str, a: list[str], b: list[str], k: int, grades: Mapping[tuple[str, str], int]
) -> Iterable[Hit]:
    rank_in_b = {doc: i + 1 for i, doc in enumerate(b)}
    for i, doc in enumerate(a[:k]):
        other = rank_in_b.get(doc)
        change = "gone" if other is None or other > k else ""
        yield Hit(i + 1, doc, grades.get((query_id, doc)), change, other if change else None)


def _candidate_hits(
    query_id: str, a: list[str], b: list[str], k: int, grades: Mapping[tuple[str, str], int]
) -> Iterable[Hit]:
    rank_in_a = {doc: i + 1 for i, doc in enumerate(a)}
    for i, doc in enumerate(b[:k]):
        rank, other = i + 1, rank_in_a.get(doc)
        if other is None:
            change = "new"
        elif other > rank:
            change = "up"
        elif other < rank:
            change = "down"
        else:
            change = ""
        yield Hit(rank, doc, grades.get((query_id, doc)), change, other)
