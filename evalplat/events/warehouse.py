"""Logs that live in a warehouse: ``[events] url`` and the tables the online SQL runs over there.

A project whose logs are tables of its warehouse names them in its project file::

    [events]
    url = "trino://analyst@trino.internal:8080/hive/ubi"   # any SQLAlchemy URL
    searches = "ubi_queries"     # a table or view with one row per search
    events = "ubi_events"        # a table or view with one row per event

The searches table has ``query_id``, ``session_id``, ``timestamp`` (a timestamp with a time
zone), ``config`` (``NAME`` or ``NAME@VER``) and either ``hits`` (a count) or ``hit_ids`` (an
array); the events table ``query_id``, ``action``, ``timestamp``, ``position`` and ``value``
(``[events.columns]`` renames: ``session_id = "sid"``). The statement of ``evalplat.events.sql``
runs inside the warehouse in its dialect (:data:`evalplat.events.sql.DIALECTS`); only the
per-session rows come back. The dialect's SQLAlchemy driver is the project's to install
(``trino``, ``pyhive``, ``sqlalchemy-bigquery``).

Before the statement, :func:`check_tables` counts the rows it would misread (no query id,
session or time, a time outside 1970-01-01 to 9999-12-30, a position below 1, a value that is
not finite, a negative hit count) in one scan of each table, and refuses the tables naming the
first problem: the checks an import or an attach applies to its rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.events.sql import Dialect, quote

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Engine

SEARCH_COLUMNS = ("query_id", "session_id", "timestamp", "config", "hits", "hit_ids")
EVENT_COLUMNS = ("query_id", "action", "timestamp", "position", "value")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*){0,2}")


@dataclass(frozen=True)
class Warehouse:
    """Where a project's logs live (module doc)."""

    url: str
    searches: str = "ubi_queries"
    events: str = "ubi_events"
    columns: Mapping[str, str] = field(default_factory=dict)
    hit_column: str = "hits"  # "hits" (a count) or "hit_ids" (an array)

    def column(self, name: str) -> str:
        return self.columns.get(name, name)


def read_warehouse(data: Any, fail: Callable[..., Exception]) -> Warehouse | None:
    """The ``[events]`` table of a project file; ``fail(message, table, index, key)`` builds
    the error (``evalplat.nightly.project_reader``)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise fail("must be a table", "events")
    unknown = set(data) - {"url", "searches", "events", "columns", "hits"}
    if unknown:
        raise fail(f"unknown key {sorted(unknown)[0]!r}; expected url, searches, events, "
                   "columns, hits", "events")  # fmt: skip
    url = data.get("url")
    if not isinstance(url, str) or "://" not in url:
        raise fail("must be a SQLAlchemy URL such as trino://user@host/catalog", "events", 0, "url")
    names = {k: data.get(k, d) for k, d in (("searches", "ubi_queries"), ("events", "ubi_events"))}
    for key, value in names.items():
        if not isinstance(value, str) or not _NAME.fullmatch(value):
            raise fail("must be a table name (schema.table allowed)", "events", 0, key)
    columns = data.get("columns", {})
    if not isinstance(columns, dict):
        raise fail("must be a table of canonical = column", "events", 0, "columns")
    for canonical, theirs in columns.items():
        if canonical not in set(SEARCH_COLUMNS) | set(EVENT_COLUMNS):
            raise fail(f"unknown column {canonical!r}", "events", 0, "columns")
        if not isinstance(theirs, str) or not _NAME.fullmatch(theirs):
            raise fail(f"{canonical}: must be a column name", "events", 0, "columns")
    hits = data.get("hits", "hits")
    if hits not in ("hits", "hit_ids"):
        raise fail("must be hits (a count) or hit_ids (an array)", "events", 0, "hits")
    return Warehouse(url, names["searches"], names["events"], dict(columns), hits)


def project_warehouse(path: Path) -> Warehouse | None:
    """The ``[events]`` table of the project file at ``path`` (None without file or table)."""
    import tomllib

    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"not a valid TOML file: {error}", path=path) from None

    def fail(problem: str, table: str, index: int = 0, key: str | None = None) -> InputError:
        return InputError(f"[{table}]{'' if key is None else ' ' + key}: {problem}", path=path)

    return read_warehouse(data.get("events"), fail)


def create_engine(warehouse: Warehouse) -> Engine:
    """The warehouse's engine (its driver must be installed); ``InputError`` when it is not."""
    from sqlalchemy import create_engine as sa_create_engine
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    from evalplat.inputs.env import expand_env

    try:
        return sa_create_engine(expand_env(warehouse.url))
    except (NoSuchModuleError, ArgumentError, ImportError) as error:
        raise InputError(f"[events] url: {str(error).splitlines()[0]}") from None


def config_counts(engine: Engine, warehouse: Warehouse) -> dict[str, int]:
    """Searches per config reference in the warehouse's searches table."""
    from sqlalchemy import text

    config = warehouse.column("config")
    sql = f"SELECT {config}, COUNT(*) FROM {warehouse.searches} GROUP BY {config}"
    with engine.connect() as connection:
        rows = connection.execute(text(sql)).all()
    return {str(ref): int(n) for ref, n in rows if ref is not None}


def check_tables(engine: Engine, warehouse: Warehouse, sql: Dialect) -> None:
    """Refuse tables holding rows the online statement would misread, as an import or an attach
    refuses them: ``InputError`` naming the table, the column and how many rows."""
    from sqlalchemy import text

    col = warehouse.column
    searches = [*_common_problems(warehouse, sql),
                (f"{col('session_id')} IS NULL", "no session_id")]  # fmt: skip
    if warehouse.hit_column == "hits":
        searches.append((f"{col('hits')} < 0", "a negative hits count"))
    events = [*_common_problems(warehouse, sql),
              (f"{col('position')} < 1", "a position below 1"),
              (f"NOT ({col('value')} BETWEEN -{_DOUBLE_MAX} AND {_DOUBLE_MAX})",
               "a value that is not a finite number")]  # fmt: skip
    with engine.connect() as connection:
        for key, table, problems in (("searches", warehouse.searches, searches),
                                     ("events", warehouse.events, events)):  # fmt: skip
            sums = ", ".join(f"SUM(CASE WHEN {cond} THEN 1 ELSE 0 END)" for cond, _ in problems)
            row = connection.execute(text(f"SELECT {sums} FROM {table}")).one()
            for count, (_, message) in zip(row, problems, strict=True):
                if count:
                    rows = f"{int(count)} row" + ("" if int(count) == 1 else "s")
                    raise InputError(f"[events] {key} table {table}: {rows} with {message}")


_DOUBLE_MAX = "1.7976931348623157e308"
_LATEST_EPOCH = 253402214400  # 9999-12-31T00:00:00Z, as events.values.LATEST


def _common_problems(warehouse: Warehouse, sql: Dialect) -> list[tuple[str, str]]:
    col = warehouse.column
    epoch = sql.epoch.format(col("timestamp"))
    return [
        (f"{col('query_id')} IS NULL", "no query_id"),
        (f"{col('timestamp')} IS NULL", "no timestamp"),
        (f"{epoch} < 0 OR {epoch} >= {_LATEST_EPOCH}",
         "a timestamp outside 1970-01-01 to 9999-12-30 UTC"),
    ]  # fmt: skip


def searches_select(warehouse: Warehouse, sql: Dialect, versions: Mapping[str, int]) -> str:
    """The warehouse's searches of known config references, in the statement's columns."""
    col = warehouse.column
    cases = " ".join(f"WHEN {quote(ref)} THEN {int(v)}" for ref, v in sorted(versions.items()))
    refs = ", ".join(quote(ref) for ref in sorted(versions)) or "NULL"
    hits = col("hits") if warehouse.hit_column == "hits" else sql.array_length.format(
        col("hit_ids"))  # fmt: skip
    return (
        f"SELECT CASE {col('config')} {cases} END AS version_id, {col('query_id')} AS query_id, "
        f"{col('session_id')} AS session_id, {sql.epoch.format(col('timestamp'))} AS t, "
        f"COALESCE({hits}, 0) AS hits FROM {warehouse.searches} WHERE {col('config')} IN ({refs})"
    )


def events_select(warehouse: Warehouse, sql: Dialect) -> str:
    col = warehouse.column
    return (
        f"SELECT {col('query_id')} AS query_id, LOWER({col('action')}) AS action, "
        f"{sql.epoch.format(col('timestamp'))} AS t, {col('position')} AS position, "
        f"{col('value')} AS value FROM {warehouse.events}"
    )


def fetch_rows(engine: Engine, statement: str, columns: list[str]) -> pd.DataFrame:
    """The statement's rows, run in the warehouse, as a DataFrame."""
    import pandas as pd
    from sqlalchemy import text

    with engine.connect() as connection:
        result = connection.execute(text(statement.replace(":", "\\:")))
        return pd.DataFrame(result.all(), columns=columns)
