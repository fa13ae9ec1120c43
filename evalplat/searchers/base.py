"""What every searcher is: ``search(query_id, text, depth) -> [(doc_id, score), ...]``.

The runner calls ``search`` from a thread pool, so implementations must be thread-safe. The
errors say whether trying the same query again can help:

- ``TransientSearchError`` (connection refused or reset, timeout, HTTP 429 and 5xx, a crashed
  engine process): worth retrying, after ``retry_after`` seconds when the backend said so.
- ``SearchError`` (malformed response, HTTP 4xx other than 429, an SQL error): permanent for
  this query; the runner records it as failed without retrying.
- ``BackendUnavailableError`` (from ``check``): the backend cannot be used at all, so the run
  should stop before sending the first query (exit code 3, one line).

Messages are one line a user can act on and never contain expanded ``${ENV}`` secrets: they
name the configured (unexpanded) URL or command.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from operator import itemgetter
from types import TracebackType
from typing import Any, Self

from evalplat.errors import OperationalError

_timing = threading.local()


def begin_request_timing() -> None:
    """Forget the request time recorded on this thread (the runner, before each attempt)."""
    _timing.ms = None


def record_request_ms(ms: float) -> None:
    """A searcher that knows when its request left and its answer came back records that
    time here: the query's latency then leaves out what waited before the send (a free
    connection or engine process, rendering the request, parsing the answer)."""
    _timing.ms = ms


def request_ms() -> float | None:
    """The request time a searcher recorded on this thread since ``begin_request_timing``."""
    value: float | None = getattr(_timing, "ms", None)
    return value


Hit = tuple[str, float]
"""One result: (doc id, score). A searcher returns hits in the engine's order."""

HitFields = dict[str, Any]
"""Document field values read from one hit: field name -> JSON value (missing names left out)."""


class SearchError(OperationalError):
    """A query failed in a way that retrying will not fix (malformed response, HTTP 4xx)."""


class TransientSearchError(SearchError):
    """A query failed in a way that may pass on retry (timeout, connection error, 429, 5xx).

    ``retry_after`` is the backend's requested wait in seconds (HTTP ``Retry-After``), if any.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BackendUnavailableError(OperationalError):
    """The backend cannot be used at all (unreachable, refusing credentials, missing index)."""


class Searcher(ABC):
    """A configured search backend. Use as a context manager, or call ``close`` when done.

    ``retries`` is the searcher's own retry count when its params set one (the ``http``
    searcher's ``retries``); ``None`` means the runner's default policy applies.
    """

    kind: str = ""
    retries: int | None = None

    @abstractmethod
    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        """Return at most ``depth`` hits for ``text``, best first (the engine's order).

        Raises ``TransientSearchError`` or ``SearchError``; an empty list means "no results".
        """

    def search_with_fields(
        self, query_id: str, text: str, depth: int
    ) -> tuple[list[Hit], list[HitFields] | None]:
        """Hits as ``search`` gives them, and the field values read from each (parallel list).

        ``None`` when the searcher reads no fields from its hits (every kind but a configured
        ``http`` searcher); the runner stores what it gets with each result.
        """
        return self.search(query_id, text, depth), None

    def check(self) -> None:
        """Make one cheap request; raise ``BackendUnavailableError`` if the backend is unusable.

        The default does nothing: searchers with nothing remote to reach have nothing to check.
        """
        return None

    def close(self) -> None:
        """Release connections, processes and files. Safe to call twice."""
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def score_from_rank(rank: int, count: int) -> float:
    """Score for an engine that gives none: ``count - rank`` (rank 0-based), so the order holds.

    Used when a response has no score (Elasticsearch sorted by a field returns ``_score: null``)
    so that rankings rebuilt from scores keep the engine's order.
    """
    return float(count - rank)


def shorten(text: str, limit: int = 120) -> str:
    """One line of at most ``limit`` characters, for quoting responses in error messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def hits_from_results(results: Any, source: str) -> list[Hit]:
    """Normalise ``[(id, score)]`` or ``[{"id": .., "score": ..}]`` into hits.

    A missing or null score becomes ``score_from_rank`` so the given order is kept.
    """
    if not isinstance(results, list | tuple):
        raise SearchError(f"{source} returned {type(results).__name__}, expected a list of hits")
    plain = _plain_hits(results)
    if plain is not None:
        return plain
    hits: list[Hit] = []
    for rank, item in enumerate(results):
        if isinstance(item, Mapping):
            doc_id = item.get("id", item.get("doc_id"))
            score = item.get("score")
        elif isinstance(item, list | tuple) and len(item) == 2:
            doc_id, score = item
        else:
            raise SearchError(
                f"{source}: result {rank + 1} is {shorten(repr(item))}, "
                "expected (doc_id, score) or {'id': ..., 'score': ...}"
            )
        if doc_id is None or isinstance(doc_id, bool | float | list | dict):
            raise SearchError(f"{source}: result {rank + 1} has no usable doc id: {doc_id!r}")
        if score is None:
            score = score_from_rank(rank, len(results))
        try:
            hits.append((str(doc_id), float(score)))
        except (TypeError, ValueError):
            raise SearchError(
                f"{source}: result {rank + 1} has a non-numeric score {shorten(repr(score))}"
            ) from None
    return hits


def _plain_hits(results: list[Any] | tuple[Any, ...]) -> list[Hit] | None:
    """The hits of ``[(str, float), ...]``, the common answer, checked a column at a time;
    None for anything else, which ``hits_from_results`` takes item by item. The columns are
    read with ``itemgetter``, which makes no object per hit: transposing with ``zip(*results)``
    made an iterator per hit, and on 10,000 queries of 1,000 hits for 20 configs those were
    two thirds of a night's young collections."""
    if not results or set(map(type, results)) != {tuple} or set(map(len, results)) != {2}:
        return None
    if set(map(type, map(_DOC_ID, results))) != {str}:
        return None
    score_types = set(map(type, map(_SCORE, results)))
    if score_types == {float}:  # already hits: a new list of the same (immutable) tuples
        return list(results)
    if not score_types <= {float, int}:
        return None
    return list(zip(map(_DOC_ID, results), map(float, map(_SCORE, results)), strict=True))


_DOC_ID, _SCORE = itemgetter(0), itemgetter(1)
