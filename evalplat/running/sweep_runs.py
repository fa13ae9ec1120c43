"""Where a sweep's per-query values come from: stored runs (reused, resumed, rescored or new),
and in-memory searches of query subsets for the early rungs of successive halving.

A full run is reused when its config version has a ``complete`` run on the test set version; a
``partial``, ``failed`` or ``interrupted`` one is resumed (only its unfinished queries are
searched); one not scored with the sweep's metric on that version is rescored (no search). An
early rung searches its subset without storing anything; a query that fails there scores 0,
which only lowers that setting's chance to move on.

A config version without any run there is searched by ``SettingSearch``
(``evalplat.running.sweep_search``), which prepares the test set's shared parts once per sweep
and scores each run from memory; its per-query values are kept here for cross-validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalplat.errors import NotFoundError, OperationalError
from evalplat.metrics.numbers import counted
from evalplat.running import runner
from evalplat.running.search_driver import search_unstored
from evalplat.running.sweep_plan import Setting, rung_queries
from evalplat.running.sweep_search import SettingSearch
from evalplat.searchers import validate_config
from evalplat.store.refs import VersionRef

if TYPE_CHECKING:
    from evalplat.running.sweep import SweepOptions
    from evalplat.store import Store
    from evalplat.store.configs import ConfigVersionInfo
    from evalplat.store.runs import RunInfo
    from evalplat.testsets.content import TestSetContent


@dataclass(frozen=True)
class FullRun:
    config: str  # NAME@VERSION
    run_id: int
    mean: float
    cached: bool  # no query was searched for it by this sweep


class RunSource:
    """Complete runs and subset scores of a sweep's settings on one test set version."""

    def __init__(
        self,
        store: Store,
        test_set: VersionRef,
        content: TestSetContent,
        metrics: list[str],
        options: SweepOptions,
    ) -> None:
        self.store = store
        self.test_set = test_set
        self.content = content
        self.metrics = metrics
        self.metric = metrics[0]
        self.options = options
        self._search: SettingSearch | None = None  # prepared at the first new run
        self._values: dict[int, dict[str, float]] = {}  # run id -> values scored in memory

    def full(
        self, name: str, spec: tuple[str, dict[str, Any]] | None, version: int | None = None
    ) -> FullRun:
        """A complete run of config ``name`` (its version ``version``, or the version of
        ``(searcher, params)``, added when new), scored with the sweep's metrics."""
        if spec is not None:
            added = self.store.add_config(name, spec[0], spec[1])
            config, new = added.version, added.created
        else:
            config, new = self.store.config_version(VersionRef(name, version)), False
        info, cached = self._complete_run(config, new)
        if info.status != "complete":
            raise OperationalError(
                f"{config.name}@{config.version}: run {info.id} is {info.status} "
                f"({counted(info.queries_failed, 'query')} failed); sweep again to resume it"
            )
        if info.scored_against_version != self.test_set.version or self.metric not in info.means:
            info = runner.rescore(self.store, info.id, self.test_set, metrics=self.metrics)
        return FullRun(f"{config.name}@{config.version}", info.id, info.means[self.metric], cached)

    def values(self, run_id: int, query_ids: list[str]) -> list[float]:
        """The run's per-query values of the metric, in ``query_ids`` order (missing: 0)."""
        kept = self._values.get(run_id)
        if kept is not None:
            return [kept.get(query_id, 0.0) for query_id in query_ids]
        scores = self.store.evaluation_scores(run_id)
        mine = scores[scores["metric"] == self.metric].set_index("query_id")["value"]
        return [float(v) for v in mine.reindex(query_ids).fillna(0.0)]

    def on_subset(
        self, config: ConfigVersionInfo, settings: list[Setting], count: int, seed: int
    ) -> list[float]:
        """Each setting's mean on the rung's first ``count`` queries of a seeded shuffle: from
        its complete run when there is one, else searched now and kept in memory."""
        from evalplat.metrics.evaluation import evaluate

        query_ids = [str(q) for q in self.content.queries["query_id"]]
        subset = rung_queries(query_ids, count, seed)
        texts = dict(zip(query_ids, self.content.queries["text"].fillna(""), strict=True))
        means = []
        for setting in settings:
            stored = self._stored_run(setting.config_name(config.name), config.searcher, setting)
            if stored is not None:
                means.append(sum(self.values(stored, subset)) / len(subset))
                continue
            run_settings = self.options.settings
            with runner.create_searcher(
                self.store, config.searcher, setting.params, self.content, run_settings
            ) as searcher:
                outcomes = search_unstored(
                    searcher, [(q, str(texts[q])) for q in subset], run_settings
                )
            rows = [
                (o.query_id, doc, rank, score if score is not None else -float(rank))
                for o in outcomes
                if o.status == "ok"
                for rank, (doc, score) in enumerate(o.hits, 1)
            ]
            frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])
            scored = evaluate(
                self.content.people_qrels[["query_id", "doc_id", "grade"]],
                frame,
                [self.metric],
                ordering="given",
                topics=subset,
            )
            means.append(float(scored.per_query["value"].astype(float).mean()))
        return means

    def _stored_run(self, name: str, searcher: str, setting: Setting) -> int | None:
        """The complete run of this setting's config version, without adding the version."""
        try:
            versions = self.store.config_versions(name)
        except NotFoundError:
            return None
        validated = validate_config(searcher, setting.params)
        params = {key: validated[key] for key in setting.params}
        for version in versions:
            if version.searcher == searcher and version.params == params and not version.label:
                run = self._find(version.name, version.version, complete_only=True)
                return None if run is None else run.id
        return None

    def _complete_run(self, config: ConfigVersionInfo, new: bool) -> tuple[RunInfo, bool]:
        """The config version's complete run, else its unfinished one resumed, else a new run
        (``new``: the version was just added, so it has none to look for)."""
        found = None if new else self._find(config.name, config.version, complete_only=False)
        if found is not None and found.status == "complete":
            return found, True
        if found is not None and found.status in ("partial", "failed", "interrupted"):
            return runner.resume(self.store, found.id, settings=self.options.settings), False
        if self._search is None:
            self._search = SettingSearch(
                self.store,
                self.test_set,
                self.content,
                self.metrics,
                self.options.settings,
                self.options.trigger,
            )
        version_id = self.store.config_version_id(VersionRef(config.name, config.version))
        done = self._search.run(version_id, config.searcher, config.params)
        if done.values is not None:
            self._values[done.info.id] = done.values
        return done.info, False

    def _find(self, name: str, version: int, *, complete_only: bool) -> RunInfo | None:
        """The newest complete run of ``name@version`` on the test set version, else (unless
        ``complete_only``) its newest unfinished one."""
        runs = [
            run
            for run in self.store.list_runs(name)
            if run.config_version == version
            and run.test_set == self.test_set.name
            and run.test_set_version == self.test_set.version
        ]
        for run in runs:
            if run.status == "complete":
                return run
        if complete_only:
            return None
        return next((run for run in runs if run.status != "running"), None)
