"""Online measures as one SQL statement, in the subset DuckDB, PostgreSQL and warehouses share.

:func:`session_sql` turns a list of online measures into a statement over two relations, given
as ``SELECT``s that the caller builds for its source (stored tables, Parquet files, warehouse
tables):

- ``searches``: ``version_id`` (int), ``query_id``, ``session_id``, ``t`` (epoch seconds, a
  double), ``hits`` (hits shown);
- ``events``: ``query_id``, ``action``, ``t``, ``position`` (1-based or NULL), ``value``.

It returns one row per (config version, window, session) with ``searches``, ``events``,
``first_t``/``last_t`` (its first and last search) and one column per measure (``m0``, ``m1``,
... in the order given; NULL for an unknown value). The definitions are those of
``evalplat.metrics.online`` (per search, then the mean over the session's searches, or read from
the session's events as a whole), so the SQL and the NumPy kernels give the same values; a test
checks it on one log. An event goes with its search (its window and session are the search's).

Only ANSI constructs are used: ``CASE``, ``LEFT JOIN``, ``GROUP BY``, ``COALESCE``, ``NULLIF``,
``FLOOR``, aggregates and ``LEAD(...) OVER``. What differs between dialects is the name of the
double type, how a timestamp becomes epoch seconds and an array's length; :data:`DIALECTS` holds
those few spellings.

The events are grouped per search once (``pe``), without joining them to their searches first;
SessionSuccess needs each success event's next search of the session, which for events between
their search and the session's next one (``LEAD``) is that next search, so only the searches
with an event outside that span are checked event by event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalplat.errors import InputError

if TYPE_CHECKING:
    from evalplat.metrics.registry import Metric

DAY_SECONDS = 86400


@dataclass(frozen=True)
class Dialect:
    """The spellings that differ: the double type, epoch seconds of a timestamp ``{}``, the
    length of an array ``{}``."""

    double: str
    epoch: str
    array_length: str


DIALECTS: dict[str, Dialect] = {
    "duckdb": Dialect("DOUBLE", "epoch_us({}) / 1000000.0", "len({})"),
    "postgresql": Dialect("DOUBLE PRECISION", "EXTRACT(EPOCH FROM {})", "cardinality({})"),
    "trino": Dialect("DOUBLE", "to_unixtime({})", "cardinality({})"),
    "bigquery": Dialect("FLOAT64", "UNIX_MICROS({}) / 1000000.0", "ARRAY_LENGTH({})"),
    "hive": Dialect("DOUBLE", "CAST({} AS DOUBLE)", "size({})"),  # Spark Thrift server
    "databricks": Dialect("DOUBLE", "CAST({} AS DOUBLE)", "size({})"),
}


def dialect(name: str) -> Dialect:
    """The spellings of a SQLAlchemy dialect name; ``InputError`` for one not known to work."""
    found = DIALECTS.get(name)
    if found is None:
        raise InputError(
            f"events cannot be aggregated in a {name!r} database "
            f"(expected one of: {', '.join(sorted(DIALECTS))})"
        )
    return found


def quote(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def session_sql(
    metrics: Sequence[Metric],
    searches: str,
    events: str,
    *,
    window: str,
    sql: Dialect,
    since: float | None = None,
) -> str:
    """The statement (module doc) computing ``metrics`` per version, window and session.

    ``window`` is ``day`` (UTC days, numbered from the epoch) or ``all`` (one window, 0). With
    ``since`` (epoch seconds), only searches of windows starting at or after it are read."""
    if window not in ("day", "all"):
        raise InputError(f"window must be one of day, all, got {window!r}")
    double = sql.double
    w = f"FLOOR(t / {DAY_SECONDS})" if window == "day" else "0"
    where = ""
    if since is not None and window == "day":
        where = f" WHERE FLOOR(t / {DAY_SECONDS}) * {DAY_SECONDS} >= {float(since)!r}"
    per_event: list[str] = []  # aggregates of one search's events (the ``pe`` relation)
    success = False
    per_session: list[str] = []
    joins: list[str] = []
    ctes: list[str] = []
    for i, metric in enumerate(metrics):
        kind = _kind(metric)
        col = f"m{i}"
        if kind == "ctr":
            cut = "" if metric.cutoff is None else f" AND position <= {int(metric.cutoff)}"
            per_event.append(f"MAX(CASE WHEN action = 'click'{cut} THEN 1 ELSE 0 END) AS e{i}")
            per_session.append(f"AVG(CAST(COALESCE(e{i}, 0) AS {double})) AS {col}")
        elif kind == "mrr":
            per_event.append(
                "MIN(CASE WHEN action = 'click' AND position IS NOT NULL THEN position END) "
                f"AS e{i}"
            )
            per_session.append(
                f"AVG(CASE WHEN e{i} IS NULL THEN CAST(0 AS {double}) "
                f"ELSE 1.0 / CAST(e{i} AS {double}) END) AS {col}"
            )
        elif kind == "abandonment":
            per_session.append(
                f"AVG(CAST(CASE WHEN n_events IS NULL THEN 1 ELSE 0 END AS {double})) AS {col}"
            )
        elif kind == "zero_result":
            per_session.append(
                f"AVG(CAST(CASE WHEN hits = 0 THEN 1 ELSE 0 END AS {double})) AS {col}"
            )
        elif kind == "conversion":
            action = quote(str(metric.param("action") or "purchase").lower())
            per_event.append(f"MAX(CASE WHEN action = {action} THEN 1 ELSE 0 END) AS e{i}")
            per_session.append(f"CAST(COALESCE(MAX(e{i}), 0) AS {double}) AS {col}")
        elif kind == "rating":
            rated = "action = 'rating' AND value IS NOT NULL"
            per_event.append(f"SUM(CASE WHEN {rated} THEN CAST(value AS {double}) END) AS e{i}")
            per_event.append(f"SUM(CASE WHEN {rated} THEN 1 ELSE 0 END) AS n{i}")
            per_session.append(f"SUM(e{i}) / NULLIF(SUM(n{i}), 0) AS {col}")
        elif kind == "session_success":
            action = quote(str(metric.param("action") or "click").lower())
            span = float(metric.param("window"))  # type: ignore[arg-type]
            success = True
            per_event.append(f"MIN(CASE WHEN action = {action} THEN t END) AS a{i}")
            per_event.append(f"MAX(CASE WHEN action = {action} THEN t END) AS b{i}")
            # Events between their search and the session's next search (the usual case): the
            # first search after any of them is that next one, so the earliest decides.
            inside = f"a{i} >= t AND (next_t IS NULL OR b{i} < next_t)"
            quick = f"{inside} AND (next_t IS NULL OR next_t > a{i} + {span!r})"
            # Any other search's events, one by one, against every search of the session.
            ctes.append(
                f"g{i} AS (SELECT DISTINCT version_id, w, session_id FROM ("
                "SELECT ps.version_id, ps.w, ps.session_id, e.query_id, e.t, "
                f"COUNT(later.t) AS n FROM ps JOIN ({events}) AS e ON e.query_id = ps.search_id "
                "LEFT JOIN sw AS later ON later.version_id = ps.version_id AND later.w = ps.w "
                "AND later.session_id = ps.session_id AND later.t > e.t "
                f"AND later.t <= e.t + {span!r} WHERE e.action = {action} "
                f"AND ps.a{i} IS NOT NULL AND NOT (ps.a{i} >= ps.t AND (ps.next_t IS NULL "
                f"OR ps.b{i} < ps.next_t)) "
                "GROUP BY ps.version_id, ps.w, ps.session_id, e.query_id, e.t) AS x "
                "WHERE n = 0)"
            )
            joins.append(_join(f"g{i}"))
            per_session.append(
                f"CAST(MAX(CASE WHEN a{i} IS NOT NULL AND {quick} THEN 1 "
                f"WHEN g{i}.session_id IS NOT NULL THEN 1 ELSE 0 END) AS {double}) AS {col}"
            )
    per_event.append("COUNT(*) AS n_events")
    sessions = ",\n  ".join(
        [
            *("ps.version_id", "ps.w", "ps.session_id", "COUNT(*) AS searches"),
            *("COALESCE(SUM(n_events), 0) AS events", "MIN(t) AS first_t", "MAX(t) AS last_t"),
            *per_session,
        ]
    )
    event_columns = ",\n    ".join(per_event)
    # the time of the session's next search (ties in time: by id), for SessionSuccess
    next_t = (
        "LEAD(t) OVER (PARTITION BY version_id, w, session_id ORDER BY t, query_id)"
        if success
        else f"CAST(NULL AS {double})"
    )
    extra = "".join(f",\n{cte}" for cte in ctes)
    return f"""WITH sw AS (
  SELECT version_id, query_id, session_id, t, hits, {w} AS w FROM ({searches}) AS s{where}
),
pe AS (
  SELECT query_id,
    {event_columns}
  FROM ({events}) AS e GROUP BY query_id
),
sn AS (
  SELECT version_id, w, session_id, query_id, t, hits, {next_t} AS next_t FROM sw
),
ps AS (
  SELECT sn.version_id, sn.w, sn.session_id, sn.query_id AS search_id, sn.t, sn.hits, sn.next_t,
    pe.*
  FROM sn LEFT JOIN pe ON pe.query_id = sn.query_id
){extra}
SELECT
  {sessions}
FROM ps{"".join(joins)}
GROUP BY ps.version_id, ps.w, ps.session_id
ORDER BY ps.version_id, ps.w, ps.session_id"""


def _join(name: str) -> str:
    return (
        f"\nLEFT JOIN {name} ON {name}.version_id = ps.version_id AND {name}.w = ps.w "
        f"AND {name}.session_id = ps.session_id"
    )


def _kind(metric: Metric) -> str:
    compute = metric.spec.compute
    if not isinstance(compute, str) or not compute.startswith("online:"):
        raise InputError(f"{metric} is not an online measure (online:...)")
    return compute.split(":", 1)[1]
