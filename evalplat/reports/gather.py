"""Fetch each page's inputs from the store and hand them to the pure builders in ``data``.

Kept apart from :mod:`evalplat.reports.data` so that the page builders stay testable without a
database. Only store methods are used here (never a session). Test set content is loaded once
per version and shared between pages of one site (``TestSetCache``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.reports.compared import (
    ComparisonPage,
    comparison_page,
    document_title,
    side_by_side_queries,
)
from evalplat.reports.data import (
    HistoryPage,
    HistoryRun,
    RunHeader,
    RunPage,
    TargetLine,
    format_time,
    history_page,
    run_page,
)
from evalplat.reports.index_data import AlertRow, LastNight, NightEventRow

if TYPE_CHECKING:
    from datetime import datetime

    import pandas as pd

    from evalplat.comparison.targets import Target, TargetVerdict
    from evalplat.comparison.verdicts import ComparisonResult
    from evalplat.store import Store
    from evalplat.store.alerts import AlertInfo
    from evalplat.store.change_points import ChangePoints
    from evalplat.store.history import HistoryPoint
    from evalplat.store.runs import RunInfo


class TestSetCache:
    """Query texts, judgments and document titles per test set version (``NAME@VER``), loaded
    on first use."""

    __test__ = False

    def __init__(self, store: Store) -> None:
        self._store = store
        self._loaded: dict[str, tuple[dict[str, str], pd.DataFrame, Mapping[str, str]]] = {}

    def get(self, name: str, version: int) -> tuple[dict[str, str], pd.DataFrame]:
        texts, judgments, _ = self._load(name, version)
        return texts, judgments

    def titles(self, name: str, version: int) -> Mapping[str, str]:
        """Doc id → title (or first words) of the version's documents; empty without any."""
        return self._load(name, version)[2]

    def _load(
        self, name: str, version: int
    ) -> tuple[dict[str, str], pd.DataFrame, Mapping[str, str]]:
        key = f"{name}@{version}"
        if key not in self._loaded:
            # documents are not loaded: a page shows the titles of a few hundred at most
            content = self._store.load_test_set(key, documents=False)
            texts = {
                str(q): str(t or "")
                for q, t in content.queries[["query_id", "text"]].itertuples(index=False)
            }
            count = self._store.test_set_version(key).documents
            titles: Mapping[str, str] = _Titles(self._store, key, count) if count else {}
            # without a grade rule the stored judgments hold one grade per pair (their key):
            # they are the qrels already, without looking for repeats among a million rows
            qrels = content.judgments if content.grade_rule is None else content.qrels
            self._loaded[key] = (texts, qrels, titles)
        return self._loaded[key]


class _Titles(Mapping[str, str]):
    """Titles looked up in the store on demand, each document once (a page shows a few hundred
    of a corpus' documents)."""

    def __init__(self, store: Store, key: str, count: int) -> None:
        self._store = store
        self._key = key
        self._count = count
        self._seen: dict[str, str | None] = {}

    def fetch(self, doc_ids: Iterable[str]) -> None:
        """Look the titles of ``doc_ids`` up in one read (a page's hits, before it asks)."""
        wanted = [d for d in dict.fromkeys(doc_ids) if d not in self._seen]
        if not wanted:
            return
        found = self._store.document_text(self._key, wanted)
        for doc_id in wanted:
            text = found.get(doc_id)
            self._seen[doc_id] = None if text is None else document_title(*text)

    def __getitem__(self, doc_id: str) -> str:
        self.fetch([doc_id])
        title = self._seen[doc_id]
        if title is None:
            raise KeyError(doc_id)
        return title

    def __iter__(self) -> Iterator[str]:
        documents = self._store.load_test_set(self._key).documents
        return iter([] if documents is None else [str(d) for d in documents["doc_id"]])

    def __len__(self) -> int:
        return self._count


def run_header(store: Store, info: RunInfo) -> RunHeader:
    label = store.config_version(f"{info.config}@{info.config_version}").label
    return RunHeader.from_info(info, label)


def gather_comparison(
    store: Store,
    result: ComparisonResult,
    *,
    k: int = 10,
    cache: TestSetCache | None = None,
) -> ComparisonPage:
    """The comparison page of ``result`` (which must name its two runs, as stored ones do)."""
    if result.baseline_run_id is None or result.candidate_run_id is None:
        raise InputError("the comparison does not name its runs; compare stored runs to report it")
    cache = cache or TestSetCache(store)
    infos = [store.run_info(result.baseline_run_id), store.run_info(result.candidate_run_id)]
    if result.per_query is None:
        raise InputError("the comparison has no per-query scores; load it from the store")
    candidate = infos[1]
    version = candidate.scored_against_version or candidate.test_set_version
    texts, judgments = cache.get(candidate.test_set, version)
    movers = result.options.movers or 10
    shown = side_by_side_queries(result, movers=movers)
    results = [_results(store, info, shown) for info in infos]
    titles = cache.titles(candidate.test_set, version)
    if isinstance(titles, _Titles):  # the hits shown, looked up together
        titles.fetch(_top_docs(results, k))
    return comparison_page(
        result,
        baseline=run_header(store, infos[0]),
        candidate=run_header(store, infos[1]),
        query_text=texts,
        judgments=judgments,
        baseline_results=results[0],
        candidate_results=results[1],
        k=k,
        movers=movers,
        titles=titles,
    )


def _top_docs(frames: Sequence[pd.DataFrame | None], k: int) -> list[str]:
    """The doc ids of each query's first ``k`` results in ``frames``, as a page shows them."""
    docs: list[str] = []
    for frame in frames:
        if frame is not None and len(frame):
            top = frame.sort_values(["query_id", "rank"]).groupby("query_id").head(k)
            docs += [str(d) for d in top["doc_id"]]
    return docs


def _results(store: Store, info: RunInfo, queries: Sequence[str]) -> pd.DataFrame | None:
    if info.results_pruned_at is not None:
        return None  # kept scores only: the page says the ranked results are gone
    return store.load_results(info.id, queries=queries)


def gather_run(store: Store, run_ref: str | int, *, cache: TestSetCache | None = None) -> RunPage:
    from evalplat.comparison.facts import RunRecords, run_facts

    info = store.run_info(run_ref)
    cache = cache or TestSetCache(store)
    texts, _ = cache.get(info.test_set, info.scored_against_version or info.test_set_version)
    outcomes = store.run_outcomes(info.id)
    page = run_page(
        run_header(store, info),
        scores=store.evaluation_scores(info.id),
        outcomes=outcomes,
        query_text=texts,
        means=info.means,
        error=info.error,
        order=[str(m) for m in info.options.get("metrics") or []],
    )
    # the facts read the texts of the version the run searched, as a comparison's do
    searched, _ = cache.get(info.test_set, info.test_set_version)
    ids = [str(q) for q in outcomes["query_id"].tolist()]
    records = RunRecords(
        info.id,
        dict(zip(ids, (str(s) for s in outcomes["status"].tolist()), strict=True)),
        dict(zip(ids, (int(n) for n in outcomes["results_count"].tolist()), strict=True)),
        {q: searched[q] for q in ids if q in searched},
    )
    return replace(page, facts=tuple(run_facts(records)))


def gather_history(
    store: Store,
    config: str,
    test_set: str | None = None,
    *,
    limit: int = 200,
    targets: Sequence[Target] | None = None,
    change_points: dict[str, ChangePoints] | None = None,
) -> list[HistoryPage]:
    """One history page per test set the config ran on (or only ``test_set``), each with at
    most the ``limit`` most recent finished runs. ``targets``: the project's, when known; a
    page draws the lines only of those in force for the config and test set now (a target
    since removed keeps its kept verdicts, but no line). ``change_points``: test set -> its
    ``Store.change_points``, filled as read, so that a site reads each test set's once."""
    from evalplat.comparison.targets import applicable
    from evalplat.store.testsets import ONLINE_TEST_SET

    points = store.history(config, test_set)
    infos = {info.id: info for info in store.list_runs(config)}
    labels: dict[int, str | None] = {}
    by_test_set: dict[str, list[HistoryRun]] = {}
    chosen: dict[str, list[str]] = {}  # metrics as the latest run asked for them, per test set
    for point in points:
        info = infos.get(point.run_id)
        if info is None:
            continue
        if point.config_version not in labels:
            labels[point.config_version] = point.label
        header = RunHeader.from_info(info, point.label)
        asked = info.options.get("metrics") if isinstance(info.options, dict) else None
        if isinstance(asked, list) and asked:
            chosen[point.test_set] = [str(m) for m in asked]
        by_test_set.setdefault(point.test_set, []).append(
            HistoryRun(
                header,
                dict(point.means),
                point.is_baseline,
                point.verdict,
                point.comparison_id,
                point.judgment_version,
                point.scored_on,
            )
        )
    kept = store.target_verdicts(list(infos))
    if test_set is not None and test_set not in by_test_set:
        raise InputError(f"config '{config}' has no finished run on test set '{test_set}'")
    pages = []
    for name, runs in sorted(by_test_set.items()):
        runs = runs[-limit:]
        present = {metric for r in runs for metric in r.means}
        # online runs scored before they recorded their order lead with online:CTR
        wanted = chosen.get(name) or (["online:CTR"] if name == ONLINE_TEST_SET else [])
        order = [m for m in wanted if m in present]
        order += sorted(present - set(order))
        shown = [p for p in points if p.test_set == name and p.run_id in {r.run.id for r in runs}]
        segments = _segment_lines(store, shown, order[0]) if order else {}
        in_force = None if targets is None else {
            t.measured for t in applicable(targets, config, name)
        }  # fmt: skip
        lines = with_targets(runs, kept, in_force)
        known = {} if change_points is None else change_points
        if name not in known:
            known[name] = store.change_points(name)
        steps = known[name].get(config, {})
        pages.append(history_page(config, name, runs, order, lines, segments, steps))
    return pages


def _segment_lines(
    store: Store, points: Sequence[HistoryPoint], metric: str
) -> dict[str, dict[int, float]]:
    """``metric`` per segment and run (``Store.history_segments``): tag -> run id -> value."""
    frame, _ = store.history_segments(points, metric)
    lines: dict[str, dict[int, float]] = {}
    for row in frame.to_dict("records"):
        lines.setdefault(str(row["segment"]), {})[int(row["run_id"])] = float(row["value"])
    return lines


# The metric column for the alert kinds that are not plain regressions.
_ALERT_LABELS = {
    "needs_judgments": "{} (needs judgments)",
    "operational": "run failed",
    "target": "{} (target)",
    "drift": "{} (drift)",
}


def with_targets(
    runs: list[HistoryRun],
    kept: dict[int, list[TargetVerdict]],
    in_force: Collection[str] | None = None,
) -> dict[str, TargetLine]:
    """Per metric (``nDCG@10``) or metric and segment (``nDCG@10[tail]``), the target of the
    newest run checked against one, and every run's verdict and figure; only the targets
    ``in_force`` (by ``Target.measured``) when given."""
    lines: dict[str, TargetLine] = {}
    for history_run in runs:
        for v in kept.get(history_run.run.id, []):
            key = v.target.measured
            if in_force is not None and key not in in_force:
                continue
            line = lines.get(key)
            verdicts = dict(line.verdicts) if line is not None else {}
            figures = dict(line.figures) if line is not None else {}
            verdicts[history_run.run.id] = v.verdict
            figures[history_run.run.id] = v.value
            lines[key] = TargetLine(
                v.target.bound, v.target.value, verdicts, v.target.metric, v.target.segment, figures
            )
    return lines


def open_alerts(store: Store) -> list[AlertRow]:
    """Alerts that still need attention (open or acknowledged), newest first."""
    return [
        alert_row(alert) for alert in store.list_alerts() if alert.state in ("open", "acknowledged")
    ]


def last_night(store: Store) -> LastNight | None:
    """The latest night and the alerts it opened, resolved and retired (``Store.last_night``),
    None before the first night."""
    night = store.last_night()
    if night is None:
        return None
    events = tuple(
        NightEventRow(e.event, format_time(e.at), alert_row(e.alert),
                      e.alert.note if e.event != "opened" else None)
        for e in night.events
    )  # fmt: skip
    finished = None if night.finished_at is None else format_time(night.finished_at)
    return LastNight(format_time(night.started_at), finished, events)


def alert_row(alert: AlertInfo) -> AlertRow:
    """An alert as the index shows it."""
    return AlertRow(
        id=alert.id,
        config=alert.config,
        test_set=alert.test_set,
        metric=_ALERT_LABELS.get(alert.kind, "{}").format(alert.metric),
        state=alert.state,
        opened_at=format_time(alert.opened_at),
        summary=_alert_summary(alert.details),
        kind=alert.kind,
        comparison_id=alert.last_comparison_id,
        run_id=_candidate_run(alert.details),
    )


def ended_subjects(store: Store) -> dict[tuple[str, str], tuple[datetime, str]]:
    """(config, test set) → (when, why) of the subjects that ended and have no active alert
    since: those whose alerts were retired because the subject itself ended
    (``Store.retire(..., ended=True)``, the night's retirement; the latest such retirement of
    each), and those the nights ran and the latest night of their project file no longer runs
    (``Store.ended_pairs``; a config dropped without an alert)."""
    ended: dict[tuple[str, str], tuple[datetime, str]] = dict(store.ended_pairs())
    active: set[tuple[str, str]] = set()
    for alert in store.list_alerts():
        key = (alert.config, alert.test_set)
        if alert.state in ("pending", "open", "acknowledged"):
            active.add(key)
        elif alert.state == "retired" and (alert.details or {}).get("ended"):
            when = alert.retired_at or alert.opened_at
            if key not in ended or ended[key][0] < when:
                ended[key] = (when, alert.note or "")
    return {key: found for key, found in ended.items() if key not in active}


def _candidate_run(details: dict[str, Any] | None) -> int | None:
    run = (details or {}).get("candidate_run")
    return run if isinstance(run, int) and not isinstance(run, bool) else None


def _alert_summary(details: dict[str, Any] | None) -> str:
    """``0.4120 → 0.3850 (-0.0270), p = 0.003`` from the stored details, whatever is there."""
    if not details:
        return ""
    if isinstance(details.get("error"), str):  # an operational alert: why the run failed
        return str(details["error"])
    if isinstance(details.get("target"), str):  # a target or drift alert: its own line
        return str(details["target"])
    from evalplat.metrics.numbers import delta_text, p_text, value_text

    parts = []
    metric = str(details.get("metric") or "score")
    baseline, candidate, delta = (details.get(k) for k in ("baseline", "candidate", "delta"))
    if isinstance(baseline, int | float) and isinstance(candidate, int | float):
        parts.append(f"{value_text(baseline, metric)} → {value_text(candidate, metric)}")
    if isinstance(delta, int | float):
        parts.append(f"Δ {delta_text(delta, metric)}")
    p_value = details.get("p_corrected", details.get("p_value"))
    if isinstance(p_value, int | float):
        parts.append(f"p = {p_text(p_value)}")
    return ", ".join(parts)
