"""The front page's data: what the latest night did to the alerts, one row per (config, test
set), the open alerts, and the pages the index links (offline vs online, interleaved
experiments, leaderboards).

:func:`evalplat.reports.site.write_site` fills it; ``index_html`` renders it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evalplat.reports.data import RunHeader


@dataclass(frozen=True)
class AlertRow:
    id: int
    config: str
    test_set: str
    metric: str
    state: str
    opened_at: str
    summary: str
    kind: str = "regression"
    comparison_id: int | None = None  # the comparison that raised it (or last saw it)
    run_id: int | None = None  # the candidate run it names: an operational alert's failed run
    link: str | None = None  # its page on the site, relative to the index


@dataclass(frozen=True)
class NightEventRow:
    """An alert opened, resolved or retired by the latest night, as the index lists it."""

    event: str  # opened | resolved | retired
    at: str
    alert: AlertRow
    note: str | None = None  # why it was resolved by hand or retired


@dataclass(frozen=True)
class LastNight:
    """The latest night (``Store.last_night``): when it ran and the alert events it caused."""

    started_at: str
    finished_at: str | None  # None while it runs (the site written by the night itself)
    events: tuple[NightEventRow, ...]

    def count(self, event: str) -> int:
        return sum(1 for e in self.events if e.event == event)


@dataclass(frozen=True)
class SiteEntry:
    """One (config, test set) line of the site index, with links relative to the index."""

    latest: RunHeader
    primary: str | None
    primary_value: float | None
    trend: tuple[float | None, ...]
    verdict: str | None
    run_link: str
    history_link: str
    comparison_link: str | None
    baseline_id: int | None  # the run the verdict was decided against
    health_link: str | None = None  # the query-health page, when the config ran in its window
    # the latest run's target verdicts: how many are met, at risk and missed
    targets: Mapping[str, int] = field(default_factory=dict)
    baseline_config: str | None = None  # its config: another one's for a ``compare_to`` config
    # the config's current version; the row's run is of another only while it has not run here
    current_version: int | None = None
    scored_on: str | None = None  # what ``primary_value`` was scored on, as history says it
    comparison_id: int | None = None  # the stored comparison the verdict is of
    # the gated metrics the verdict is about (``AP`` when AP regressed): ``Store.verdict_metrics``
    verdict_metrics: tuple[str, ...] = ()

    @property
    def current_not_run(self) -> bool:
        return self.current_version not in (None, self.latest.config_version)


@dataclass(frozen=True)
class EndedRow:
    """A (config, test set) that left the project: its alerts were retired because the config
    or test set left the file, or its online arm or experiment ended
    (``evalplat.nightly.retire.subject_gone``), and it has not run since."""

    entry: SiteEntry  # its last row, as the index showed it
    ended_at: str
    why: str


@dataclass(frozen=True)
class SiteIndex:
    entries: tuple[SiteEntry, ...]
    alerts: tuple[AlertRow, ...]
    generated_from: str  # the newest run's time: the page never says "now"
    online: tuple[tuple[str, str], ...] = ()  # (test set, its "Offline vs online" page)
    interleaved: str | None = None  # the "Interleaved experiments" page, when there is one
    leaderboards: tuple[tuple[str, str], ...] = ()  # (test set, its leaderboard page)
    last_night: LastNight | None = None  # None before the first night
    ended: tuple[EndedRow, ...] = ()  # subjects that left the project, apart from the live ones

    @property
    def has_targets(self) -> bool:
        return any(e.targets for e in self.entries)
