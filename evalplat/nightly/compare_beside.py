"""A night's comparisons in a second process, while this one runs the next configs.

A night runs its configs one after the other, and each completed run is compared with what it
is gated against before the next one starts. On a night of twenty configs over ten thousand
queries the comparisons took about a third of the night (scoring both runs under the
optimistic bound, coding their ids, the rank overlap, the tests), on one core, while the
machine's other core idled. A comparison reads and writes the store only
(``evalplat.nightly.config_night.compare_night``), so :class:`Finishing` hands it to a second
process and lets this one run the next config; the alerts are fed here, from each comparison
in the order the configs were run, once it is back.

The runs themselves stay one at a time in this process: two configs searching at once would
load the team's search engine twice over, and each run's latency would be measured under the
other's load.

The second process also renders each comparison's page for the report site once the comparison
is made (``evalplat.reports.site.comparison_page_ahead``), while this process runs the next
config: the site then writes those pages as they are instead of gathering and rendering them at
the end of the night, when this process is the one at work. A page whose material has changed by
then (or that could not be rendered ahead) is rendered by the site as before.

A second process costs a start (about a second of imports, on the other core) and opens the
store again, so it is used only where it pays and works: more than one core, a store another
process can open (``evalplat.store.beside``), a night of at least two runs of
``BESIDE_QUERIES`` queries in all, and no measure registered by the program that runs the
night (a fresh process would not know it). A comparison is the same either way: the same
function makes it from the same rows. A second process that cannot start or dies loses
nothing: the comparisons it did not send back are made here.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from evalplat.errors import EvalplatError
from evalplat.nightly.config_night import (
    ConfigNight,
    compare_night,
    isolated,
    step_error,
    step_failed,
)
from evalplat.nightly.scopes import test_set_tags
from evalplat.store.beside import cores, reopenable_url

if TYPE_CHECKING:
    from evalplat.comparison.verdicts import ComparisonResult
    from evalplat.nightly.job import NightlyOutcome
    from evalplat.nightly.project import Project
    from evalplat.reports.gather import TestSetCache
    from evalplat.reports.page_keys import PageAhead
    from evalplat.store import Store
    from evalplat.store.runs import RunInfo
    from evalplat.testsets.content import TestSetContent

# Queries of the night's runs, summed over its configs and test sets, from which comparing in a
# second process pays for its start: a twenty-config night on 10k queries has 200k; the tests'
# nights a few hundred.
BESIDE_QUERIES = 20_000

# what the second process sends back: the log entries of the comparison, the comparison (None
# when there was nothing to compare with) or the error that stopped it, and its page rendered
# ahead for the report site (None when it has none)
Compared = tuple[list[dict[str, Any]], "ComparisonResult | None", str | None, "PageAhead | None"]


class Finishing:
    """The night's configs finished (compared, then their alerts fed) in the order they were
    handed over: each at once, or with its comparison in a second process."""

    def __init__(self, url: str | None, outcome: NightlyOutcome) -> None:
        """``url``: the store's, for the second process; None to finish every night here."""
        self.url, self.outcome = url, outcome
        self.pool: ProcessPoolExecutor | None = None
        self.sent = 0  # the comparisons the second process made and sent back
        self.ahead: list[PageAhead] = []  # and their pages rendered for the site
        # the nights handed over, each with its test set version, contents and comparison
        self.pending: deque[
            tuple[ConfigNight, int, dict[str, TestSetContent], Future[Compared]]
        ] = deque()

    @classmethod
    def of_night(
        cls,
        store: Store,
        project: Project,
        contents: dict[str, TestSetContent],
        outcome: NightlyOutcome,
    ) -> Finishing:
        """The night's finishing: beside this process when it pays (see the module)."""
        runs = [test_set for config in project.configs for test_set in config.testsets]
        queries = sum(len(contents[test_set].queries) for test_set in runs)
        url = reopenable_url(store)
        if len(runs) < 2 or queries < BESIDE_QUERIES or cores() < 2 or _own_measures():
            url = None
        return cls(url, outcome)

    def finish(self, night: ConfigNight, version: int, contents: dict[str, TestSetContent]) -> None:
        """Finish ``night`` (``ConfigNight.finish``) on test set ``version``: here, or its
        comparison started in the second process (``collect`` feeds its alerts)."""
        future = self._submit(night, version, contents)
        if future is None:
            self.collect(wait=True)  # those handed over before go first
            isolated(night, self.outcome, night.finish, version, contents, self.outcome)
        else:
            self.pending.append((night, version, contents, future))

    def collect(self, *, wait: bool = False) -> None:
        """Feed the alerts of the configs whose comparisons are back, in the order they were
        handed over (with ``wait``, of all of them: the night's configs are done)."""
        while self.pending and (wait or self.pending[0][3].done()):
            night, version, contents, future = self.pending.popleft()
            try:
                entries, result, error, page = future.result()
            except BrokenProcessPool:  # it died: the comparison is made here
                isolated(night, self.outcome, night.finish, version, contents, self.outcome)
                continue
            self.sent += 1
            if page is not None:
                self.ahead.append(page)
            for entry in entries:
                night.emit(entry)
            if error is None:
                isolated(night, self.outcome, night.observe, result, contents, self.outcome)
            else:
                step_failed(night, error, self.outcome)

    def close(self) -> None:
        """Wait for every comparison, feed its alerts, and stop the second process."""
        try:
            self.collect(wait=True)
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop the second process (what it has not started is dropped)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None

    def _submit(
        self, night: ConfigNight, version: int, contents: dict[str, TestSetContent]
    ) -> Future[Compared] | None:
        """The comparison of ``night`` started in the second process, or None to make it
        here (no second process, or it could not start)."""
        if self.url is None:
            return None
        if self.pool is None:
            import multiprocessing

            try:
                self.pool = ProcessPoolExecutor(
                    1,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_open_store,
                    initargs=(self.url,),
                )
            except (OSError, RuntimeError):  # no process to be had: compare here
                self.url = None
                return None
        from evalplat.reports.site import run_pages_per_history

        tags = test_set_tags(contents[night.test_set])
        try:
            future = self.pool.submit(
                _compare, night.project, night.spec.name, night.test_set, night.completed(),
                tags, version, run_pages_per_history(),
            )  # fmt: skip
        except (BrokenProcessPool, RuntimeError):  # it died with nothing pending: compare here
            self.shutdown()
            self.url = None
            return None
        return future


def _own_measures() -> bool:
    """Whether this process knows measures a fresh one does not: those registered from outside
    evalplat (``evalplat.metrics.registry.register``, by a program that calls the night)."""
    from evalplat.metrics import catalogue, registry

    return not set(registry.FAMILIES) <= {measure.name for measure in catalogue.MEASURES}


# the second process's store, opened once when it starts: it keeps the judgments' codes of the
# night's test set version from one comparison to the next (``Store._judged_ids``), and the
# test sets' texts and judgments for the pages
_STORE: list[Store] = []
_PAGES: list[TestSetCache] = []


def _open_store(url: str) -> None:
    from evalplat.reports.gather import TestSetCache
    from evalplat.store import Store

    _STORE.append(Store.open(url, check=False))
    _PAGES.append(TestSetCache(_STORE[0]))


def _compare(
    project: Project,
    config: str,
    test_set: str,
    run: RunInfo,
    tags: frozenset[str],
    version: int,
    run_pages: int | None = None,
) -> Compared:
    """In the second process: ``compare_night`` of ``config``'s completed ``run``, and its page
    for the site, which writes the pages of each history's latest ``run_pages`` runs (the
    night's process knows how many)."""
    entries: list[dict[str, Any]] = []
    spec = next(spec for spec in project.configs if spec.name == config)
    try:
        result = compare_night(
            _STORE[0], project, spec, test_set, run, tags, version, entries.append
        )
    except EvalplatError as error:
        return entries, None, step_error(error), None
    return entries, result, None, _page_ahead(result, run_pages)


def _page_ahead(result: ComparisonResult | None, run_pages: int | None = None) -> PageAhead | None:
    """The comparison's page for the site, or None (the site renders it): rendering it ahead
    only saves time, so whatever stops it here leaves the page to the site, which reports a
    page it cannot write."""
    from evalplat.reports.site import comparison_page_ahead

    if result is None or result.id is None:
        return None
    try:
        return comparison_page_ahead(_STORE[0], result.id, _PAGES[0], run_pages)
    except Exception:  # any failure: the site renders the page as before, or reports why not
        return None
