"""Plain data for each report page, assembled from scores, outcomes and run details.

The ``*_page`` functions are pure (frames and dataclasses in, a frozen page dataclass out) so the
templates can be tested with fixed data; :mod:`evalplat.reports.gather` fetches their inputs from
the store. Nothing here formats numbers for display: that is the templates' job. The comparison
page, with its side-by-side results, has its own module: :mod:`evalplat.reports.compared`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from evalplat.inputs.natural_order import natural_key

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.change_points import ChangePoint
    from evalplat.comparison.facts import Fact
    from evalplat.store.runs import RunInfo

PAGE_SIZE = 50  # rows of the per-query table rendered on the server (the first page)


@dataclass(frozen=True)
class RunHeader:
    """What a page says about one run."""

    id: int
    config: str
    config_version: int
    label: str | None
    searcher: str
    test_set: str
    test_set_version: int
    status: str
    trigger: str
    started_at: str
    finished_at: str | None
    queries_total: int
    queries_failed: int
    # an online run (sessions of one window of a log): its day, searches and events
    window: str | None = None
    searches: int | None = None
    events: int | None = None

    @classmethod
    def from_info(cls, info: RunInfo, label: str | None = None) -> RunHeader:
        span = info.online
        return cls(
            id=info.id,
            config=info.config,
            config_version=info.config_version,
            label=label,
            searcher=info.searcher,
            test_set=info.test_set,
            test_set_version=info.scored_against_version or info.test_set_version,
            status=info.status,
            trigger=info.trigger,
            started_at=format_time(info.started_at),
            finished_at=None if info.finished_at is None else format_time(info.finished_at),
            queries_total=info.queries_total,
            queries_failed=info.queries_failed,
            window=None if span is None else info.day,
            searches=None if span is None else span.get("searches"),
            events=None if span is None else span.get("events"),
        )


def format_time(moment: datetime | str | None) -> str:
    """``2026-05-01 03:12 UTC``; strings (ISO 8601 from stored data) are parsed first."""
    if moment is None:
        return ""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


# ── per-query tables ─────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Column:
    """A per-query table column. ``kind``: ``id``, ``text``, ``num`` or ``delta``; a delta
    column carries its metric's direction so the page can colour and filter it."""

    key: str
    label: str
    kind: str
    higher_is_better: bool = True
    group: str = ""  # header group (the metric name) above baseline/candidate/delta


@dataclass(frozen=True)
class QueryTable:
    """All rows (embedded as JSON for the script) and the first page (rendered as HTML).

    ``rows`` are sorted by ``sort_key`` ascending/descending; values are str, float or None.
    ``tags`` (query id -> tags, the first column being the query id) lets the page filter the
    rows by segment; empty when no query has a tag.
    """

    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    sort_key: str
    descending: bool
    page_size: int = PAGE_SIZE
    tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)

    @property
    def segments(self) -> list[str]:
        """Every tag of the table's queries, sorted: the segment filter's choices."""
        return sorted({tag for tags in self.tags.values() for tag in tags}, key=natural_key)

    @property
    def first_page(self) -> tuple[tuple[Any, ...], ...]:
        return self.rows[: self.page_size]

    def to_json_data(self) -> dict[str, Any]:
        """The blob the page's script reads; floats rounded to 6 digits (plenty for display)."""
        from evalplat.reports.json_rows import json_rows

        return {
            "columns": [
                {"key": c.key, "label": c.label, "kind": c.kind, "hib": c.higher_is_better}
                for c in self.columns
            ],
            "rows": json_rows(self.rows),
            "sort": self.sort_key,
            "descending": self.descending,
            "page_size": self.page_size,
            **({"tags": {q: list(t) for q, t in self.tags.items()}} if self.tags else {}),
        }


def strings(values: list[Any]) -> list[str]:
    """``values`` as text (a column read from the store holds text already: kept as it is)."""
    return [str(v) for v in values] if set(map(type, values)) - {str} else values


def floats(values: list[Any]) -> list[float]:
    """``values`` as floats (a column read from the store holds floats already: kept)."""
    return [float(v) for v in values] if set(map(type, values)) - {float} else values


def sorted_rows(
    rows: list[tuple[Any, ...]], index: int, descending: bool
) -> tuple[tuple[Any, ...], ...]:
    """Sort by one numeric column, missing values last, ties by the first column (query id);
    a text column sorts by the query id alone."""

    def key(row: tuple[Any, ...]) -> tuple[int, float, Any]:
        value = row[index]
        missing = not isinstance(value, int | float) or math.isnan(value)
        number = 0.0 if missing else float(value)
        return (1 if missing else 0, -number if descending else number, natural_key(row[0]))

    return tuple(sorted(rows, key=key))


# ── run page ─────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class MeanRow:
    metric: str
    value: float
    description: str
    higher_is_better: bool


@dataclass(frozen=True)
class Failure:
    query_id: str
    text: str
    attempts: int
    error: str


@dataclass(frozen=True)
class Latency:
    """Per-query latency over the ok queries, in milliseconds (nearest-rank percentiles)."""

    count: int
    mean: float
    p50: float
    p95: float
    p99: float
    max: float


@dataclass(frozen=True)
class RunPage:
    run: RunHeader
    means: tuple[MeanRow, ...]
    distributions: tuple[tuple[str, tuple[float, ...]], ...]
    table: QueryTable
    failures: tuple[Failure, ...]
    latency: Latency | None
    zero_results: int
    error: str | None = None
    answered: int = 0  # queries with an ok outcome, the zero-result rate's denominator
    latencies: tuple[float, ...] = ()  # ms per answered query, for the distribution chart
    empty: tuple[tuple[str, str], ...] = ()  # (query id, text) of answered queries with nothing
    facts: tuple[Fact, ...] = ()  # the run's operational facts (evalplat.comparison.facts)

    @property
    def zero_result_warning(self) -> str | None:
        """Set when most answered queries returned nothing (``evalplat.metrics.run_health``)."""
        from evalplat.metrics.run_health import ZeroResults

        return ZeroResults(self.zero_results, self.answered).warning()


def run_page(
    run: RunHeader,
    *,
    scores: pd.DataFrame,
    outcomes: pd.DataFrame,
    query_text: Mapping[str, str],
    means: Mapping[str, float],
    error: str | None = None,
    order: Sequence[str] = (),
) -> RunPage:
    """Assemble the run page from the latest evaluation's per-query ``scores`` (``query_id,
    metric, value``) and the run's ``outcomes`` (``query_id, status, latency_ms, attempts,
    results_count, error``). ``means`` are the stored aggregates (sums for counts). Metrics
    follow ``order`` (the run's own), then the scores' order; distributions are drawn for at
    most six metrics bounded in [0, 1] (a histogram of counts says little)."""
    from evalplat.metrics.names import parse

    # plain lists first: iterating Arrow-backed columns value by value is several times slower
    query_ids, metrics, numbers = (scores[c].tolist() for c in ("query_id", "metric", "value"))
    query_ids, metrics = (strings(c) for c in (query_ids, metrics))
    scored = list(dict.fromkeys(metrics)) or list(means)
    # the order the run asked for its metrics in, then any other scored metric
    metric_names = [m for m in order if m in scored] + [m for m in scored if m not in order]
    parsed = {name: parse(name) for name in metric_names}
    mean_rows = tuple(
        MeanRow(
            name, float(means[name]), parsed[name].spec.description, parsed[name].higher_is_better
        )
        for name in metric_names
        if name in means
    )
    numbers = floats(numbers)
    values: dict[str, dict[str, float]] = {}
    for q, metric, v in zip(query_ids, metrics, numbers, strict=True):
        values.setdefault(metric, {})[q] = v
    latency_by_query = {
        str(q): (
            None if lat is None or (isinstance(lat, float) and math.isnan(lat)) else float(lat)
        )
        for q, lat in zip(
            outcomes["query_id"].tolist(), outcomes["latency_ms"].tolist(), strict=True
        )
    }
    count_by_query = {
        str(q): int(n)
        for q, n in zip(
            outcomes["query_id"].tolist(), outcomes["results_count"].tolist(), strict=True
        )
    }
    query_ids = sorted(
        set(query_text) | {q for per in values.values() for q in per}, key=natural_key
    )
    columns = [Column("q", "Query", "id"), Column("t", "Text", "text")]
    columns += [
        Column(f"m{i}", name, "num", parsed[name].higher_is_better)
        for i, name in enumerate(metric_names)
    ]
    columns += [Column("n", "results", "int", True), Column("l", "latency ms", "ms", False)]
    # column by column: one lookup per cell, no generator per row
    cells: list[list[Any]] = [[query_text.get(q, "") for q in query_ids]]
    cells += [[per.get(q) for q in query_ids] for per in (values.get(n, {}) for n in metric_names)]
    cells += [[by.get(q) for q in query_ids] for by in (count_by_query, latency_by_query)]
    rows = list(zip(query_ids, *cells, strict=True))
    # Worst first on the first metric, so the page opens on the queries that need attention.
    first = 2 if metric_names else 0
    descending = bool(metric_names) and not parsed[metric_names[0]].higher_is_better
    table = QueryTable(
        tuple(columns), sorted_rows(rows, first, descending), columns[first].key, descending
    )
    failed = outcomes[outcomes["status"] != "ok"].sort_values("query_id")
    failures = tuple(
        Failure(str(q), query_text.get(str(q), ""), int(a), str(e or ""))
        for q, a, e in failed[["query_id", "attempts", "error"]].itertuples(index=False)
    )
    ok = outcomes[outcomes["status"] == "ok"]
    return RunPage(
        run=run,
        means=mean_rows,
        distributions=tuple(
            (name, tuple(values.get(name, {}).values()))
            for name in [n for n in metric_names if parsed[n].spec.bounded][:6]
        ),
        table=table,
        failures=failures,
        latency=latency_summary([v for v in ok["latency_ms"].tolist() if v is not None]),
        zero_results=int((ok["results_count"] == 0).sum()),
        error=error,
        answered=len(ok),
        latencies=tuple(float(v) for v in ok["latency_ms"].tolist() if v is not None and v == v),
        empty=tuple(
            (str(q), query_text.get(str(q), ""))
            for q in sorted(ok.loc[ok["results_count"] == 0, "query_id"], key=natural_key)
        ),
    )


def latency_summary(latencies: Sequence[float]) -> Latency | None:
    """Nearest-rank percentiles: ``p`` = the value at rank ⌈p/100 · n⌉ of the sorted values."""
    finite = sorted(float(v) for v in latencies if v is not None and math.isfinite(v))
    if not finite:
        return None

    def pct(p: float) -> float:
        return finite[max(0, math.ceil(p / 100 * len(finite)) - 1)]

    return Latency(len(finite), sum(finite) / len(finite), pct(50), pct(95), pct(99), finite[-1])


# ── history page and site index ──────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class HistoryRun:
    run: RunHeader
    means: Mapping[str, float]
    is_baseline: bool
    verdict: str | None  # of this run's comparison with its baseline, when one is known
    comparison_id: int | None = None
    judgment_version: int | None = None  # test set version the means were scored against
    scored_on: str | None = None  # ``topics@3, people's grades`` (``evalplat.store.run_figures``)


@dataclass(frozen=True)
class TargetLine:
    """A metric's target on a history chart (``min`` or ``max`` ``value``) and the verdict of
    each run checked against it, by run id. A segment target (``segment`` set) gets a chart of
    its own, of the segment's figure kept with each run (``figures``, by run id)."""

    bound: str
    value: float
    verdicts: Mapping[int, str] = field(default_factory=dict)
    metric: str = ""
    segment: str | None = None
    figures: Mapping[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class HistoryPage:
    config: str
    test_set: str
    metrics: tuple[str, ...]
    runs: tuple[HistoryRun, ...]  # oldest first
    targets: Mapping[str, TargetLine] = field(default_factory=dict)
    # the first metric over each segment (query tag): segment -> run id -> value
    segments: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    # metric -> where it stepped among these runs (``Store.change_points``), oldest first
    change_points: Mapping[str, tuple[ChangePoint, ...]] = field(default_factory=dict)

    @property
    def segment_metric(self) -> str | None:
        return self.metrics[0] if self.segments and self.metrics else None

    @property
    def new_judgments(self) -> tuple[bool, ...]:
        """Per run, oldest first: scored on new judgments (``new_judgments``)."""
        return new_judgments([r.judgment_version for r in self.runs])


def new_judgments(versions: Sequence[int | None]) -> tuple[bool, ...]:
    """Per run, oldest first: was it scored on other judgments than the last run before it that
    was scored at all? A run with no scores (a failed night: ``None``) is never marked, and does
    not make the run after it look new: only a change of the judgments themselves does. The
    console's ``history``, the history page's table and its chart all mark these runs."""
    marks, last = [], None
    for version in versions:
        marks.append(version is not None and last is not None and version != last)
        last = last if version is None else version
    return tuple(marks)


def history_page(
    config: str,
    test_set: str,
    runs: Sequence[HistoryRun],
    metrics: Sequence[str] | None = None,
    targets: Mapping[str, TargetLine] | None = None,
    segments: Mapping[str, Mapping[int, float]] | None = None,
    change_points: Mapping[str, Sequence[ChangePoint]] | None = None,
) -> HistoryPage:
    """Runs oldest first; metrics default to every metric of any run, in first-seen order.
    ``segments`` (segment -> run id -> value of the first metric) are drawn in tag order;
    ``change_points`` (metric -> its change points) keep those of the shown metrics and runs."""
    ordered = tuple(sorted(runs, key=lambda r: r.run.id))
    names = (
        list(metrics) if metrics else list(dict.fromkeys(name for r in ordered for name in r.means))
    )
    by_tag = {tag: dict(values) for tag, values in sorted((segments or {}).items())}
    shown = {r.run.id for r in ordered}
    steps = {
        name: kept
        for name in names
        if (kept := tuple(c for c in (change_points or {}).get(name, ()) if c.run_id in shown))
    }
    return HistoryPage(config, test_set, tuple(names), ordered, dict(targets or {}), by_tag, steps)
