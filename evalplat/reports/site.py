"""The report site: every page of the store's configs and the index that leads to them.

Written by :func:`write_site` (``evalplat report site``, and the nightly job after each night);
the layout is described in :mod:`evalplat.reports.render`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.reports.data import HistoryPage, SiteEntry, SiteIndex
from evalplat.reports.history_render import history_html
from evalplat.reports.render import (
    RUN_PAGES_PER_HISTORY,
    Links,
    _write,
    comparison_html,
    index_html,
    run_html,
    slug,
)

if TYPE_CHECKING:
    from evalplat.store import Store


def write_site(store: Store, out_dir: str | Path) -> Path:
    """Write the whole report site into ``out_dir``; return the path of ``index.html``.

    Per (config, test set): a history page, pages of its ``RUN_PAGES_PER_HISTORY`` latest runs,
    and the page of the latest run's stored comparison with its baseline when there is one (not
    for online runs: their comparisons are over sessions, shown on the history page).
    """
    from evalplat.reports.gather import (
        TestSetCache,
        gather_comparison,
        gather_history,
        gather_run,
        open_alerts,
    )
    from evalplat.reports.health import write_health_pages
    from evalplat.reports.online_page import write_online_pages
    from evalplat.store.testsets import ONLINE_TEST_SET

    out = Path(out_dir)
    cache = TestSetCache(store)
    configs = sorted({info.config for info in store.list_runs()})
    histories = [page for config in configs for page in gather_history(store, config)]
    run_ids: set[int] = set()
    comparisons: dict[int, str] = {}
    entries: list[SiteEntry] = []
    newest = ""
    pairs = [(h.config, h.test_set) for h in histories]
    health = write_health_pages(store, pairs, out, Links("../", index=True))
    for history in histories:
        run_ids.update(h.run.id for h in history.runs[-RUN_PAGES_PER_HISTORY:])
        latest = history.runs[-1]
        newest = max(newest, latest.run.started_at)
        history_path = f"history/{slug(history.config)}--{slug(history.test_set)}.html"
        comparison_id = latest.comparison_id
        compared = None if comparison_id is None else store.load_comparison(comparison_id)
        # an online comparison (over sessions) has no per-query page; its history shows it
        if comparison_id is not None and compared is not None and compared.per_query is not None:
            path = f"compare/compare-{comparison_id}.html"
            comparisons[latest.run.id] = path
            page = gather_comparison(store, compared, cache=cache)
            links = Links("../", frozenset(run_ids), {}, history_path, index=True)
            _write(out / path, comparison_html(page, links))
        primary = history.metrics[0] if history.metrics else None
        baseline = next((h.run.id for h in history.runs if h.is_baseline), None)
        entries.append(
            SiteEntry(
                latest=latest.run,
                primary=primary,
                primary_value=None if primary is None else latest.means.get(primary),
                trend=tuple(h.means.get(primary) for h in history.runs[-30:]) if primary else (),
                verdict=latest.verdict,
                run_link=f"runs/run-{latest.run.id}.html",
                history_link=history_path,
                comparison_link=comparisons.get(latest.run.id),
                baseline_id=baseline,
                health_link=health.get((history.config, history.test_set)),
                targets=_target_counts(history, latest.run.id),
            )
        )
    frozen_runs = frozenset(run_ids)
    for history in histories:
        history_path = f"history/{slug(history.config)}--{slug(history.test_set)}.html"
        links = Links("../", frozen_runs, comparisons, None, index=True)
        _write(out / history_path, history_html(history, links))
        for h in history.runs[-RUN_PAGES_PER_HISTORY:]:
            page_links = Links("../", frozen_runs, comparisons, history_path, index=True)
            run_page = gather_run(store, h.run.id, cache=cache)
            _write(out / f"runs/run-{h.run.id}.html", run_html(run_page, page_links))
    test_sets = sorted({h.test_set for h in histories})
    online = (  # only when online runs exist: a site without them reads nothing more
        write_online_pages(store, [t for t in test_sets if t != ONLINE_TEST_SET], out,
                           Links("../", index=True))
        if ONLINE_TEST_SET in test_sets else {}
    )  # fmt: skip
    index = SiteIndex(tuple(entries), tuple(open_alerts(store)), newest, tuple(online.items()))
    return _write(out / "index.html", index_html(index))


def _target_counts(history: HistoryPage, run_id: int) -> dict[str, int]:
    """``{"met": 2, "at_risk": 0, "missed": 1}`` for a run's kept target verdicts, or ``{}``."""
    verdicts = [t.verdicts[run_id] for t in history.targets.values() if run_id in t.verdicts]
    if not verdicts:
        return {}
    return {v: verdicts.count(v) for v in ("met", "at_risk", "missed")}
