"""The searcher registry: every way a run can get its results, one module per kind.

``SEARCHERS`` is the single source for the CLI's ``--searcher`` choices, docs tables and
validation of stored params. Searcher modules import their heavy libraries (httpx, Jinja2,
SQLAlchemy) when a searcher is created, so importing this registry stays cheap.

    kind = get_kind("builtin")
    params = kind.validate({"tokenizer": "porter"})          # what a config stores
    with kind.create(params, SearchContext(documents=docs)) as searcher:
        hits = searcher.search("q1", "boundary layer", depth=100)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalplat.errors import NotFoundError
from evalplat.inputs.env import expand_env, has_placeholder
from evalplat.searchers import builtin, command, http, python, sql
from evalplat.searchers.base import (
    BackendUnavailableError,
    Hit,
    HitFields,
    Searcher,
    SearchError,
    TransientSearchError,
)
from evalplat.searchers.engines import engine_of
from evalplat.searchers.kinds import Param, SearchContext, SearcherKind
from evalplat.searchers.retry import RateLimiter, RetryPolicy, call_with_retries

__all__ = [
    "SEARCHERS",
    "BackendUnavailableError",
    "Hit",
    "HitFields",
    "Param",
    "RateLimiter",
    "RetryPolicy",
    "SearchContext",
    "SearchError",
    "Searcher",
    "SearcherKind",
    "TransientSearchError",
    "call_with_retries",
    "create_searcher",
    "engine_of",
    "expand_env",
    "get_kind",
    "has_placeholder",
    "validate_config",
]

SEARCHERS: dict[str, SearcherKind] = {
    kind.name: kind for kind in (builtin.KIND, http.KIND, sql.KIND, python.KIND, command.KIND)
}


def get_kind(name: str) -> SearcherKind:
    """The registered kind called ``name``; ``NotFoundError`` lists the valid kinds."""
    kind = SEARCHERS.get(name)
    if kind is None:
        raise NotFoundError(f"unknown searcher {name!r}; choose from {', '.join(SEARCHERS)}")
    return kind


def validate_config(searcher: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Check a config the way a run would, without the network or the environment.

    The one validator behind ``config add``, ``run`` and ``nightly``: the kind exists, every
    param is known and of its type and range, strings hold no NUL, and the kind's own check
    passes (an ``http`` searcher's templates compile and its paths parse). ``${ENV}``
    placeholders are not expanded. Returns the params converted, defaults filled in.
    """
    from evalplat.inputs.validation import check_json_text

    kind = get_kind(searcher)
    check_json_text(dict(params), "config parameters")
    validated = kind.validate(params)
    if kind.check is not None:
        kind.check(validated)
    return validated


def create_searcher(
    name: str, params: dict[str, Any], context: SearchContext | None = None
) -> Searcher:
    """Validate ``params`` for the kind ``name`` and build the searcher."""
    return get_kind(name).create(params, context)
