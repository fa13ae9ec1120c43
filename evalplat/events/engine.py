"""Where the online SQL runs, and how its per-session rows become each window's scores.

Three places run the statement of ``evalplat.events.sql``:

- **DuckDB** (embedded, the default): over the stored searches and events read out of the
  store as columns (``evalplat.db.bulk.read_frame``) and over attached Parquet files read in
  place (``evalplat.events.parquet``), the two joined as one log;
- **PostgreSQL**, when the store is PostgreSQL and no Parquet file is attached: inside the
  database, over its ``online_query`` and ``online_event`` tables;
- **a warehouse** named by ``[events] url`` (``evalplat.events.warehouse``): inside it, over its
  tables.

Each returns one row per (config version, window, session); :func:`window_scores` cuts them
into one :class:`~evalplat.events.sessions.WindowScores` per config version and window.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.events.sessions import Window, WindowScores
from evalplat.events.sql import DAY_SECONDS, quote

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from evalplat.metrics.registry import Metric

# DuckDB's working memory: a 10M-event log aggregates well inside it (scripts/bench_events.py)
DUCKDB_MEMORY = "1GB"
ROW_TYPES = {
    "version_id": "int64",
    "w": "int64",
    "session_id": "str",
    "searches": "int64",
    "events": "int64",
    "first_t": "float64",
    "last_t": "float64",
}


def row_types(metrics: Sequence[Metric]) -> dict[str, str]:
    """Column → type of the statement's rows (for ``read_frame``)."""
    return {**ROW_TYPES, **{f"m{i}": "float64" for i in range(len(metrics))}}


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with bounded memory; no extension is installed or loaded."""
    import duckdb

    no_extensions: dict[str, str | bool | int | float | list[str]] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    connection = duckdb.connect(":memory:", config=no_extensions)
    connection.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
    # what does not fit spills to the system's temporary folder, not the working directory
    spill = Path(tempfile.gettempdir()) / "evalplat-duckdb"
    connection.execute(f"SET temp_directory = {quote(str(spill))}")
    connection.execute("SET preserve_insertion_order = false")
    connection.execute("SET enable_progress_bar = false")
    return connection


def stored_relations(searches: pd.DataFrame, events: pd.DataFrame) -> tuple[Any, Any]:
    """The stored frames with epoch-second times, as Arrow tables DuckDB can scan."""
    import pyarrow as pa

    searches = searches.assign(t=epoch_seconds(searches.pop("timestamp")))
    events = events.assign(t=epoch_seconds(events.pop("timestamp")))
    return (
        pa.Table.from_pandas(searches, preserve_index=False),
        pa.Table.from_pandas(events, preserve_index=False),
    )


def epoch_seconds(values: pd.Series) -> Any:
    """Timestamps (datetime or text with a zone; text without one is UTC, as SQLite stores
    them) as epoch seconds: whole microseconds over 1e6, as the NumPy path computes them."""
    import numpy as np
    import pandas as pd

    times = pd.to_datetime(values, utc=True, format="ISO8601")
    micros = times.dt.tz_localize(None).to_numpy(dtype="datetime64[us]").astype(np.int64)
    return micros.astype(np.float64) / 1e6


def window_scores(
    rows: pd.DataFrame, metrics: Sequence[Metric], window: str
) -> Iterator[tuple[int, WindowScores]]:
    """(config version id, its scores over one window) for each group of ``rows``, in version
    then time order. ``rows``: the statement's per-session rows, ordered by version, window."""
    import numpy as np
    import pandas as pd

    from evalplat.metrics.aggregate import aggregate

    if rows.empty:
        return
    keys = rows["version_id"].to_numpy(np.int64) * (1 << 32) + rows["w"].to_numpy(np.int64)
    bounds = np.flatnonzero(np.diff(keys)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(rows)]])
    names = [str(metric) for metric in metrics]
    for start, end in zip(starts, ends, strict=True):
        part = rows.iloc[start:end]
        sessions = part["session_id"].astype(str).to_numpy()
        frames = []
        means: dict[str, tuple[float, int]] = {}
        for i, (metric, name) in enumerate(zip(metrics, names, strict=True)):
            values = part[f"m{i}"].to_numpy(dtype=np.float64, na_value=np.nan)
            known = ~np.isnan(values)
            figure = aggregate(metric, values[known]) if known.any() else float("nan")
            means[name] = (figure, int(known.sum()))
            frames.append(
                pd.DataFrame({"metric": name, "query_id": sessions[known], "value": values[known]})
            )
        yield (
            int(part["version_id"].iloc[0]),
            WindowScores(
                window=_window(part, window),
                sessions=len(part),
                searches=int(part["searches"].sum()),
                events=int(part["events"].sum()),
                per_session=pd.concat(frames, ignore_index=True),
                means=means,
            ),
        )


def _window(part: pd.DataFrame, window: str) -> Window:
    if window == "day":
        start = datetime.fromtimestamp(int(part["w"].iloc[0]) * DAY_SECONDS, tz=UTC)
        return Window(start, start + timedelta(days=1))
    first = _moment(float(part["first_t"].min()))
    last = _moment(float(part["last_t"].max()))
    return Window(first, last + timedelta(seconds=1))


def _moment(seconds: float) -> datetime:
    """Epoch seconds back to the microsecond they were computed from."""
    micros = round(seconds * 1e6)
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
