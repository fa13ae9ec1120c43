"""The "Offline vs online" page of one test set: does the offline metric predict the online win?

Three parts, from plain data (``offline_online_page`` is pure, ``offline_online_html`` renders):

- a scatter of offline delta against online delta per A/B pair (two versions online on the same
  days, ``evalplat.comparison.agreement.ab_pairs``) for one metric and one KPI, with the pairs
  as a table below it;
- the agreement table: each (offline metric, KPI) pair the project chose, Kendall's tau-b with
  the p-value of its exact permutation test and Spearman's rho across versions, and the share of
  A/B pairs whose deltas agree (``too few versions (N)`` under five versions);
- per query, each version's offline metric next to the click-through of the searches with the
  query's text (``evalplat.comparison.query_clicks``), sortable and filterable like the other
  pages' per-query tables.

``render_offline_online`` writes one page from the store (``evalplat online agreement
--report``); ``write_online_pages`` writes the report site's pages, ``online/<test set>.html``,
for the test sets whose versions have both offline runs and online runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.comparison.agreement import (
    DEFAULT_KPI,
    DEFAULT_METRIC,
    DEFAULT_PERMUTATIONS,
    EXACT_MAX_VERSIONS,
    MIN_VERSIONS,
    ABPair,
    Agreement,
    ab_pairs,
)
from evalplat.inputs.natural_order import natural_key
from evalplat.reports.data import Column, QueryTable
from evalplat.reports.delta_chart import DeltaPoint, delta_scatter

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.comparison.query_clicks import QueryClicks
    from evalplat.reports.page_keys import PageKeys
    from evalplat.reports.render import Links
    from evalplat.store import OnlineAgreement, Store


@dataclass(frozen=True)
class VersionClicks:
    """How much of a version's traffic the per-query table covers."""

    version: str
    searches: int
    unmatched: int
    queries: int  # test-set queries with at least one search


@dataclass(frozen=True)
class OfflineOnlinePage:
    test_set: str
    since: str | None
    versions: tuple[str, ...]
    metric: str  # of the scatter and the per-query table
    kpi: str  # of the scatter
    sign: int  # -1 when exactly one of metric and KPI is lower-is-better
    rows: tuple[Agreement, ...]
    pairs: tuple[tuple[ABPair, bool | None], ...]  # each A/B pair and whether it agrees
    scatter: str  # inline SVG
    table: QueryTable
    coverage: tuple[VersionClicks, ...]
    min_versions: int = MIN_VERSIONS
    exact_max: int = EXACT_MAX_VERSIONS


def offline_online_page(
    agreement: OnlineAgreement,
    offline: pd.DataFrame,
    online: pd.DataFrame,
    clicks: QueryClicks,
    *,
    kpi: str,
    control: str | None = None,
) -> OfflineOnlinePage:
    """Page data (pure): ``offline`` and ``online`` as ``Store.agreement_inputs`` returns them,
    ``clicks`` of ``clicks.metric`` per query; the scatter is of that metric against ``kpi``."""
    from evalplat.metrics import parse

    metric = clicks.metric
    sign = parse(metric).direction * parse(kpi).direction
    found = ab_pairs(offline, online, metric, kpi, control)
    pairs = tuple((pair, pair.agrees(sign)) for pair in found)
    points = [
        DeltaPoint(
            pair.offline_delta,
            pair.online_delta,
            agrees,
            f"{pair.baseline} → {pair.candidate} over {pair.days} shared days: {metric} "
            f"{pair.offline_delta:+.4f}, {kpi} {pair.online_delta:+.4f}",
        )
        for pair, agrees in pairs
    ]
    scatter = delta_scatter(
        points,
        label=f"Offline Δ {metric} against online Δ {kpi} per A/B pair",
        x_label=f"offline Δ {metric}",
        y_label=f"online Δ {kpi}",
    )
    return OfflineOnlinePage(
        test_set=agreement.test_set,
        since=None if agreement.since is None else agreement.since.strftime("%Y-%m-%d %H:%M UTC"),
        versions=tuple(agreement.versions),
        metric=metric,
        kpi=kpi,
        sign=sign,
        rows=tuple(agreement.rows),
        pairs=pairs,
        scatter=scatter,
        table=query_table(clicks),
        coverage=_coverage(clicks),
    )


def query_table(clicks: QueryClicks) -> QueryTable:
    """One row per test-set query; per version, the offline metric, click-through (``CTR``) and
    searches (``n``): a column group per version, the first column's key starting with ``b``
    as the script's group borders expect, its labels short so that five versions fit a page."""
    from evalplat.metrics import parse

    hib = parse(clicks.metric).direction > 0
    columns: list[Column] = [Column("q", "Query", "id"), Column("t", "Text", "text")]
    for i, version in enumerate(clicks.versions):
        columns += [
            Column(f"b{i}", clicks.metric, "num", higher_is_better=hib, group=version),
            Column(f"r{i}", "CTR", "num", group=version),  # short: a group per version fits
            Column(f"n{i}", "n", "int", group=version),
        ]
    cells: dict[str, dict[str, tuple[float | None, float | None, int]]] = {}
    texts: dict[str, str] = {}
    frame = clicks.rows
    for version, query, text, value, searches, ctr in zip(
        frame["version"], frame["query_id"], frame["text"], frame["value"], frame["searches"],
        frame["ctr"], strict=True,
    ):  # fmt: skip
        texts[str(query)] = str(text)
        cells.setdefault(str(query), {})[str(version)] = (
            None if value != value else float(value),
            None if ctr != ctr else float(ctr),
            int(searches),
        )
    rows = []
    for query in sorted(cells, key=natural_key):
        row: list[str | float | int | None] = [query, texts[query]]
        for version in clicks.versions:
            value, ctr, searches = cells[query].get(version, (None, None, 0))
            row += [value, ctr, searches]
        rows.append(tuple(row))
    return QueryTable(tuple(columns), tuple(rows), "q", False)


def _coverage(clicks: QueryClicks) -> tuple[VersionClicks, ...]:
    frame = clicks.rows
    return tuple(
        VersionClicks(
            version=version,
            searches=clicks.searches.get(version, 0),
            unmatched=clicks.unmatched.get(version, 0),
            queries=int(((frame["version"] == version) & (frame["searches"] > 0)).sum()),
        )
        for version in clicks.versions
    )


def offline_online_html(page: OfflineOnlinePage, links: Links | None = None) -> str:
    """The page's HTML (pure): every user text escaped by the template or the chart."""
    from evalplat.reports.render import _render, _safe

    return _render(
        "offline_online.html", links, page=page, chart=_safe(page.scatter), table=page.table
    )


def gather_offline_online(
    store: Store,
    test_set: str,
    *,
    since: datetime | None = None,
    metrics: Sequence[str] | None = None,
    kpis: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    samples: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    agreement: OnlineAgreement | None = None,
    control: str | None = None,
) -> OfflineOnlinePage:
    """The page of ``test_set`` from the store; ``agreement`` when already computed with the
    same arguments (``Store.online_agreement`` says which pairs its rows are). The scatter and
    the per-query table are of the first row's metric and KPI (nDCG@10 and online:CTR when
    there is no row). ``control``: the control arm (``NAME`` or ``NAME@VER``, the project's
    ``[online] baseline``), each A/B pair's Δ is taken against it when the pair holds it."""
    if agreement is None:
        agreement = store.online_agreement(
            test_set, since=since, metrics=metrics, kpis=kpis, pairs=pairs, samples=samples,
            seed=seed,
        )  # fmt: skip
    offline, online = store.agreement_inputs(test_set, since)
    first = agreement.rows[0] if agreement.rows else None
    metric = first.metric if first else DEFAULT_METRIC
    kpi = first.kpi if first else DEFAULT_KPI
    clicks = store.query_clicks(test_set, metric, versions=agreement.versions, since=since)
    arm = _control_version(store, control)
    return offline_online_page(agreement, offline, online, clicks, kpi=kpi, control=arm)


def _control_version(store: Store, control: str | None) -> str | None:
    """``NAME@VER`` of the control arm: the version that served its latest day, as the night
    compares it (:mod:`evalplat.store.online_arms`); before any day, ``NAME``'s current version
    (or the version named). None without a control, or one that is not a config."""
    from evalplat.errors import NotFoundError
    from evalplat.store.online_arms import control_day

    if control is None:
        return None
    try:
        day = control_day(store, control)
        found = store.config_version(control) if day is None else None
    except NotFoundError:
        return None
    if day is not None:
        return f"{day.config}@{day.config_version}"
    assert found is not None
    return f"{found.name}@{found.version}"


def render_offline_online(page: OfflineOnlinePage, out: str | Path) -> Path:
    """Write the page to the file ``out``."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(offline_online_html(page), encoding="utf-8")
    return path


def write_online_pages(
    store: Store,
    test_sets: Sequence[str],
    out: Path,
    links: Links,
    keys: PageKeys,
    pairs: Sequence[tuple[str, str]] | None = None,
    control: str | None = None,
) -> dict[str, str]:
    """The site's pages, one per test set with at least one version run offline on it and
    online, of the (metric, KPI) ``pairs`` the project chose (``Store.online_agreement``'s
    default without); returns {test set: path relative to the site root}. Keyed by their
    gathered data (events and click judgments are not stamped): rendering is what is saved."""
    from evalplat.reports.render import slug

    written: dict[str, str] = {}
    for test_set in test_sets:
        page = gather_offline_online(store, test_set, pairs=pairs, control=control)
        if not page.versions:
            continue
        path = f"online/{slug(test_set)}.html"
        material = ("online", page, links.root, links.index)
        keys.write(path, material, lambda: offline_online_html(page, links))  # noqa: B023
        written[test_set] = path
    return written
