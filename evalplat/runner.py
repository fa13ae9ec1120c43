"""The runner: send a test set's queries to a config's searcher, store results and scores.

``run`` creates a ``running`` run, checks the backend once (unusable → the run is ``failed``
and ``BackendUnavailableError`` is raised before any query is sent), then searches with a
thread pool of ``concurrency`` workers. Each query is retried on transient errors (timeouts,
connection errors, 429/5xx, honouring ``Retry-After``) by ``call_with_retries``; a query that
still fails is recorded as ``failed`` with its error, never silently scored 0. Outcomes are
committed in batches as they finish, from the main thread only (one writer, friendly to SQLite);
a heartbeat thread keeps the run visibly alive meanwhile.

Final status: ``complete`` when every query succeeded, ``partial`` when some failed, ``failed``
when none succeeded, ``interrupted`` on Ctrl-C (``RunInterruptedError``). Scores are computed
from the *stored* results (the engine's order, ``ordering="given"``) and saved with the final
status in one transaction: a process killed at any moment leaves a ``running`` run that readers
show as ``interrupted``, never one that looks complete. ``resume`` searches only the queries
without an ``ok`` outcome and finishes the run the same way.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.db.engine import sqlite_file
from evalplat.errors import InputError, OperationalError
from evalplat.metrics.registry import Metric, parse_all
from evalplat.searchers import (
    BackendUnavailableError,
    RateLimiter,
    RetryPolicy,
    SearchContext,
    Searcher,
    SearchError,
    call_with_retries,
    get_kind,
)
from evalplat.store.refs import VersionRef
from evalplat.store.runs import IMPORT_KIND, EvaluationRecord, QueryOutcome, RunInfo

if TYPE_CHECKING:
    import pandas as pd

    from evalplat.store import Store
    from evalplat.testsets import TestSetContent

ProgressCallback = Callable[[int, int], None]
"""Called from the main thread with (queries finished, queries to search)."""


class RunInterruptedError(OperationalError):
    """The user pressed Ctrl-C: the run was stored as ``interrupted`` and can be resumed."""

    def __init__(self, run_id: int) -> None:
        super().__init__(
            f"run {run_id} interrupted; finish it with `evalplat run --resume {run_id}`"
        )
        self.run_id = run_id


@dataclass(frozen=True)
class RunSettings:
    """How to drive the searcher. ``retry=None`` uses the searcher's own ``retries`` count."""

    depth: int = 100
    concurrency: int = 4
    rate_limit: float | None = None  # requests per second over all workers
    retry: RetryPolicy | None = None
    batch_size: int = 200  # queries per committed batch
    flush_seconds: float = 1.0  # ... or fewer, when this long has passed
    heartbeat_seconds: float = 5.0
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.depth < 1:
            raise InputError(f"depth must be at least 1, got {self.depth}")
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.rate_limit is not None and self.rate_limit <= 0:
            raise InputError(f"rate limit must be more than 0, got {self.rate_limit}")


def run(
    store: Store,
    config_ref: str | VersionRef,
    test_set_ref: str | VersionRef,
    *,
    metrics: Sequence[str | Metric] | None = None,
    settings: RunSettings | None = None,
    trigger: str = "manual",
    progress: ProgressCallback | None = None,
) -> RunInfo:
    """Run every query of a test set version through a config version; return the stored run."""
    settings = settings or RunSettings()
    chosen = _with_coverage(metrics)
    config = store.config_version(config_ref)
    test_set = store.test_set_version(test_set_ref)
    config_key = VersionRef(config.name, config.version)
    test_set_key = VersionRef(test_set.name, test_set.version)
    config_version_id = store.config_version_id(config_key)
    test_set_version_id = store.test_set_version_id(test_set_key)
    content = store.load_test_set(test_set_key)
    # Creating the searcher validates params and env placeholders: bad input writes nothing.
    searcher = _create_searcher(store, config.searcher, config.params, content, settings)
    with searcher:
        run_id = store.create_run(
            config_version_id,
            test_set_version_id,
            depth=settings.depth,
            trigger=trigger,
            queries_total=len(content.queries),
            options=_options(chosen, settings),
        )
        queries = list(zip(content.queries["query_id"], content.queries["text"], strict=True))
        return _drive(store, run_id, searcher, queries, content, chosen, settings, progress)


def resume(
    store: Store,
    run_ref: str | int,
    *,
    settings: RunSettings | None = None,
    progress: ProgressCallback | None = None,
) -> RunInfo:
    """Finish a partial, interrupted or failed run: search only its queries without an ``ok``
    outcome, with the run's depth and metrics, then score the whole run."""
    info = store.run_info(run_ref)
    if info.searcher == IMPORT_KIND:
        raise InputError(f"run {info.id} was imported from a file; there is nothing to search")
    base = settings or RunSettings()
    saved = info.options
    settings = RunSettings(
        depth=info.depth,
        concurrency=base.concurrency if settings else int(saved.get("concurrency", 4)),
        rate_limit=base.rate_limit if settings else saved.get("rate_limit"),
        retry=base.retry,
        batch_size=base.batch_size,
        flush_seconds=base.flush_seconds,
        heartbeat_seconds=base.heartbeat_seconds,
        cache_dir=base.cache_dir,
    )
    metrics = [str(m) for m in parse_all(saved.get("metrics"))]
    config = store.config_version(VersionRef(info.config, info.config_version))
    content = store.load_test_set(VersionRef(info.test_set, info.test_set_version))
    searcher = _create_searcher(store, config.searcher, config.params, content, settings)
    with searcher:
        info = store.reopen_run(info.id)
        outcomes = store.run_outcomes(info.id)
        finished = set(outcomes.loc[outcomes["status"] == "ok", "query_id"])
        queries = [
            (query_id, text)
            for query_id, text in zip(
                content.queries["query_id"], content.queries["text"], strict=True
            )
            if query_id not in finished
        ]
        return _drive(store, info.id, searcher, queries, content, metrics, settings, progress)


# Always scored with a run: a comparison's judged-coverage guard needs how many documents each
# query returned, to tell "more unjudged documents" from "fewer documents".
COVERAGE_METRICS = ("NumRet",)


def _with_coverage(metrics: Sequence[str | Metric] | None) -> list[str]:
    chosen = [str(m) for m in parse_all([str(m) for m in metrics] if metrics else None)]
    return chosen + [m for m in COVERAGE_METRICS if m not in chosen]


def default_cache_dir(store: Store) -> Path:
    """Where searchers cache indexes: next to a SQLite database file, else the user cache."""
    database = sqlite_file(store.url)
    if database is not None:
        return database.resolve().parent / f"{database.stem}-cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evalplat"


def rescore(
    store: Store,
    run_ref: str | int,
    test_set_ref: str | VersionRef | None = None,
    *,
    metrics: Sequence[str | Metric] | None = None,
) -> RunInfo:
    """Score a stored run again, against another version of its test set (default: the
    latest), without searching; the new evaluation becomes the run's shown scores."""
    info = store.run_info(run_ref)
    if info.status == "running":
        raise InputError(f"run {info.id} is still running; rescore it when it has finished")
    target = store.test_set_version(test_set_ref or info.test_set)
    if target.name != info.test_set:
        raise InputError(
            f"run {info.id} ran on test set '{info.test_set}', not '{target.name}': "
            "rescoring needs a version of the same test set"
        )
    key = VersionRef(target.name, target.version)
    chosen = _with_coverage(metrics)
    if not metrics:
        chosen = _with_coverage(info.options.get("metrics"))
    content = store.load_test_set(key)
    record = evaluation_record(
        content, store.load_results(info.id), chosen, store.test_set_version_id(key)
    )
    return store.add_evaluation(info.id, record)


def import_run(
    store: Store,
    path: str | Path,
    config: str,
    test_set_ref: str | VersionRef,
    *,
    label: str | None = None,
    metrics: Sequence[str | Metric] | None = None,
) -> RunInfo:
    """Store a TREC run file as a complete run of a config version, and score it.

    Ranks are decided here, once, as trec_eval does: score descending, ties by doc id
    descending (the file's rank column is ignored). Queries of the test set missing from the
    file have no results (they score 0); queries not in the test set are dropped and counted in
    the run's options as ``run_only_queries``.
    """
    from evalplat.formats.trec import read_run

    chosen = _with_coverage(metrics)
    frame = read_run(path)
    test_set = store.test_set_version(test_set_ref)
    key = VersionRef(test_set.name, test_set.version)
    content = store.load_test_set(key)
    known = set(content.queries["query_id"])
    run_only = sorted(set(frame["query_id"]) - known)
    frame = frame[frame["query_id"].isin(known)]
    ranked = frame.sort_values(
        ["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable"
    )
    config_version_id = store.import_config_version(config, label)
    test_set_version_id = store.test_set_version_id(key)
    depth = int(ranked.groupby("query_id").size().max()) if len(ranked) else 0
    options = {"metrics": chosen, "source": Path(path).name, "run_only_queries": len(run_only)}
    run_id = store.create_run(
        config_version_id,
        test_set_version_id,
        depth=depth,
        trigger="import",
        queries_total=len(content.queries),
        options=options,
    )
    hits: dict[str, list[tuple[str, float | None]]] = {
        qid: [] for qid in content.queries["query_id"]
    }
    for qid, doc_id, score in zip(
        ranked["query_id"], ranked["doc_id"], ranked["score"], strict=True
    ):
        hits[qid].append((doc_id, float(score)))
    outcomes = [QueryOutcome(qid, "ok", found) for qid, found in hits.items()]
    for start in range(0, len(outcomes), 1000):
        store.record_outcomes(run_id, outcomes[start : start + 1000])
    return _finish(store, run_id, content, chosen)


def evaluation_record(
    content: TestSetContent, results: pd.DataFrame, metrics: list[str], test_set_version_id: int
) -> EvaluationRecord:
    """Score ranked ``results`` (``query_id, doc_id, rank, score``) against ``content``'s
    judgments with the evaluation engine, in the given (stored) order, over the test set's
    queries as topics."""
    from evalplat.evaluation import evaluate

    run_frame = results.sort_values(["query_id", "rank"], kind="stable")[
        ["query_id", "doc_id", "rank", "score"]
    ].reset_index(drop=True)
    topics = list(content.queries["query_id"])
    scored = evaluate(
        content.judgments[["query_id", "doc_id", "grade"]],
        run_frame,
        metrics,
        ordering="given",
        topics=topics,
    )
    per_query = scored.per_query
    rows = zip(
        per_query["metric"].astype(str),
        per_query["query_id"].astype(str),
        per_query["value"].astype(float),
        strict=True,
    )
    means = {str(metric): (float(value), len(topics)) for metric, value in scored.means.items()}
    options = {"ordering": "given", "metrics": metrics, "topics": len(topics)}
    return EvaluationRecord(test_set_version_id, list(rows), means, options)


# ── driving one run ──────────────────────────────────────────────────────────────────────────


def _create_searcher(
    store: Store,
    kind: str,
    params: dict[str, Any],
    content: TestSetContent,
    settings: RunSettings,
) -> Searcher:
    if kind == IMPORT_KIND:
        raise InputError(
            "this config version holds imported run files and has no searcher; "
            "add a version with `evalplat config add NAME --searcher KIND`"
        )
    documents = content.documents
    context = SearchContext(
        documents=documents,
        corpus_key=None if documents is None else content.corpus_hash(),
        cache_dir=settings.cache_dir or default_cache_dir(store),
        concurrency=settings.concurrency,
    )
    return get_kind(kind).create(params, context)


def _options(metrics: list[str], settings: RunSettings) -> dict[str, Any]:
    return {
        "metrics": metrics,
        "concurrency": settings.concurrency,
        "rate_limit": settings.rate_limit,
    }


def _drive(
    store: Store,
    run_id: int,
    searcher: Searcher,
    queries: list[tuple[str, str]],
    content: TestSetContent,
    metrics: list[str],
    settings: RunSettings,
    progress: ProgressCallback | None,
) -> RunInfo:
    """Check the backend, search, score and finish the run; every exit leaves a final status
    (or, if the process dies, a heartbeat that goes stale)."""
    heartbeat = _Heartbeat(store, run_id, settings.heartbeat_seconds)
    heartbeat.start()
    try:
        try:
            searcher.check()
        except BackendUnavailableError as error:
            store.finish_run(run_id, "failed", error=str(error))
            raise BackendUnavailableError(f"{error} (run {run_id} marked failed)") from None
        try:
            _search_all(store, run_id, searcher, queries, settings, progress)
        except KeyboardInterrupt:
            store.finish_run(run_id, "interrupted", error="interrupted by the user (Ctrl-C)")
            raise RunInterruptedError(run_id) from None
        try:
            return _finish(store, run_id, content, metrics)
        except Exception as error:
            # Scoring failed after the searching: keep the results, say why, let it surface.
            store.finish_run(run_id, "failed", error=f"scoring failed: {error}")
            raise
    finally:
        heartbeat.stop()


def _search_all(
    store: Store,
    run_id: int,
    searcher: Searcher,
    queries: list[tuple[str, str]],
    settings: RunSettings,
    progress: ProgressCallback | None,
) -> None:
    policy = settings.retry or RetryPolicy(
        retries=3 if searcher.retries is None else searcher.retries
    )
    limiter = None if settings.rate_limit is None else RateLimiter(settings.rate_limit)
    total = len(queries)
    finished = 0
    batch: list[QueryOutcome] = []
    last_flush = time.monotonic()
    if progress is not None:
        progress(0, total)
    executor = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="evalplat-search")
    pending: set[Future[QueryOutcome]] = set()
    try:
        pending = {
            executor.submit(_search_one, searcher, qid, text, settings.depth, policy, limiter)
            for qid, text in queries
        }
        while pending:
            done, pending = wait(
                pending, timeout=settings.flush_seconds, return_when=FIRST_COMPLETED
            )
            batch.extend(future.result() for future in done)
            finished += len(done)
            now = time.monotonic()
            if len(batch) >= settings.batch_size or now - last_flush >= settings.flush_seconds:
                store.record_outcomes(run_id, batch)
                batch = []
                last_flush = now
            if progress is not None and done:
                progress(finished, total)
        store.record_outcomes(run_id, batch)
        batch = []
    except KeyboardInterrupt:
        # Keep what already finished, so resume does not search it again.
        executor.shutdown(wait=False, cancel_futures=True)
        batch.extend(f.result() for f in pending if f.done() and not f.cancelled())
        store.record_outcomes(run_id, batch)
        raise
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def _search_one(
    searcher: Searcher,
    query_id: str,
    text: str,
    depth: int,
    policy: RetryPolicy,
    limiter: RateLimiter | None,
) -> QueryOutcome:
    """Search one query with retries. Latency is that of the successful attempt (what the
    engine costs), not the backoff sleeps before it."""
    attempts = 0
    latency_ms: float | None = None

    def attempt() -> list[tuple[str, float]]:
        nonlocal attempts, latency_ms
        attempts += 1
        if limiter is not None:
            limiter.acquire()
        start = time.perf_counter()
        hits = searcher.search(query_id, text, depth)
        latency_ms = (time.perf_counter() - start) * 1000.0
        return hits

    try:
        hits = call_with_retries(attempt, policy)
    except SearchError as error:
        return QueryOutcome(query_id, "failed", attempts=attempts, error=str(error))
    except Exception as error:  # a bug in a user's python/command searcher fails one query
        message = f"{type(error).__name__}: {error}"
        return QueryOutcome(query_id, "failed", attempts=attempts, error=message)
    hits = hits[:depth]
    seen: set[str] = set()
    for doc_id, _ in hits:
        if doc_id in seen:
            # A ranking with a repeated document has no trec_eval meaning; say so, don't guess.
            error_text = f"the engine returned document {doc_id!r} twice in one ranking"
            return QueryOutcome(query_id, "failed", attempts=attempts, error=error_text)
        seen.add(doc_id)
    return QueryOutcome(query_id, "ok", hits, latency_ms=latency_ms, attempts=attempts)


def _finish(store: Store, run_id: int, content: TestSetContent, metrics: list[str]) -> RunInfo:
    """Score the stored results and set the final status, in one transaction."""
    outcomes = store.run_outcomes(run_id)
    ok = int((outcomes["status"] == "ok").sum())
    failed = int((outcomes["status"] == "failed").sum())
    missing = len(content.queries) - ok - failed
    if ok == 0:
        first = outcomes.loc[outcomes["status"] == "failed", "error"]
        reason = f"; first error: {first.iloc[0]}" if len(first) else ""
        return store.finish_run(
            run_id, "failed", error=f"all {failed + missing} queries failed{reason}"
        )
    info = store.run_info(run_id)
    record = evaluation_record(
        content, store.load_results(run_id), metrics, info.test_set_version_id
    )
    if failed == 0 and missing == 0:
        return store.finish_run(run_id, "complete", evaluation=record)
    problem = f"{failed + missing} of {len(content.queries)} queries failed"
    return store.finish_run(run_id, "partial", error=problem, evaluation=record)


class _Heartbeat:
    """Refreshes the run's heartbeat every ``interval`` seconds from a daemon thread."""

    def __init__(self, store: Store, run_id: int, interval: float) -> None:
        self._store = store
        self._run_id = run_id
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="evalplat-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._interval + 5)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._store.heartbeat(self._run_id)
            except Exception:  # a database hiccup: the next beat (or batch) tries again
                continue
