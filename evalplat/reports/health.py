"""The query-health page of one config on one test set: the monthly read, as a report page.

``health_page`` turns a :class:`~evalplat.comparison.query_health.QueryHealth` into page data
(the per-query table of the other pages, sortable and filterable, plus the sections and the two
ranked lists), ``health_html`` renders it (pure, deterministic), ``render_health`` writes one
page and ``write_health_pages`` the pages of the report site, ``health/<config>--<test>.html``.
The two lists are offered as CSV downloads embedded in the page (``data:`` links: the page
stays one file that loads nothing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from evalplat.comparison.query_health import records
from evalplat.inputs.natural_order import natural_key
from evalplat.metrics.numbers import counted
from evalplat.reports.data import Column, QueryTable

if TYPE_CHECKING:
    from evalplat.comparison.query_health import QueryHealth
    from evalplat.reports.page_keys import PageKeys
    from evalplat.reports.render import Links
    from evalplat.store import Store
    from evalplat.store.site_stamps import HealthWindowRun

SECTION_ROWS = 50  # rows shown per section; the table below has every query
SITE_WINDOW = "30d"
_SITE_SINCE = timedelta(days=30)

# a query-health page to render: (config, test set, its path in the site, its key material)
PlannedPage = tuple[str, str, str, object]


@dataclass(frozen=True)
class SectionRow:
    query_id: str
    text: str
    mean: float | None
    last: float | None
    detail: str


@dataclass(frozen=True)
class HealthPage:
    health: QueryHealth
    table: QueryTable
    sections: tuple[tuple[str, str, tuple[SectionRow, ...], int], ...]  # key, title, rows, total
    fix: tuple[dict[str, Any], ...]
    judge: tuple[dict[str, Any], ...]
    fix_csv_link: str
    judge_csv_link: str


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def health_page(health: QueryHealth) -> HealthPage:
    """Page data of ``health`` (pure)."""
    table = health.table
    hib = health.higher_is_better
    columns = (
        Column("q", "Query", "id"),
        Column("t", "Text", "text"),
        Column("mean", "mean", "num"),
        Column("last", "last", "num"),
        Column("slope", "slope / run", "delta", higher_is_better=hib),
        Column("flips", "flips", "int"),
        Column("zero", "zero results", "num"),
        Column("unjudged", f"unjudged @{health.k}", "num"),
        Column("weight", "weight", "num"),
        Column("tags", "tags", "text"),
        Column("gap", "gap to best", "num"),
    )
    rows = [
        (str(q), str(t), _number(m), _number(la), _number(s), int(f), _number(z), _number(u),
         _number(w), " ".join(tags), _number(g))
        for q, t, m, la, s, f, z, u, w, tags, g in zip(
            table["query_id"], table["query"], table["mean"], table["last"], table["slope"],
            table["flips"], table["zero_result_rate"], table["unjudged_share"], table["weight"],
            table["tags"], table["gap"], strict=True,
        )
    ]  # fmt: skip
    rows.sort(key=lambda r: natural_key(r[0]))
    by_id = {r[0]: r for r in rows}

    def section(ids: tuple[str, ...], detail: Any) -> tuple[tuple[SectionRow, ...], int]:
        shown = tuple(
            SectionRow(q, by_id[q][1], by_id[q][2], by_id[q][3], detail(by_id[q]))
            for q in ids[:SECTION_ROWS]
            if q in by_id
        )
        return shown, len(ids)

    def flips(row: tuple[Any, ...]) -> str:
        return f"{counted(row[5], 'flip')} over {counted(len(health.runs), 'run')}"

    def zero(row: tuple[Any, ...]) -> str:
        return "no results in any run"

    def best(row: tuple[Any, ...]) -> str:
        return "every config at or below the floor"

    sections = tuple(
        (key, title, *section(ids, detail))
        for key, title, ids, detail in (
            ("weakest", "Weakest queries", health.weakest, flips),
            ("strongest", "Strongest queries", health.strongest, flips),
            ("gaps", "Content or judgment gaps: no config gets these right", health.gaps, best),
            (
                "unstable",
                "Unstable: they flip between good and bad within one config version",
                health.unstable,
                flips,
            ),
            ("never", "Never answered", health.never_answered, zero),
        )
    )
    return HealthPage(
        health=health,
        table=QueryTable(columns, tuple(rows), "q", False),
        sections=sections,
        fix=tuple(records(health.fix.head(SECTION_ROWS))),
        judge=tuple(records(health.judge.head(SECTION_ROWS))),
        fix_csv_link="data:text/csv;charset=utf-8," + quote(health.annotation_csv("fix")),
        judge_csv_link="data:text/csv;charset=utf-8," + quote(health.annotation_csv("judge")),
    )


def health_html(page: HealthPage, links: Links | None = None) -> str:
    """The page's HTML (pure): every user text escaped by the template."""
    from evalplat.reports.render import _render

    return _render("query_health.html", links, page=page, health=page.health, table=page.table)


def render_health(
    store: Store,
    config: str,
    test_set: str,
    out: str | Path,
    *,
    since: str = SITE_WINDOW,
    metric: str | None = None,
) -> Path:
    """Write the query-health page of ``config`` on ``test_set`` over ``since``."""
    from evalplat.comparison.query_health import parse_since, query_health

    inputs = store.query_health_inputs(config, test_set, parse_since(since), metric, window=since)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(health_html(health_page(query_health(inputs))), encoding="utf-8")
    return path


def write_health_pages(
    store: Store, pairs: list[tuple[str, str]], out: Path, links: Links, keys: PageKeys
) -> dict[tuple[str, str], str]:
    """The site's query-health pages, one per (config, test set) with a run in the window;
    returns their paths relative to the site root (:func:`plan_health_pages` then
    :func:`render_health_pages`)."""
    plan = plan_health_pages(store, pairs, links, keys)
    return plan.kept | render_health_pages(store, plan.pages, links, keys)


@dataclass(frozen=True)
class HealthPlan:
    """The site's query-health pages: those that keep their files, by (config, test set), and
    those to render, as (config, test set, path, key material)."""

    kept: dict[tuple[str, str], str]
    pages: tuple[PlannedPage, ...]
    windows: dict[str, tuple[HealthWindowRun, ...]]


def plan_health_pages(
    store: Store, pairs: list[tuple[str, str]], links: Links, keys: PageKeys
) -> HealthPlan:
    """Which of the pairs' query-health pages keep their files and which are rendered.

    A page is keyed by the window's runs of its test set (``Store.health_window``: every
    config's, since the gaps and the top k compare configs), their latest evaluations, pruning
    and target checks: while none of them changes, the page keeps its file unread. A pair
    without a finished run in the window has no page."""
    from evalplat.reports.render import slug

    kept: dict[tuple[str, str], str] = {}
    pages: list[PlannedPage] = []
    windows = {t: store.health_window(t, _SITE_SINCE) for t in dict.fromkeys(t for _, t in pairs)}
    for config, test_set in pairs:
        window = windows[test_set]
        if not any(run.config == config for run in window):  # no finished run in the window
            continue
        path = f"health/{slug(config)}--{slug(test_set)}.html"
        material = ("health", config, test_set, SITE_WINDOW, window, links.root, links.index)
        if keys.keep(path, material):
            kept[(config, test_set)] = path
        else:
            pages.append((config, test_set, path, material))
    return HealthPlan(kept, tuple(pages), windows)


def render_health_pages(
    store: Store, pages: Sequence[PlannedPage], links: Links, keys: PageKeys
) -> dict[tuple[str, str], str]:
    """Render and write the planned ``pages`` (``HealthPlan.pages``, keyed with ``links``)
    under ``keys``; return the paths of those written (a pair none of whose window runs has
    scores has no page)."""
    from evalplat.comparison.health_judge import JudgeLists
    from evalplat.comparison.query_health import query_health
    from evalplat.errors import NotFoundError

    written: dict[tuple[str, str], str] = {}
    judge_lists = JudgeLists()  # every config's page of a test set ranks the same top k
    for config, test_set, path, material in pages:
        try:
            inputs = store.query_health_inputs(config, test_set, _SITE_SINCE, window=SITE_WINDOW)
        except NotFoundError:  # no run of the window has scores: no page
            continue
        health = query_health(inputs, judge_lists=judge_lists)
        keys.put(path, material, health_html(health_page(health), links))
        written[(config, test_set)] = path
    return written
