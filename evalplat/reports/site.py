"""The report site: every page of the store's configs and the index that leads to them.

Written by :func:`write_site` (``evalplat report site``, and the nightly job after each night);
the layout is described in :mod:`evalplat.reports.render`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.reports.data import HistoryPage, format_time
from evalplat.reports.history_render import history_html
from evalplat.reports.index_data import AlertRow, EndedRow, SiteEntry, SiteIndex
from evalplat.reports.page_keys import PageAhead, PageKeys, code_digest
from evalplat.reports.render import (
    RUN_PAGES_PER_HISTORY,
    Links,
    comparison_html,
    index_html,
    run_html,
    slug,
)

if TYPE_CHECKING:
    from evalplat.comparison.targets import Target
    from evalplat.comparison.verdicts import Gate
    from evalplat.reports.gather import TestSetCache
    from evalplat.store import RunInfo, Store
    from evalplat.store.change_points import ChangePoints
    from evalplat.store.site_stamps import SiteStamps


# A sweep's settings are configs ``CONFIG~param=value,...`` (``evalplat.running.sweep_plan``):
# the index leaves them out (dozens of rows a week would bury the configs the team runs); the
# test set's leaderboard page, linked from the index, ranks them with every other config.
SETTING_MARK = "~"


def write_site(
    store: Store,
    out_dir: str | Path,
    agreement: Sequence[tuple[str, str]] | None = None,
    ahead: Iterable[PageAhead] = (),
    targets: Sequence[Target] | None = None,
    control: str | None = None,
    gates_of: Callable[[str], list[Gate]] | None = None,
) -> Path:
    """Write the whole report site into ``out_dir``; return the path of ``index.html``.
    ``targets``: the project's, whose lines in force the history pages draw (None: every
    kept target verdict's). ``gates_of``: the gates the project states for a test set, which
    its leaderboard page gates by, as ``leaderboard --project`` does (None, or none stated:
    the default rule set).

    Per (config, test set): a history page, pages of its ``RUN_PAGES_PER_HISTORY`` latest runs,
    and the page of the comparison that gated its latest run (against its own or its
    ``compare_to`` config's baseline) when there is one. Every open or acknowledged alert's
    comparison has a page too, and its index row links it, as does each alert the latest night
    opened, resolved or retired (``Store.last_night``). Online comparisons (over sessions)
    have no page of their own: the history page shows them. The "Offline vs online" pages show
    the (offline metric, KPI) pairs of ``agreement`` (the project's; a default without), each
    A/B pair's Δ against the ``control`` arm (the project's ``[online] baseline``). Per
    test set, a leaderboard of every config's latest run (``evalplat.reports.leaderboard_page``).
    A sweep's settings have history and run pages and leaderboard rows, but no index row.
    ``ahead``: comparison pages rendered before (``comparison_page_ahead``), each written as it
    is when it was rendered from what the site would render it from now.

    A page whose key did not change since the last write keeps its file
    (``evalplat.reports.page_keys``): run, comparison, query-health and leaderboard pages are
    keyed by the stamps of what they show, read before their data, so a kept one is neither
    gathered nor rendered; the others by their gathered data.
    """
    from evalplat.reports.gather import (
        TestSetCache,
        ended_subjects,
        gather_history,
        gather_run,
        last_night,
        open_alerts,
    )
    from evalplat.reports.health_beside import start_health_pages
    from evalplat.reports.interleaved_page import write_interleaved_page
    from evalplat.reports.leaderboard_page import write_leaderboard_pages
    from evalplat.reports.online_page import write_online_pages
    from evalplat.store.testsets import ONLINE_TEST_SET

    out = Path(out_dir)
    infos = {info.id: info for info in store.list_runs()}
    configs = sorted({info.config for info in infos.values()})
    change_points: dict[str, ChangePoints] = {}  # per test set, read once for all its configs
    histories = [
        page
        for config in configs
        for page in gather_history(store, config, targets=targets, change_points=change_points)
    ]
    run_ids = frozenset(h.run.id for p in histories for h in p.runs[-RUN_PAGES_PER_HISTORY:])
    history_of = {h.run.id: _history_path(p) for p in histories for h in p.runs}
    keys = PageKeys(out, ahead)
    stamps = _Stamps(store.site_stamps(), infos)
    pages = _ComparisonPages(store, out, TestSetCache(store), run_ids, history_of, keys, stamps)
    # query health is of test sets of queries: an online run's units are sessions
    pairs = [(h.config, h.test_set) for h in histories if h.test_set != ONLINE_TEST_SET]
    # rendered beside the other pages when a second process pays (``health_beside``)
    health = start_health_pages(store, pairs, out, Links("../", index=True), keys, infos)
    entries: list[SiteEntry] = []
    newest = ""
    current = {c.name: c.version for c in store.list_configs()}
    for history in histories:
        newest = max(newest, history.runs[-1].run.started_at)
        # the row is the config's current version (a rollback included): its latest run
        latest = next((h for h in reversed(history.runs)
                       if h.run.config_version == current.get(history.config)),
                      history.runs[-1])  # fmt: skip
        if SETTING_MARK in history.config:  # a sweep's setting: on the leaderboard, not a row
            continue
        compared = pages.write(latest.comparison_id)
        primary = history.metrics[0] if history.metrics else None
        own = next((h.run.id for h in history.runs if h.is_baseline), None)
        entries.append(
            SiteEntry(
                latest=latest.run,
                primary=primary,
                primary_value=None if primary is None else latest.means.get(primary),
                trend=tuple(h.means.get(primary) for h in history.runs[-30:]) if primary else (),
                verdict=latest.verdict,
                run_link=f"runs/run-{latest.run.id}.html",
                history_link=_history_path(history),
                comparison_link=pages.path(latest.comparison_id),
                # "vs #N" names the run the verdict was decided against
                baseline_id=own if compared is None else compared,
                baseline_config=pages.config_of(own if compared is None else compared),
                health_link=None,  # filled in once the health pages are written
                targets=_target_counts(history, latest.run.id),
                current_version=current.get(history.config),
                scored_on=latest.scored_on,
                comparison_id=latest.comparison_id,
            )
        )

    def linked(alert: AlertRow) -> AlertRow:
        """The alert with its page: the comparison that raised it, its failed run, or (an
        online comparison) the history page that shows it."""
        pages.write(alert.comparison_id)
        link = pages.path(alert.comparison_id) or _run_link(alert.run_id, run_ids)
        if link is None and alert.comparison_id is not None and alert.run_id in history_of:
            link = history_of[alert.run_id]
        return replace(alert, link=link)

    alerts = [linked(alert) for alert in open_alerts(store)]
    night = last_night(store)
    if night is not None:
        night = replace(night, events=tuple(
            replace(e, alert=linked(e.alert)) for e in night.events
        ))  # fmt: skip
    for history in histories:
        history_path = _history_path(history)
        links = Links("../", run_ids, pages.by_candidate, None, index=True)
        # every run the history shows links its comparison page, when it has one
        followed = (links.root, links.history, links.index, tuple(
            (h.run.id, links.run(h.run.id), links.comparison(h.run.id)) for h in history.runs
        ))  # fmt: skip
        render = functools.partial(history_html, history, links)
        keys.write(history_path, (history, followed), render)
        for h in history.runs[-RUN_PAGES_PER_HISTORY:]:
            page_links = Links("../", run_ids, pages.by_candidate, history_path, index=True)
            path = f"runs/run-{h.run.id}.html"
            if not keys.keep(path, stamp := stamps.run(h.run.id, page_links)):
                run_page = gather_run(store, h.run.id, cache=pages.cache)
                keys.put(path, stamp, run_html(run_page, page_links))
    test_sets = sorted({h.test_set for h in histories})
    online = (  # only when online runs exist: a site without them reads nothing more
        write_online_pages(store, [t for t in test_sets if t != ONLINE_TEST_SET], out,
                           Links("../", index=True), keys, agreement, control)
        if ONLINE_TEST_SET in test_sets else {}
    )  # fmt: skip
    interleaved = (
        write_interleaved_page(store, out, Links("../", index=True), keys)
        if ONLINE_TEST_SET in test_sets else None
    )  # fmt: skip
    boards = write_leaderboard_pages(
        store, out, Links("../", run_ids, index=True), keys, stamps.runs, gates_of
    )
    paths = health.paths()
    about = store.verdict_metrics([e.comparison_id for e in entries if e.comparison_id])
    entries = [replace(e, health_link=paths.get((e.latest.config, e.latest.test_set)),
                       verdict_metrics=about.get(e.comparison_id or 0, ()))
               for e in entries]  # fmt: skip
    entries = [_online_verdict(e, alerts) for e in entries]
    live, ended = _split_ended(entries, ended_subjects(store), infos)
    index = SiteIndex(
        tuple(live), tuple(alerts), newest, tuple(online.items()), interleaved,
        tuple(boards.items()), night, tuple(ended),
    )  # fmt: skip
    written = keys.write("index.html", index, lambda: index_html(index))
    keys.save()
    return written


def _online_verdict(entry: SiteEntry, alerts: Sequence[AlertRow]) -> SiteEntry:
    """An online row shows its alert's state under the day rule (``evalplat.nightly.day_rule``):
    ``regression`` while a regression alert of it is open, ``watching`` on a regressed day that
    has not opened one; other rows keep their run's verdict."""
    from evalplat.store.testsets import ONLINE_TEST_SET

    config, test_set = entry.latest.config, entry.latest.test_set
    if test_set != ONLINE_TEST_SET:
        return entry
    if any((a.config, a.test_set, a.kind) == (config, test_set, "regression") for a in alerts):
        return replace(entry, verdict="regression")
    return replace(entry, verdict="watching") if entry.verdict == "regression" else entry


def _split_ended(
    entries: list[SiteEntry],
    ended: Mapping[tuple[str, str], tuple[datetime, str]],
    infos: Mapping[int, RunInfo],
) -> tuple[list[SiteEntry], list[EndedRow]]:
    """The live rows, and the rows of subjects that ended (``gather.ended_subjects``) and have
    not run since (a config added back is live again with its next run)."""
    live: list[SiteEntry] = []
    gone: list[EndedRow] = []
    for entry in entries:
        found = ended.get((entry.latest.config, entry.latest.test_set))
        started = infos[entry.latest.id].started_at if entry.latest.id in infos else None
        if found is None or (started is not None and _utc(started) > _utc(found[0])):
            live.append(entry)
            continue
        gone.append(EndedRow(entry, format_time(found[0]), found[1]))
    return live, gone


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _history_path(history: HistoryPage) -> str:
    return history_path(history.config, history.test_set)


def history_path(config: str, test_set: str) -> str:
    """The site path of the history page of ``config`` on ``test_set``."""
    return f"history/{slug(config)}--{slug(test_set)}.html"


def comparison_path(comparison_id: int) -> str:
    """The site path of a stored comparison's page."""
    return f"compare/compare-{comparison_id}.html"


def run_pages_per_history() -> int:
    """How many of each history's latest runs the site written by this process has pages of."""
    return RUN_PAGES_PER_HISTORY


def comparison_page_ahead(
    store: Store, comparison_id: int, cache: TestSetCache, run_pages: int | None = None
) -> PageAhead | None:
    """The page ``write_site`` writes for the stored comparison ``comparison_id``, rendered
    now, as the site would render it were it written now (None for a comparison without a
    per-query page). Its links are the ones the site gives it as long as no run of the
    baseline's history is added before the site is written; when one is, or anything else
    the page is keyed by changes, the site renders the page itself. ``run_pages``: the number
    of latest runs of a history the site writes pages of, when not this process's
    ``RUN_PAGES_PER_HISTORY`` (the site is written by another process)."""
    from evalplat.reports.gather import gather_comparison
    from evalplat.store.query_health import FINISHED

    compared = store.load_comparison(comparison_id)
    baseline, candidate = compared.baseline_run_id, compared.candidate_run_id
    if compared.per_query is None or baseline is None or candidate is None:
        return None
    infos = {run: store.run_info(run) for run in (baseline, candidate)}
    # the site links a run's page when the run is one of its history's latest
    history = sorted(
        (info.started_at, info.id)
        for info in store.list_runs(infos[baseline].config)
        if info.test_set == infos[baseline].test_set and info.status != "running"
    )
    shown = {run for _, run in history[-(run_pages or RUN_PAGES_PER_HISTORY) :]}
    if infos[candidate].status in FINISHED:
        shown.add(candidate)  # the latest of its own history (``compare_to`` another config's)
    history_link = history_path(infos[candidate].config, infos[candidate].test_set)
    links = Links("../", frozenset(shown & {baseline, candidate}), {}, history_link, index=True)
    stamp = _Stamps(store.comparison_stamps(comparison_id), infos).comparison(comparison_id, links)
    if stamp is None:
        return None
    page = gather_comparison(store, compared, cache=cache)
    html = comparison_html(page, links)
    return PageAhead(comparison_path(comparison_id), stamp, code_digest(), html)


def _followed(links: Links, *run_ids: int) -> tuple[object, ...]:
    """What a run or comparison page's links make of its HTML: the templates link the
    history, the index and the page's own runs (``run_facts``), nothing else."""
    return (links.root, links.history, links.index, tuple(links.run(r) for r in run_ids))


def _run_link(run_id: int | None, written: frozenset[int]) -> str | None:
    return f"runs/run-{run_id}.html" if run_id is not None and run_id in written else None


class _Stamps:
    """Key material of the pages keyed by what they show (``Store.site_stamps``), never by
    their data: a run's row (status, times, error, pruning, means and the version scored on)
    and its latest evaluation."""

    def __init__(self, stored: SiteStamps, infos: dict[int, RunInfo]) -> None:
        self.stored, self.infos = stored, infos

    def runs(self, *run_ids: int) -> tuple[object, ...]:
        return tuple((self.infos.get(r), self.stored.evaluations.get(r)) for r in run_ids)

    def run(self, run_id: int, links: Links) -> tuple[object, ...]:
        return ("run", run_id, self.runs(run_id), _followed(links, run_id))

    def comparison(self, comparison_id: int, links: Links) -> tuple[object, ...] | None:
        """None when the comparison is not stored (gone since an alert named it)."""
        found = self.stored.comparisons.get(comparison_id)
        if found is None:
            return None
        sides = (found.baseline_run_id, found.candidate_run_id)
        return ("comparison", comparison_id, found, self.runs(*sides), _followed(links, *sides))


class _ComparisonPages:
    """The site's comparison pages, each written once: by comparison id, and by candidate run
    (the first page written for a run is the one its history and run pages link)."""

    def __init__(
        self,
        store: Store,
        out: Path,
        cache: TestSetCache,
        run_ids: frozenset[int],
        history_of: dict[int, str],
        keys: PageKeys,
        stamps: _Stamps,
    ) -> None:
        self.store, self.out, self.cache, self.keys = store, out, cache, keys
        self.stamps = stamps
        self.run_ids, self.history_of = run_ids, history_of
        self.written: dict[int, str] = {}
        self.by_candidate: dict[int, str] = {}
        self.baselines: dict[int, int | None] = {}

    def write(self, comparison_id: int | None) -> int | None:
        """Write the comparison's page unless done; return its baseline run (None without a
        stored comparison)."""
        from evalplat.errors import EvalplatError
        from evalplat.reports.gather import gather_comparison

        if comparison_id is None:
            return None
        if comparison_id in self.baselines:
            return self.baselines[comparison_id]
        path = comparison_path(comparison_id)
        stored = self.stamps.stored.comparisons.get(comparison_id)
        links = Links("../", self.run_ids, {}, None if stored is None else
                      self.history_of.get(stored.candidate_run_id), index=True)  # fmt: skip
        stamp = self.stamps.comparison(comparison_id, links)
        if stored is not None and (
            self.keys.keep(path, stamp)  # the page it wrote last time
            or self.keys.take_ahead(path, stamp)  # or the one rendered ahead tonight
        ):
            sides = (stored.baseline_run_id, stored.candidate_run_id)
            return self._written(comparison_id, path, *sides)
        try:
            compared = self.store.load_comparison(comparison_id)
        except EvalplatError:  # gone since the alert named it: nothing to show
            self.baselines[comparison_id] = None
            return None
        self.baselines[comparison_id] = compared.baseline_run_id
        candidate = compared.candidate_run_id
        # an online comparison (over sessions) has no per-query page; its history shows it
        if compared.per_query is None or candidate is None:
            return compared.baseline_run_id
        page = gather_comparison(self.store, compared, cache=self.cache)
        self.keys.put(path, stamp, comparison_html(page, links))
        return self._written(comparison_id, path, compared.baseline_run_id, candidate)

    def _written(
        self, comparison_id: int, path: str, baseline: int | None, candidate: int
    ) -> int | None:
        self.baselines[comparison_id] = baseline
        self.written[comparison_id] = path
        self.by_candidate.setdefault(candidate, path)
        return baseline

    def config_of(self, run_id: int | None) -> str | None:
        if run_id is None:
            return None
        info = self.stamps.infos.get(run_id)
        return (info if info is not None else self.store.run_info(run_id)).config

    def path(self, comparison_id: int | None) -> str | None:
        return None if comparison_id is None else self.written.get(comparison_id)


def _target_counts(history: HistoryPage, run_id: int) -> dict[str, int]:
    """``{"met": 2, "at_risk": 0, "missed": 1, "needs_judgments": 0}`` for a run's kept target
    verdicts, or ``{}``."""
    verdicts = [t.verdicts[run_id] for t in history.targets.values() if run_id in t.verdicts]
    if not verdicts:
        return {}
    return {v: verdicts.count(v) for v in ("met", "at_risk", "missed", "needs_judgments")}
