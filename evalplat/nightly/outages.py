"""A night's engine outages: one operational alert per engine down, not one per config on it.

Several configs may search one engine (an ``http`` endpoint, a ``sql`` database: their
identity is ``evalplat.searchers.engines``'s). When the engine is down, each of their runs
fails; that is one outage, so it is one alert, whose subject is the engine::

    engine http://127.0.0.1:9200 down: configs remote, remote2 failed

A run *fails on its engine* when it could not start (the backend refused or could not be
reached: an ``OperationalError`` of the runner) or when none of its queries was answered
(status ``failed``). The night holds such failures back (``hold``) and, once every config has
run, decides per engine (``observe``):

- some run on it failed on it and none completed: the engine is down; its alert opens (or stays
  open, its details refreshed to tonight's configs), and the held configs' own operational
  alerts are left as they are;
- some run on it completed: the engine answered, so its alert resolves, and a held failure
  was the config's own: it feeds that config's own operational alert
  (``evalplat.nightly.notify.observe_run``), as does every other failure (a partial run, a
  step that raised, a config of a local searcher, which has no engine).

The alert is keyed by the engine alone (``Store.observe(engine=...)``), filed under the first
config and test set that failed on it the night it opened; it is retired when no config of the
project searches the engine any more (``evalplat.nightly.retire``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalplat.alerts.message import outage_line
from evalplat.nightly.notify import log_event, observe_run
from evalplat.searchers import engine_of

if TYPE_CHECKING:
    from evalplat.alerts.base import Channel
    from evalplat.nightly.job import LogFunction
    from evalplat.nightly.project import ConfigSpec, Project
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent


@dataclass(frozen=True)
class HeldFailure:
    """A run that failed on its engine: which config, where, its run (None: never started)."""

    spec: ConfigSpec
    test_set: str
    run_id: int | None
    error: str


@dataclass
class EngineNight:
    """What the night saw of one engine: the runs that failed on it, whether one completed."""

    failed: list[HeldFailure] = field(default_factory=list)
    answered: tuple[str, str] | None = None  # the first (config, test set) that completed

    def where(self) -> tuple[str, str]:
        """The (config, test set) a new alert of the engine is filed under: the first that
        failed on it (an alert resolved is found by the engine alone)."""
        if self.failed:
            return self.failed[0].spec.name, self.failed[0].test_set
        if self.answered is None:
            raise ValueError("an engine night with no run")
        return self.answered


@dataclass
class Outages:
    """The night's runs per engine, and the alerts they feed once every config has run."""

    engines: dict[str, str | None]  # config → its engine (None: a local searcher)
    seen: dict[str, EngineNight] = field(default_factory=dict)

    @classmethod
    def of_project(cls, project: Project) -> Outages:
        return cls({spec.name: engine_of(spec.searcher, spec.params) for spec in project.configs})

    def engine(self, config: str) -> str | None:
        return self.engines.get(config)

    def completed(self, config: str, test_set: str) -> None:
        """A run of ``config`` on ``test_set`` completed: its engine answered tonight."""
        engine = self.engine(config)
        if engine is not None:
            night = self.seen.setdefault(engine, EngineNight())
            night.answered = night.answered or (config, test_set)

    def hold(self, spec: ConfigSpec, test_set: str, run_id: int | None, error: str) -> bool:
        """Hold back a run that failed on its engine until ``observe``; False when the config
        has no engine (its failure is its own, observed now)."""
        engine = self.engine(spec.name)
        if engine is None:
            return False
        failure = HeldFailure(spec, test_set, run_id, error)
        self.seen.setdefault(engine, EngineNight()).failed.append(failure)
        return True

    def observe(self, store: Store, channels: list[Channel], emit: LogFunction) -> list[AlertEvent]:
        """Open, keep or resolve each engine's alert, and feed the held failures of an engine
        that answered to their configs' own alerts (module doc)."""
        events: list[AlertEvent] = []
        names = [channel.name for channel in channels]
        for engine, night in self.seen.items():
            down = bool(night.failed) and night.answered is None
            if not down:
                for held in night.failed:  # the engine answered: the config's own failure
                    events += observe_run(store, held.spec, held.test_set, held.run_id,
                                          held.error, channels, emit)  # fmt: skip
            config, test_set = night.where()
            for event in store.observe(
                config,
                test_set,
                "",
                None,
                None,
                regressed=down,
                details=engine_details(engine, night.failed, config, test_set, down),
                kind="operational",
                channels=names,
                engine=engine,
            ):
                log_event(emit, event, event.alert.config, event.alert.test_set, None)
                events.append(event)
        return events


def engine_details(
    engine: str, failed: list[HeldFailure], config: str, test_set: str, down: bool
) -> dict[str, Any]:
    """What an engine's alert says (``AlertMessage``'s fields): the engine, and while it is
    down the configs that failed on it tonight and the first error (each config's own is in
    the night's log and on its run)."""
    details: dict[str, Any] = {"config": config, "test_set": test_set, "metric": "",
                               "engine": engine, "candidate_run": None, "error": None}  # fmt: skip
    if down:
        configs = list(dict.fromkeys(held.spec.name for held in failed))
        details["configs"], details["candidate_run"] = configs, failed[0].run_id
        details["error"] = f"{outage_line(engine, configs)}; first error: {failed[0].error}"
    return details
