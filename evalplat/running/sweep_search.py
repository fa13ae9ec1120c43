"""A sweep's new runs: what every setting shares is prepared once, and each run is scored from
the results it holds in memory.

``runner.run`` is made for one run: for each setting it would load the test set version again,
hash its corpus, read the corpus's field names, and read the stored run back to score it. A
sweep runs tens of settings on one test set version, so :class:`SettingSearch` prepares those
once and then, for each new config version (:meth:`SettingSearch.run`):

1. creates a ``running`` run with the options ``runner.run`` gives it, its heartbeat kept by a
   thread as the search driver keeps it;
2. checks the backend, then searches the queries in chunks of ``batch_size`` with the runner's
   retries, concurrency and rate limit (``search_unstored``), storing each chunk's outcomes and
   ranked results in one transaction once it is done;
3. when every query succeeded, scores the results it holds (the frame ``load_results`` would
   read back: same columns, same order of ranks) and stores the evaluation with the
   ``complete`` status in one transaction. A run with a failed query is finished by the
   driver's ``score_and_finish``, which reads it back, exactly as ``runner.run`` finishes it.

A sweep killed while searching leaves a ``running`` run whose stored chunks ``resume`` skips
(readers show it ``interrupted``); one killed before step 3 committed leaves every outcome
stored and no scores. Neither looks complete. The run's per-query values of the sweep's metric
come back with it, so cross-validation does not read them from the store either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalplat.metrics.names import parse_all
from evalplat.running.run_scoring import HeldRun
from evalplat.running.runner import (
    COVERAGE_METRICS,
    SYSTEM_METRICS,
    RunSettings,
    check_fields,
    check_query_texts,
    default_cache_dir,
)
from evalplat.running.search_driver import (
    RunInterruptedError,
    _Heartbeat,
    document_fields,
    evaluation_record,
    score_and_finish,
    search_unstored,
)
from evalplat.searchers import BackendUnavailableError, SearchContext, get_kind, validate_config
from evalplat.store.result_fields import field_names

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.store import Store
    from evalplat.store.refs import VersionRef
    from evalplat.store.runs import RunInfo
    from evalplat.testsets.content import TestSetContent


@dataclass(frozen=True)
class NewRun:
    info: RunInfo
    values: dict[str, float] | None  # query id -> value of the sweep's metric; None: read them


class SettingSearch:
    """Runs of config versions on one test set version, sharing what does not change."""

    def __init__(
        self,
        store: Store,
        test_set: VersionRef,
        content: TestSetContent,
        metrics: list[str],
        settings: RunSettings,
        trigger: str,
    ) -> None:
        self.store = store
        self.test_set = test_set
        self.content = content
        self.metric = metrics[0]
        # scored as runner.run scores a run: the metrics asked, then coverage and system ones
        asked = [str(m) for m in parse_all(metrics)]
        extra = [str(m) for m in parse_all([*COVERAGE_METRICS, *SYSTEM_METRICS])]
        self.metrics = asked + [m for m in extra if m not in asked]
        self.settings = settings
        self.trigger = trigger
        self.test_set_version_id = store.test_set_version_id(test_set)
        self.corpus_key = None if content.documents is None else content.corpus_hash()
        self.document_keys = field_names(store, {}, self.test_set_version_id)
        self.query_ids = [str(q) for q in content.queries["query_id"]]
        self.texts = [str(t) for t in content.queries["text"].fillna("")]

    def run(self, config_version_id: int, searcher: str, params: dict[str, Any]) -> NewRun:
        """Search, store and score a new run of the config version; see the module docstring."""
        check_query_texts(searcher, params, self.content, str(self.test_set))
        known = sorted(set(params.get("hit_fields") or {}) | set(self.document_keys))
        check_fields(self.metrics, params, known)
        context = SearchContext(
            documents=self.content.documents,
            corpus_key=self.corpus_key,
            cache_dir=self.settings.cache_dir or default_cache_dir(self.store),
            concurrency=self.settings.concurrency,
        )
        engine = get_kind(searcher).create(validate_config(searcher, params), context)
        with engine:
            run_id = self.store.create_run(
                config_version_id,
                self.test_set_version_id,
                depth=self.settings.depth,
                trigger=self.trigger,
                queries_total=len(self.query_ids),
                options={
                    "metrics": self.metrics,
                    "concurrency": self.settings.concurrency,
                    "rate_limit": self.settings.rate_limit,
                },
            )
            heartbeat = _Heartbeat(self.store, run_id, self.settings.heartbeat_seconds)
            heartbeat.start()
            try:
                held = self._search(run_id, engine)
                outcomes = held.outcomes()
                if (outcomes["status"] != "ok").any():
                    return NewRun(score_and_finish(self.store, run_id, self.content,
                                                   self.metrics), None)  # fmt: skip
                try:
                    return self._finish(run_id, held, outcomes)
                except Exception as error:
                    self.store.finish_run(run_id, "failed", error=f"scoring failed: {error}")
                    raise
            finally:
                heartbeat.stop()

    def _search(self, run_id: int, engine: Any) -> HeldRun:
        try:
            engine.check()
        except BackendUnavailableError as error:
            self.store.finish_run(run_id, "failed", error=str(error))
            raise BackendUnavailableError(f"{error} (run {run_id} marked failed)") from None
        queries = list(zip(self.query_ids, self.texts, strict=True))
        held = HeldRun(whole=True)
        size = self.settings.batch_size
        try:
            for start in range(0, len(queries), size):
                chunk = search_unstored(engine, queries[start : start + size], self.settings)
                self.store.record_outcomes(run_id, chunk, results=held.add(run_id, chunk))
        except KeyboardInterrupt:
            self.store.finish_run(run_id, "interrupted", error="interrupted by the user (Ctrl-C)")
            raise RunInterruptedError(run_id) from None
        return held

    def _finish(self, run_id: int, held: HeldRun, outcomes: pd.DataFrame) -> NewRun:
        record = evaluation_record(
            self.content,
            held.results(),
            self.metrics,
            self.test_set_version_id,
            outcomes,
            document_fields(self.store, run_id, self.metrics),
        )
        import pandas as pd

        info = self.store.finish_run(run_id, "complete", evaluation=record)
        scores = record.per_query
        if not isinstance(scores, pd.DataFrame):
            return NewRun(info, None)
        mine = scores.loc[scores["metric"] == self.metric]
        values = dict(zip(mine["query_id"].astype(str), mine["value"].astype(float), strict=True))
        return NewRun(info, values)
