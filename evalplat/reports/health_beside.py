"""The site's query-health pages rendered in a second process, beside the other pages.

Query-health pages are the report site's largest share of work: each reads every config's
window of runs of its test set, the top k of their latest runs and their per-query scores. After
a night of twenty configs on ten thousand queries they took about 40% of the site's time, on
one core, while the machine's other core waited. They depend on nothing else the site renders
(their links go to the root and the index only), so :func:`start_health_pages` plans them in
this process, hands the ones to render to a process of their own, and lets the site go on with
its run, comparison, history and leaderboard pages; the index, which links the health pages,
waits for them (:meth:`HealthPages.paths`).

A second process costs a start (about a second of imports, on the other core) and opens the
store again, so it is used only where it pays and works: more than one core to run on, a store
another process can open (a database file or server, not SQLite in memory), and pages whose
windows hold at least ``BESIDE_ROWS`` query rows in all. Anything else renders the pages here,
as before. The pages are the same either way, byte for byte: the same functions render them
from the same rows (the tests compare both ways). A second process that cannot start or dies
loses nothing: this process renders the pages it did not write.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.reports.health import PlannedPage, plan_health_pages, render_health_pages
from evalplat.reports.page_keys import PageKeys
from evalplat.store.beside import cores, reopenable_url

if TYPE_CHECKING:
    from evalplat.reports.render import Links
    from evalplat.store import RunInfo, Store

# Query rows (queries of each window run, summed over the pages to render) from which a second
# process pays for its start: a twenty-config night on 10k queries has about 12M; the tests'
# sites a few hundred.
BESIDE_ROWS = 200_000

# what the second process sends back: the pages' paths, their keys, how many it rendered
Rendered = tuple[dict[tuple[str, str], str], dict[str, list[object]], int]


class HealthPages:
    """The site's query-health pages, being written here or beside this process."""

    def __init__(
        self,
        store: Store,
        kept: dict[tuple[str, str], str],
        pages: tuple[PlannedPage, ...],
        links: Links,
        keys: PageKeys,
        beside: tuple[ProcessPoolExecutor, Future[Rendered]] | None,
    ) -> None:
        self.store, self.kept, self.pages, self.links, self.keys = store, kept, pages, links, keys
        self.beside = beside
        self.written: dict[tuple[str, str], str] | None = None

    def paths(self) -> dict[tuple[str, str], str]:
        """The pages' paths relative to the site root, once every page is written (waiting
        for the second process when there is one)."""
        if self.written is not None:
            return self.written
        written = dict(self.kept)
        if self.beside is None:
            written |= render_health_pages(self.store, self.pages, self.links, self.keys)
        else:
            pool, future = self.beside
            try:
                rendered, now, count = future.result()
            except BrokenProcessPool:  # it died: the pages are rendered here
                rendered = render_health_pages(self.store, self.pages, self.links, self.keys)
            else:
                self.keys.now.update(now)
                self.keys.rendered += count
            finally:
                pool.shutdown()
            written |= rendered
        self.written = written
        return written


def start_health_pages(
    store: Store,
    pairs: list[tuple[str, str]],
    out: Path,
    links: Links,
    keys: PageKeys,
    infos: dict[int, RunInfo],
) -> HealthPages:
    """Plan the site's query-health pages of ``pairs`` and start rendering those whose key
    changed: in a second process when it pays (see the module), else when their paths are
    asked for. ``infos`` are the store's runs (``Store.list_runs``), for the pages' sizes."""
    plan = plan_health_pages(store, pairs, links, keys)
    rows = sum(
        info.queries_total
        for _, test_set, _, _ in plan.pages
        for run in plan.windows[test_set]
        if (info := infos.get(run.run_id)) is not None
    )
    url = reopenable_url(store)
    if not plan.pages or rows < BESIDE_ROWS or url is None or cores() < 2:
        return HealthPages(store, plan.kept, plan.pages, links, keys, None)
    import multiprocessing

    try:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        future = pool.submit(_render_beside, url, plan.pages, str(out), links)
    except (OSError, RuntimeError):  # no process to be had: render here
        return HealthPages(store, plan.kept, plan.pages, links, keys, None)
    return HealthPages(store, plan.kept, plan.pages, links, keys, (pool, future))


def _render_beside(url: str, pages: Sequence[PlannedPage], out: str, links: Links) -> Rendered:
    """In the second process: render ``pages`` from the store at ``url``; return their paths,
    their keys and how many were rendered."""
    from evalplat.store import Store

    keys = PageKeys(Path(out))
    store = Store.open(url, check=False)
    try:
        written = render_health_pages(store, pages, links, keys)
    finally:
        store.close()
    return written, keys.now, keys.rendered
