"""Columnar bulk I/O inside the caller's transaction: results, judgments and scores as columns.

The ORM is right for the few rows of a run or a config; it is wrong for the millions of rows a
large test set or run holds (building one Python object per row is most of the time). Here rows
move as columns, through the driver underneath the session, so they stay in the session's
transaction (a failed write leaves nothing, whatever the backend):

- **PostgreSQL** writes with ``COPY ... FROM STDIN (FORMAT csv)``, the CSV text made by
  pyarrow's C++ writer in one call per chunk, and reads with ``COPY (SELECT ...) TO STDOUT``
  parsed by pyarrow's CSV reader.
- **SQLite** writes a few rows with the DB-API ``executemany`` over plain tuples, whose loop runs
  in C; thousands of rows go through an Arrow scratch file that the session's connection copies
  from (``evalplat.db.sqlite_stage``). It reads through ``adbc-driver-sqlite`` straight into
  Arrow from a scratch copy the session's connection writes (``fetchall`` when it cannot); the
  driver never opens the evalplat database itself (``evalplat.db.sqlite_stage``).

Both sort a large write by the table's primary key first: the database then appends to its key
index instead of splitting pages all over it.

Text columns keep the empty string and NULL apart in both directions.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from evalplat.db.schema import Base
from evalplat.db.sqlite_stage import can_stage, staged_insert, staged_read

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

# Rows per COPY chunk: bounds the CSV text held in memory at once.
_CHUNK = 250_000


def mark_written(session: Session) -> None:
    """Note that the session wrote rows the ORM does not see (its commit is a crash point)."""
    session.info["wrote"] = True


def _driver_connection(session: Session) -> tuple[str, Any]:
    connection = session.connection()
    raw = connection.connection.driver_connection
    if raw is None:
        raise RuntimeError("no DB-API connection behind the session")
    return connection.dialect.name, raw


def bulk_insert(
    session: Session, model: type[Base], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Insert ``rows`` (tuples in ``columns`` order) into ``model``'s table, in the session's
    transaction: for rows that already exist as Python tuples (a batch of query outcomes)."""
    mark_written(session)
    dialect, raw = _driver_connection(session)
    table = model.__tablename__
    column_list = ", ".join(columns)
    if dialect == "postgresql":
        statement = f"COPY {table} ({column_list}) FROM STDIN"
        with raw.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
        return
    placeholders = ", ".join("?" for _ in columns)
    cursor = raw.cursor()
    try:
        cursor.executemany(f"INSERT INTO {table} ({column_list}) VALUES ({placeholders})", rows)
    finally:
        cursor.close()


def insert_columns(
    session: Session, model: type[Base], columns: Mapping[str, Any], *, key_sorted: bool = False
) -> int:
    """Insert columns (name → pyarrow array, NumPy array, pandas Series or list; a scalar is
    repeated) into ``model``'s table, in the session's transaction. Returns the row count.
    ``key_sorted``: the rows come in primary key order already (byte order), not sorted again.

    Missing values (None, NaN, NA) become NULL.
    """
    dialect, raw = _driver_connection(session)
    names = ", ".join(columns)
    arrays = {n: v for n, v in columns.items() if not _is_scalar(v)}
    if dialect == "postgresql":
        import pyarrow.csv as pacsv

        table = _arrow_table(columns)
        if table.num_rows == 0:
            return 0
        mark_written(session)
        table = _sorted(table, [] if key_sorted else _leading_key(model, arrays))
        options = pacsv.WriteOptions(include_header=False, quoting_style="needed")
        statement = f"COPY {model.__tablename__} ({names}) FROM STDIN (FORMAT csv)"
        with raw.cursor() as cursor, cursor.copy(statement) as copy:
            for batch in table.to_batches(max_chunksize=_CHUNK):
                buffer = io.BytesIO()
                pacsv.write_csv(batch, buffer, options)
                copy.write(buffer.getbuffer())
        return int(table.num_rows)
    sized = all(hasattr(v, "__len__") for v in arrays.values())
    length = len(next(iter(arrays.values()))) if arrays and sized else 0
    if length and can_stage(raw, length):
        table = _arrow_table(arrays)
        if table.num_rows == 0:
            return 0
        mark_written(session)
        constants = {n: v for n, v in columns.items() if _is_scalar(v)}
        table = _sorted(_no_null_types(table), [] if key_sorted else _leading_key(model, arrays))
        if staged_insert(session, raw, model.__tablename__, list(columns), table, constants):
            return int(table.num_rows)
    values, length = _python_columns(columns)
    if length == 0:
        return 0
    mark_written(session)
    placeholders = ", ".join("?" for _ in columns)
    cursor = raw.cursor()
    try:
        cursor.executemany(
            f"INSERT INTO {model.__tablename__} ({names}) VALUES ({placeholders})",
            zip(*values, strict=True),
        )
    finally:
        cursor.close()
    return length


def _is_scalar(values: Any) -> bool:
    return isinstance(values, str | int | float) or values is None


def _leading_key(model: type[Base], arrays: Iterable[str]) -> list[str]:
    """The primary key columns of ``model`` given as arrays, in key order, up to the first that
    is not (a constant leading column, such as the run id, orders nothing)."""
    given = set(arrays)
    key: list[str] = []
    table: Any = model.__table__
    for column in table.primary_key.columns:
        if column.name in given:
            key.append(column.name)
        elif key:
            break
    return key


def _sorted(table: pa.Table, key: Sequence[str]) -> pa.Table:
    """The rows in the order of the table's primary key, so that the database appends to its
    key index instead of splitting pages all over it (byte order; close to any collation's)."""
    import pyarrow.compute as pc

    if not key or table.num_rows < 2:
        return table
    return table.take(pc.sort_indices(table, [(name, "ascending") for name in key]))


def _no_null_types(table: pa.Table) -> pa.Table:
    """Columns with no value at all typed as text (SQLite stores NULL whatever the type)."""
    import pyarrow as pa

    for index, field in enumerate(table.schema):
        if pa.types.is_null(field.type):
            table = table.set_column(index, field.name, table.column(index).cast(pa.string()))
    return table


def _python_columns(columns: Mapping[str, Any]) -> tuple[list[Any], int]:
    """Plain Python values per column (what the SQLite driver binds), None for missing ones;
    scalars repeated."""
    import itertools

    import numpy as np
    import pandas as pd

    converted: list[Any] = []
    length = None
    for name, values in columns.items():
        if isinstance(values, str | int | float) or values is None:
            converted.append(values)
            continue
        if isinstance(values, pd.Series):
            values = values.astype(object).where(values.notna(), None).tolist()
        elif isinstance(values, np.ndarray):
            values = pd.Series(values).astype(object).where(pd.notna(values), None).tolist()
        elif hasattr(values, "to_pylist"):
            values = values.to_pylist()
        elif not isinstance(values, list):
            values = list(values)
        if length is not None and len(values) != length:
            raise ValueError(f"column {name} has {len(values)} values, expected {length}")
        length = len(values)
        converted.append(values)
    if length is None:
        raise ValueError("at least one column must hold values, not a scalar")
    return [
        itertools.repeat(v, length) if isinstance(v, str | int | float) or v is None else v
        for v in converted
    ], length


def bulk_insert_frame(session: Session, model: type[Base], frame: pd.DataFrame) -> None:
    """Insert the rows of ``frame`` (its columns named as the table's) into ``model``'s table.

    JSON columns take JSON text (or None for NULL).
    """
    insert_columns(session, model, {name: frame[name] for name in frame.columns})


def _arrow_table(columns: Mapping[str, Any]) -> pa.Table:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    arrays: dict[str, Any] = {}
    length = None
    for name, values in columns.items():
        if isinstance(values, str | int | float) or values is None:
            continue
        array = _arrow_array(values, pa, pd, np)
        arrays[name] = array
        length = len(array) if length is None else length
        if len(array) != length:
            raise ValueError(f"column {name} has {len(array)} values, expected {length}")
    if length is None:
        raise ValueError("at least one column must hold values, not a scalar")
    ordered = {}
    for name, values in columns.items():
        if name in arrays:
            ordered[name] = arrays[name]
        else:
            ordered[name] = pa.array([values] * length) if values is not None else pa.nulls(length)
    return pa.table(ordered)


def _arrow_array(values: Any, pa: Any, pd: Any, np: Any) -> Any:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        return values
    if isinstance(values, pd.Series):
        if values.dtype == object:
            cleaned = values.where(values.notna(), None).tolist()
            return pa.array(cleaned)
        return pa.Array.from_pandas(values)
    if isinstance(values, np.ndarray):
        return pa.array(values, from_pandas=True)
    return pa.array(list(values), from_pandas=True)


def read_frame(
    session: Session, statement: Any, columns: Sequence[str], types: Mapping[str, str]
) -> pd.DataFrame:
    """The rows of ``statement`` as a DataFrame with ``columns``, typed by ``types`` (column →
    ``"str"``, ``"int64"`` or ``"float64"``; text columns may hold None)."""
    import pandas as pd

    dialect, raw = _driver_connection(session)
    # IN lists are expanded into plain parameters here: the raw cursors below bind them
    compiled = statement.compile(
        dialect=session.get_bind().dialect, compile_kwargs={"render_postcompile": True}
    )
    if dialect == "postgresql":
        return _copy_out(raw, compiled, columns, types)
    parameters = compiled.construct_params()
    positional = [parameters[name] for name in compiled.positiontup or []]
    arrow = staged_read(raw, str(compiled), positional)
    if arrow is not None:
        frame = arrow.rename_columns(list(columns)).to_pandas()
        return typed_frame(frame, types)
    cursor = raw.cursor()
    try:
        rows = cursor.execute(str(compiled), positional).fetchall()
    finally:
        cursor.close()
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    frame = pd.DataFrame(dict(zip(columns, values, strict=True)))
    return typed_frame(frame, types)


def _copy_out(
    raw: Any, compiled: Any, columns: Sequence[str], types: Mapping[str, str]
) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    sql = str(compiled)
    buffer = io.BytesIO()
    with raw.cursor() as cursor:
        # COPY takes no server-side parameters: psycopg binds them client-side
        statement = f"COPY ({sql}) TO STDOUT (FORMAT csv)"
        with cursor.copy(statement, compiled.params or None) as copy:
            for data in copy:
                buffer.write(data)
    arrow_types = {"str": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
    if not buffer.getbuffer().nbytes:  # no rows: pyarrow refuses an empty CSV
        schema = pa.schema([(c, arrow_types[types.get(c, "str")]) for c in columns])
        return typed_frame(schema.empty_table().to_pandas(), types)
    table = pacsv.read_csv(
        io.BytesIO(buffer.getvalue()),
        read_options=pacsv.ReadOptions(column_names=list(columns)),
        convert_options=pacsv.ConvertOptions(
            column_types={c: arrow_types[types.get(c, "str")] for c in columns},
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )
    frame: pd.DataFrame = table.to_pandas()
    return typed_frame(frame, types)


def typed_frame(frame: pd.DataFrame, types: Mapping[str, str]) -> pd.DataFrame:
    import pandas as pd

    for name, kind in types.items():
        if kind == "str":
            # as pandas infers it from Python values: a column of only NULLs holds None
            if not len(frame):  # no rows: text still, whatever the reader guessed
                frame[name] = frame[name].astype(object)
            elif frame[name].isna().all():
                frame[name] = pd.Series([None] * len(frame), dtype=object, index=frame.index)
        elif kind == "int64":
            frame[name] = frame[name].astype("int64")
        else:
            frame[name] = pd.to_numeric(frame[name]).astype("float64")
    return frame
