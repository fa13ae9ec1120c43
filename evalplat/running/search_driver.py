"""The search driver: search a run's queries, have them scored, finish the run.

``drive`` checks the backend once (unusable → the run is ``failed`` and
``BackendUnavailableError`` is raised before any query is sent), then searches with a thread
pool of ``concurrency`` workers. Each query is retried on transient errors (timeouts,
connection errors, 429/5xx, honouring ``Retry-After``) by ``call_with_retries``; a query that
still fails is recorded as ``failed`` with its error, never silently scored 0. Outcomes are
committed in batches as they finish, from the main thread only (one writer, friendly to SQLite);
a heartbeat thread keeps the run visibly alive meanwhile.

Final status: ``complete`` when every query succeeded, ``partial`` when some failed, ``failed``
when none succeeded, ``interrupted`` on Ctrl-C (``RunInterruptedError``). Scoring and the final
status are ``evalplat.running.run_scoring``'s: one transaction, so a process killed at any moment
leaves a ``running`` run that readers show as ``interrupted``, never one that looks complete.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError, OperationalError
from evalplat.inputs.validation import (
    CONCURRENCY_MAX,
    RATE_LIMIT_MIN,
    check_depth,
    check_number,
    result_id_problem,
    result_ids_usable,
)
from evalplat.running.collector import steady_collector
from evalplat.running.run_scoring import (
    HeldRun,
    document_fields,
    evaluation_record,
    score_and_finish,
)
from evalplat.searchers import (
    BackendUnavailableError,
    Hit,
    HitFields,
    RateLimiter,
    RetryPolicy,
    Searcher,
    SearchError,
    call_with_retries,
)
from evalplat.searchers.base import begin_request_timing, request_ms
from evalplat.store.runs import QueryOutcome, RunInfo

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.testsets.content import TestSetContent


__all__ = [
    "ProgressCallback",
    "RunInterruptedError",
    "RunSettings",
    "document_fields",
    "drive",
    "evaluation_record",
    "score_and_finish",
    "search_unstored",
]

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
    batch_size: int = 2000  # queries per committed batch
    flush_seconds: float = 2.0  # ... or fewer, when this long has passed
    heartbeat_seconds: float = 5.0
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        check_depth(self.depth)
        if not 1 <= self.concurrency <= CONCURRENCY_MAX:
            raise InputError(
                f"concurrency must be from 1 to {CONCURRENCY_MAX}, got {self.concurrency}"
            )
        if self.rate_limit is not None:
            check_number(self.rate_limit, "--rate-limit", minimum=RATE_LIMIT_MIN)


def drive(
    store: Store,
    run_id: int,
    searcher: Searcher,
    queries: list[tuple[str, str]],
    content: TestSetContent,
    metrics: list[str],
    settings: RunSettings,
    progress: ProgressCallback | None,
    *,
    new_run: bool = False,
) -> RunInfo:
    """Check the backend, search, score and finish the run; every exit leaves a final status
    (or, if the process dies, a heartbeat that goes stale). A ``new_run`` (nothing of it stored
    before) is scored from the results held in memory as they were searched; a resumed one from
    the store."""
    held = HeldRun(whole=new_run)
    heartbeat = _Heartbeat(store, run_id, settings.heartbeat_seconds)
    heartbeat.start()
    try:
        try:
            searcher.check()
        except BackendUnavailableError as error:
            store.finish_run(run_id, "failed", error=str(error))
            raise BackendUnavailableError(f"{error} (run {run_id} marked failed)") from None
        try:
            with steady_collector():  # latency is the engine's, not a collector pause
                _search_all(store, run_id, searcher, queries, settings, progress, held)
        except KeyboardInterrupt:
            store.finish_run(run_id, "interrupted", error="interrupted by the user (Ctrl-C)")
            raise RunInterruptedError(run_id) from None
        try:
            return score_and_finish(store, run_id, content, metrics, held)
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
    held: HeldRun,
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
    workers = _Workers(settings.concurrency, searcher, queries, settings.depth, policy, limiter)
    try:
        while finished < total:
            done = workers.finished(settings.flush_seconds)
            batch.extend(done)
            finished += len(done)
            now = time.monotonic()
            if len(batch) >= settings.batch_size or now - last_flush >= settings.flush_seconds:
                store.record_outcomes(run_id, batch, results=held.add(run_id, batch))
                batch = []
                last_flush = now
            if progress is not None and done:
                progress(finished, total)
        store.record_outcomes(run_id, batch, results=held.add(run_id, batch))
        batch = []
    except KeyboardInterrupt:
        # Keep what already finished, so resume does not search it again.
        workers.stop()
        batch.extend(workers.finished(0))
        store.record_outcomes(run_id, batch)
        raise
    finally:
        workers.stop()


class _Workers:
    """``concurrency`` threads that take the next query from a shared queue, search it and put
    its outcome on another, until the queries are done or ``stop`` (the queries not started
    then are never sent). One future per query, as a thread pool makes, cost more than a lookup
    searcher answering it; the queue gives the main thread what finished without walking what
    did not."""

    def __init__(
        self,
        concurrency: int,
        searcher: Searcher,
        queries: list[tuple[str, str]],
        depth: int,
        policy: RetryPolicy,
        limiter: RateLimiter | None,
    ) -> None:
        # the queries to search, taken by whichever worker is free; a queue, not an iterator
        # behind a lock: workers took turns at that lock on every lookup-speed query, waiting
        # to run on it (docs/performance.md)
        self._next: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
        for query in queries:
            self._next.put(query)
        self._stopped = threading.Event()
        self._done: queue.SimpleQueue[QueryOutcome] = queue.SimpleQueue()
        self._search = (searcher, depth, policy, limiter)
        for number in range(min(concurrency, len(queries))):
            thread = threading.Thread(
                target=self._loop, name=f"evalplat-search-{number}", daemon=True
            )
            thread.start()

    def _loop(self) -> None:
        searcher, depth, policy, limiter = self._search
        while not self._stopped.is_set():
            try:
                query = self._next.get_nowait()
            except queue.Empty:
                return
            try:
                outcome = search_one(searcher, query[0], query[1], depth, policy, limiter)
            except BaseException as error:  # SystemExit from a user's searcher: one failed query
                message = _text(f"{type(error).__name__}: {error}")
                outcome = QueryOutcome(query[0], "failed", error=message)
            self._done.put(outcome)

    def finished(self, timeout: float) -> list[QueryOutcome]:
        """The outcomes finished since the last call: waits up to ``timeout`` seconds for the
        first (not at all with 0)."""
        done: list[QueryOutcome] = []
        try:
            done.append(self._done.get(timeout=timeout) if timeout else self._done.get_nowait())
        except queue.Empty:
            return done
        while True:
            try:
                done.append(self._done.get_nowait())
            except queue.Empty:
                return done

    def stop(self) -> None:
        self._stopped.set()


def search_unstored(
    searcher: Searcher, queries: list[tuple[str, str]], settings: RunSettings
) -> list[QueryOutcome]:
    """Search ``queries`` with the same retries, rate limit and thread pool as a run, keeping
    the outcomes in memory (a sweep's early rungs score settings on subsets this way). With
    one worker the queries are searched on the calling thread: handing each to a pool thread
    and its outcome back costs CPU and buys nothing (docs/performance.md)."""
    policy = settings.retry or RetryPolicy(
        retries=3 if searcher.retries is None else searcher.retries
    )
    limiter = None if settings.rate_limit is None else RateLimiter(settings.rate_limit)
    if settings.concurrency == 1:  # one at a time: no thread to hand each query to and back
        with steady_collector():
            return [
                search_one(searcher, qid, text, settings.depth, policy, limiter)
                for qid, text in queries
            ]
    with (
        steady_collector(),
        ThreadPoolExecutor(settings.concurrency, thread_name_prefix="evalplat-search") as pool,
    ):
        futures = [
            pool.submit(search_one, searcher, qid, text, settings.depth, policy, limiter)
            for qid, text in queries
        ]
        return [future.result() for future in futures]


def search_one(
    searcher: Searcher,
    query_id: str,
    text: str,
    depth: int,
    policy: RetryPolicy,
    limiter: RateLimiter | None,
) -> QueryOutcome:
    """Search one query with retries. Latency is that of the successful attempt (what the
    engine costs), not the backoff sleeps before it, measured from the request's send when the
    searcher records it (``evalplat.searchers.base.record_request_ms``), not from when it waited
    for a connection or an engine process."""
    attempts = 0
    latency_ms: float | None = None

    def attempt() -> tuple[list[Hit], list[HitFields] | None]:
        nonlocal attempts, latency_ms
        attempts += 1
        if limiter is not None:
            limiter.acquire()
        begin_request_timing()
        start = time.perf_counter()
        found = searcher.search_with_fields(query_id, text, depth)
        # from the send when the searcher knows it (http, command), else the call
        sent = request_ms()
        latency_ms = (time.perf_counter() - start) * 1000.0 if sent is None else sent
        return found

    try:
        hits, fields = call_with_retries(attempt, policy)
    except SearchError as error:
        return QueryOutcome(query_id, "failed", attempts=attempts, error=_text(str(error)))
    except Exception as error:  # a bug in a user's python/command searcher fails one query
        message = f"{type(error).__name__}: {error}"
        return QueryOutcome(query_id, "failed", attempts=attempts, error=_text(message))
    hits = hits[:depth]
    fields = None if fields is None else fields[:depth]
    problem = _ranking_problem(hits)
    if problem is not None:
        return QueryOutcome(query_id, "failed", attempts=attempts, error=problem)
    return QueryOutcome(
        query_id, "ok", hits, latency_ms=latency_ms, attempts=attempts, fields=fields
    )


def _ranking_problem(hits: list[Hit]) -> str | None:
    """Why a ranking cannot be stored (its first unusable or repeated doc id), or None. The
    whole ranking is checked at once; only a ranking with a problem is walked id by id."""
    if result_ids_usable([doc_id for doc_id, _ in hits]):
        return None
    seen: set[str] = set()
    for doc_id, _ in hits:
        problem = result_id_problem(doc_id)
        if problem is not None:
            # Stored as it came, the id would break the database (or not fit its column):
            # the query fails, the run is partial, and `--resume` can finish it.
            return _text(f"the engine returned an unusable doc id: {problem}")
        if doc_id in seen:
            # A ranking with a repeated document has no trec_eval meaning; say so, don't guess.
            return f"the engine returned document {doc_id!r} twice in one ranking"
        seen.add(doc_id)
    return None


def _text(message: str) -> str:
    """An error message as free text the database stores (an engine may send NUL bytes)."""
    return message.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


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
