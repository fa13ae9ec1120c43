"""Parquet logs read in place: which column holds what, checked up front, read through DuckDB.

A file holds searches, events or both, in the canonical columns of
``evalplat.events.records.FLAT_COLUMNS`` or their UBI names (``action_name``,
``query_response_hit_ids``, ``variant``, ``event_attributes.position.ordinal``, ...);
``--map canonical=theirs`` names others, and ``a.b.c`` reaches into nested structs. A row with an
action is an event; a row without one (or every row of a file without an action column) is a
search.

:func:`inspect_file` checks the schema (column kinds; a timestamp must be a Parquet timestamp
with a time zone, or integer epoch milliseconds) and :func:`check_rows` the values with one
DuckDB scan (:func:`row_problems`: ids, times and their range, hit lists with a null, empty or
repeated hit, positions, values), naming the first bad row; both raise ``InputError`` naming
the file. With ``max_invalid`` up to that many bad rows are set aside instead: the layout then
reads ``skip_invalid`` and every ``SELECT`` leaves them out (the file cannot change unnoticed).
:func:`searches_select` and :func:`events_select` are the ``SELECT``s the online statement
reads the file through.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.events.records import FLAT_COLUMNS
from evalplat.events.sql import quote

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

# where each canonical column is looked for when --map does not name it, in order
_LATEST_MS = 253402214400000  # 9999-12-31T00:00:00Z, as evalplat.events.values.LATEST
CANDIDATES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id",),
    "session_id": ("session_id", "query_attributes.session_id"),
    "client_id": ("client_id",),
    "timestamp": ("timestamp",),
    "hit_ids": ("hit_ids", "query_response_hit_ids", "query_response_object_ids"),
    "hits": ("hits",),
    "config": ("config", "variant", "query_attributes.config", "query_attributes.variant"),
    "action": ("action", "action_name"),
    "position": ("position", "event_attributes.position.ordinal"),
    "value": ("value", "event_attributes.value"),
}


@dataclass(frozen=True)
class ParquetLayout:
    """Where a file keeps each column it has (canonical name → dotted path) and the kind of
    its timestamp (``tz``: a timestamp with a zone; ``epoch_ms``: integers)."""

    path: Path
    columns: dict[str, str]
    timestamp: str
    skip_invalid: bool = False  # rows that fail a check are left out (``--max-invalid``)

    def expression(self, name: str) -> str:
        """DuckDB's reference to a canonical column (struct fields by ``['field']``)."""
        head, *rest = self.columns[name].split(".")
        return '"' + head.replace('"', '""') + '"' + "".join(f"[{quote(p)}]" for p in rest)

    def source(self) -> str:
        return f"read_parquet({quote(str(self.path))}, file_row_number = true)"

    def time(self) -> str:
        ts = self.expression("timestamp")
        if self.timestamp == "epoch_ms":
            return f"CAST({ts} AS DOUBLE) / 1000.0"
        return f"epoch_us({ts}) / 1000000.0"

    def is_event(self) -> str:
        if "action" not in self.columns:
            return "FALSE"
        return f"({self.expression('action')} IS NOT NULL AND {self.expression('action')} <> '')"

    def valid(self) -> str:
        """The condition of the rows read: every row, or the rows without a problem."""
        return f"NOT ({invalid(self)})" if self.skip_invalid else "TRUE"

    def to_dict(self) -> dict[str, Any]:
        return {"columns": self.columns, "timestamp": self.timestamp,
                "skip_invalid": self.skip_invalid}  # fmt: skip


def inspect_file(path: Path, mapping: Mapping[str, str] | None = None) -> ParquetLayout:
    """The layout of ``path``: every column found and its kind checked (module doc)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise InputError("no such file", path=path)
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"not a Parquet file ({_first_line(error)})", path=path) from None
    for canonical in mapping or {}:
        if canonical not in CANDIDATES:
            known = ", ".join(c for c in CANDIDATES if c in FLAT_COLUMNS or c == "hits")
            raise InputError(f"--map: {canonical!r} cannot be read in place (columns: {known})")
    columns: dict[str, str] = {}
    types: dict[str, pa.DataType] = {}
    for canonical, candidates in CANDIDATES.items():
        wanted = mapping.get(canonical) if mapping else None
        for dotted in (wanted,) if wanted else candidates:
            found = _field(schema, dotted)
            if found is not None:
                columns[canonical], types[canonical] = dotted, found
                break
        else:
            if wanted:
                raise InputError(f"no column {wanted!r} (mapped to {canonical})", path=path)
    for required in ("query_id", "timestamp"):
        if required not in columns:
            raise InputError(f"no {required} column", path=path)
    return ParquetLayout(path, columns, _check_types(path, types))


def _field(schema: pa.Schema, dotted: str) -> pa.DataType | None:
    import pyarrow as pa

    head, *rest = dotted.split(".")
    index = schema.get_field_index(head)
    if index < 0:
        return None
    kind = schema.field(index).type
    for part in rest:
        if not pa.types.is_struct(kind) or kind.get_field_index(part) < 0:
            return None
        kind = kind.field(kind.get_field_index(part)).type
    return kind


def _check_types(path: Path, types: dict[str, pa.DataType]) -> str:
    import pyarrow as pa

    def text(kind: pa.DataType) -> bool:
        return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))

    stamp = types["timestamp"]
    if pa.types.is_timestamp(stamp):
        if stamp.tz is None:
            raise InputError("column timestamp has no time zone (write it as a timestamp "
                             "with a zone, UTC adjusted)", path=path)  # fmt: skip
        kind = "tz"
    elif pa.types.is_integer(stamp):
        kind = "epoch_ms"
    else:
        raise InputError(f"column timestamp must be a timestamp with a time zone or epoch "
                         f"milliseconds, not {stamp}", path=path)  # fmt: skip
    for name in ("query_id", "session_id", "client_id", "config", "action"):
        if name in types and not (text(types[name]) or pa.types.is_integer(types[name])):
            raise InputError(f"column {name} must be text, not {types[name]}", path=path)
    for name in ("position", "hits"):
        if name in types and not pa.types.is_integer(types[name]):
            raise InputError(f"column {name} must be an integer, not {types[name]}", path=path)
    if "value" in types and not (
        pa.types.is_integer(types["value"]) or pa.types.is_floating(types["value"])
    ):
        raise InputError(f"column value must be a number, not {types['value']}", path=path)
    if "hit_ids" in types and not (
        pa.types.is_list(types["hit_ids"]) or pa.types.is_large_list(types["hit_ids"])
    ):
        raise InputError(f"column hit_ids must be a list, not {types['hit_ids']}", path=path)
    return kind


@dataclass(frozen=True)
class FileCounts:
    """What the scans of a file found: searches per config reference, events, duplicates, and
    the bad rows set aside (row number from 1, problem)."""

    configs: dict[str, int]
    events: int
    duplicate_searches: int
    rejects: tuple[tuple[int, str], ...] = ()

    @property
    def searches(self) -> int:
        return sum(self.configs.values())


def row_problems(layout: ParquetLayout) -> list[tuple[str, str]]:
    """(condition, problem) of every check a row must pass; a condition may be NULL (passes)."""
    col = layout.expression
    search = f"NOT {layout.is_event()}"
    ts = col("timestamp")
    if layout.timestamp == "epoch_ms":
        outside = f"{ts} < 0 OR {ts} >= {_LATEST_MS}"
    else:
        outside = (f"{ts} < TIMESTAMPTZ '1970-01-01 00:00:00+00' OR "
                   f"{ts} >= TIMESTAMPTZ '9999-12-31 00:00:00+00'")  # fmt: skip
    problems = [
        (f"{col('query_id')} IS NULL", "missing query_id"),
        (f"{ts} IS NULL", "missing timestamp"),
        (outside, "timestamp is out of range (1970-01-01 to 9999-12-30 UTC)"),
        (f"{search} AND {_session(layout)} IS NULL",
         "search has neither a session_id nor a client_id"),
    ]  # fmt: skip
    if "hit_ids" in layout.columns:
        hits = col("hit_ids")
        problems += [
            (f"list_count({hits}) < len({hits})", "a hit id is null (every position must name "
             "the hit shown there)"),
            (f"list_contains(CAST({hits} AS VARCHAR[]), '')", "a hit id is empty"),
            (f"len(list_distinct({hits})) < list_count({hits})",
             "a hit id is shown twice in one search"),
        ]  # fmt: skip
    if "hits" in layout.columns:
        problems.append((f"{col('hits')} < 0", "hits must be 0 or more"))
    if "position" in layout.columns:
        problems.append((f"{col('position')} < 1", "position must be an integer from 1"))
    if "value" in layout.columns:
        problems.append((f"isinf({col('value')}) OR isnan({col('value')})",
                         "value must be a finite number"))  # fmt: skip
    return problems


def invalid(layout: ParquetLayout) -> str:
    """The condition of a row that fails a check of :func:`row_problems`."""
    return " OR ".join(f"COALESCE({cond}, FALSE)" for cond, _ in row_problems(layout))


def check_rows(
    connection: duckdb.DuckDBPyConnection, layout: ParquetLayout, max_invalid: int = 0
) -> FileCounts:
    """Check every row's values; up to ``max_invalid`` bad rows are set aside (``rejects``),
    one more is ``InputError`` naming the first bad row."""
    problems = row_problems(layout)
    source, bad = layout.source(), invalid(layout)
    found = connection.execute(f"SELECT COUNT(*) FROM {source} WHERE {bad}").fetchone()
    count = int(found[0]) if found else 0
    rejects: tuple[tuple[int, str], ...] = ()
    if count:
        flags = ", ".join(f"COALESCE({cond}, FALSE)" for cond, _ in problems)
        rows = connection.execute(
            f"SELECT file_row_number, {flags} FROM {source} WHERE {bad} "
            f"ORDER BY file_row_number LIMIT {max(1, min(count, max_invalid))}"
        ).fetchall()
        rejects = tuple(
            (int(row[0]) + 1, next(m for f, (_, m) in zip(row[1:], problems, strict=True) if f))
            for row in rows
        )
        if count > max_invalid:
            row, message = rejects[0]
            more = (f" ({count} bad rows, more than --max-invalid {max_invalid}; nothing "
                    "attached)") if max_invalid else ""  # fmt: skip
            raise InputError(f"row {row}: {message}{more}", path=layout.path)
        layout = replace(layout, skip_invalid=True)
    col = layout.expression
    event, valid = layout.is_event(), layout.valid()
    config = f"CAST({col('config')} AS VARCHAR)" if "config" in layout.columns else "NULL"
    counted = connection.execute(
        f"SELECT {config} AS ref, COUNT(*), COUNT(DISTINCT {col('query_id')}) "
        f"FROM {source} WHERE NOT {event} AND {valid} GROUP BY ref"
    ).fetchall()
    configs = Counter({str(ref): int(n) for ref, n, _ in counted if ref is not None})
    if configs and "hit_ids" not in layout.columns and "hits" not in layout.columns:
        raise InputError("searches need a hit_ids (list) or hits (count) column", path=layout.path)
    unnamed = sum(int(n) for ref, n, _ in counted if ref is None)
    if unnamed:
        raise InputError(f"{unnamed} searches name no config (add a config or variant column)",
                         path=layout.path)  # fmt: skip
    events = connection.execute(f"SELECT COUNT(*) FROM {source} WHERE {event} AND {valid}")
    total = events.fetchone()
    duplicates = sum(int(n) - int(d) for _, n, d in counted)
    return FileCounts(dict(sorted(configs.items())), int(total[0]) if total else 0, duplicates,
                      rejects)  # fmt: skip


def _session(layout: ParquetLayout) -> str:
    parts = [
        f"CAST({layout.expression(c)} AS VARCHAR)"
        for c in ("session_id", "client_id")
        if c in layout.columns
    ]
    if not parts:
        return "NULL"
    return parts[0] if len(parts) == 1 else f"COALESCE({', '.join(parts)})"


def searches_select(
    layout: ParquetLayout, versions: Mapping[str, int], *, repeated: bool = False
) -> str | None:
    """The file's searches attributed to config versions (``versions``: reference → id);
    searches of other references are left out. With ``repeated`` (the file repeats search ids)
    each id's first row is kept. None when the file has no searches to read."""
    if not versions or "config" not in layout.columns:
        return None
    col = layout.expression
    cases = " ".join(f"WHEN {quote(ref)} THEN {int(v)}" for ref, v in sorted(versions.items()))
    hits = f"len({col('hit_ids')})" if "hit_ids" in layout.columns else col("hits")
    return (
        f"SELECT CASE CAST({col('config')} AS VARCHAR) {cases} END AS version_id, "
        f"CAST({col('query_id')} AS VARCHAR) AS query_id, {_session(layout)} AS session_id, "
        f"{layout.time()} AS t, CAST(COALESCE({hits}, 0) AS BIGINT) AS hits "
        f"FROM {layout.source()} WHERE NOT {layout.is_event()} AND {layout.valid()} "
        f"AND CAST({col('config')} AS VARCHAR) IN ({', '.join(quote(r) for r in versions)})"
        + (f" QUALIFY row_number() OVER (PARTITION BY {col('query_id')} "
           "ORDER BY file_row_number) = 1" if repeated else "")
    )  # fmt: skip


def events_select(layout: ParquetLayout) -> str | None:
    """The file's events; None for a file without an action column."""
    if "action" not in layout.columns:
        return None
    col = layout.expression
    position = f"CAST({col('position')} AS BIGINT)" if "position" in layout.columns else "NULL"
    value = f"CAST({col('value')} AS DOUBLE)" if "value" in layout.columns else "NULL"
    return (
        f"SELECT CAST({col('query_id')} AS VARCHAR) AS query_id, "
        f"lower(CAST({col('action')} AS VARCHAR)) AS action, {layout.time()} AS t, "
        f"{position} AS position, {value} AS value "
        f"FROM {layout.source()} WHERE {layout.is_event()} AND {layout.valid()}"
    )


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
