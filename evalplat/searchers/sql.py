"""The ``sql`` searcher: a SQL text with ``:query`` and ``:depth`` against any SQLAlchemy URL.

The statement returns rows ``(doc_id, score)`` in ranked order; the order of the rows is the
ranking (write the ``ORDER BY`` yourself). A single-column result gets scores from the rank.
Example for PostgreSQL full-text search::

    SELECT id, ts_rank(tsv, q) AS score
    FROM docs, websearch_to_tsquery('english', :query) AS q
    WHERE tsv @@ q ORDER BY score DESC, id LIMIT :depth

``url`` may hold ``${ENV}`` placeholders (a password); they are expanded when the searcher is
created and messages show the URL as configured. The connection pool holds as many
connections as the runner's concurrency. ``timeout`` becomes PostgreSQL's
``statement_timeout``; other databases have no portable per-statement timeout and ignore it.

Errors: a lost or refused connection, a cancelled statement, or a locked SQLite database is a
``TransientSearchError``; any other SQL error is a ``SearchError`` (it will fail again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.env import expand_env, has_placeholder
from evalplat.searchers.base import (
    BackendUnavailableError,
    Hit,
    Searcher,
    SearchError,
    TransientSearchError,
    score_from_rank,
    shorten,
)
from evalplat.searchers.engines import sql_engine
from evalplat.searchers.kinds import TIMEOUT_MAX, Param, SearchContext, SearcherKind

if TYPE_CHECKING:
    import sqlalchemy


class SqlSearcher(Searcher):
    """Runs the configured statement once per query through a pooled SQLAlchemy engine."""

    kind = "sql"

    def __init__(self, params: dict[str, Any], context: SearchContext) -> None:
        import sqlalchemy as sa

        self.label = _safe_label(params["url"])
        self.statement = sa.text(params["query"])
        self._uses_depth = "depth" in _binds(params["query"])
        from evalplat.db.engine import normalise_url

        url = sa.make_url(normalise_url(expand_env(params["url"]))) if params["url"] else None
        if url is None:
            raise InputError("sql searcher needs a url")
        connect_args: dict[str, Any] = {}
        if url.get_backend_name() == "postgresql" and params["timeout"] > 0:
            connect_args["options"] = f"-c statement_timeout={int(params['timeout'] * 1000)}"
        self._is_sqlite = url.get_backend_name() == "sqlite"
        pool: dict[str, Any] = {}
        if not self._is_sqlite:
            pool = {"pool_size": max(1, context.concurrency), "max_overflow": 0}
        try:
            self.engine: sqlalchemy.Engine = sa.create_engine(
                url, connect_args=connect_args, pool_pre_ping=True, **pool
            )
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as error:
            raise InputError(f"sql searcher url {self.label!r}: {error}") from None

    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        import sqlalchemy as sa

        values: dict[str, Any] = {"query": text}
        if self._uses_depth:
            values["depth"] = depth
        try:
            with self.engine.connect() as connection:
                rows = connection.execute(self.statement, values).fetchmany(depth)
        except sa.exc.DBAPIError as error:
            message = f"sql searcher {self.label!r}, query {query_id!r}: {_first_line(error)}"
            if self._is_transient(error):
                raise TransientSearchError(message) from None
            raise SearchError(message) from None
        except sa.exc.SQLAlchemyError as error:  # pool timeout and the like
            raise TransientSearchError(f"sql searcher {self.label!r}: {error}") from None
        return self._hits(rows, query_id)

    def _hits(self, rows: Sequence[Any], query_id: str) -> list[Hit]:
        hits: list[Hit] = []
        for rank, row in enumerate(rows):
            if row[0] is None:
                raise SearchError(f"sql searcher, query {query_id!r}: row {rank + 1} has no id")
            score = row[1] if len(row) > 1 and row[1] is not None else None
            try:
                value = score_from_rank(rank, len(rows)) if score is None else float(score)
            except (TypeError, ValueError):
                raise SearchError(
                    f"sql searcher, query {query_id!r}: row {rank + 1} score "
                    f"{shorten(repr(score))} is not a number"
                ) from None
            hits.append((str(row[0]), value))
        return hits

    def _is_transient(self, error: Any) -> bool:
        import sqlalchemy as sa

        if error.connection_invalidated:
            return True
        if not isinstance(error, sa.exc.OperationalError):
            return False
        if self._is_sqlite:  # sqlite reports syntax errors as OperationalError too
            text = str(error.orig).lower()
            return "locked" in text or "busy" in text
        return True

    def check(self) -> None:
        try:
            self.search("evalplat-check", "evalplat", 1)
        except SearchError as error:
            raise BackendUnavailableError(str(error)) from None

    def close(self) -> None:
        self.engine.dispose()


def _binds(query: str) -> set[str]:
    import sqlalchemy as sa

    binds = set(sa.text(query).compile().params)
    if "query" not in binds:
        raise InputError("sql searcher query must use the :query parameter")
    return binds


def check_sql(params: dict[str, Any]) -> None:
    """The statement binds ``:query``, and a url without placeholders names a database
    SQLAlchemy knows (its driver is checked when the run connects)."""
    import sqlalchemy as sa

    from evalplat.db.engine import normalise_url

    _binds(params["query"])
    if has_placeholder(params["url"]):
        return
    try:
        sa.make_url(normalise_url(params["url"]))
    except InputError as error:
        raise InputError(f"sql searcher url: {error.problem}") from None
    except sa.exc.ArgumentError:
        raise InputError(
            f"sql searcher url {_safe_label(params['url'])!r} is not a database URL "
            "(e.g. postgresql+psycopg://user@host/db or sqlite:///file.db)"
        ) from None


def _first_line(error: Any) -> str:
    original = getattr(error, "orig", None) or error
    lines = str(original).strip().splitlines()
    return shorten(lines[0] if lines else type(original).__name__, 200)


def _safe_label(url: str) -> str:
    """The URL as configured, with any literal password masked."""
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except Exception:  # a URL that does not parse is shown as written, placeholders and all
        return url


def _create(params: dict[str, Any], context: SearchContext) -> Searcher:
    return SqlSearcher(params, context)


KIND = SearcherKind(
    name="sql",
    description="a SQL statement with :query and :depth against any SQLAlchemy database URL",
    params=(
        Param("url", "str", None, "SQLAlchemy URL, e.g. postgresql+psycopg://...", required=True),
        Param(
            "query", "str", None, "SQL returning (doc_id, score) rows, best first", required=True
        ),
        Param(
            "timeout",
            "float",
            30.0,
            "seconds per statement (PostgreSQL statement_timeout)",
            above=0,
            maximum=TIMEOUT_MAX,
        ),
    ),
    factory=_create,
    check=check_sql,
    engine=sql_engine,
)
