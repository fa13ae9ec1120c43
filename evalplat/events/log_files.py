"""The rows of a log file, one line (or Parquet row) at a time, each a record or its problem.

:func:`log_rows` yields ``(line, record)`` for every non-blank line, where ``record`` is the
line's object or the ``InputError`` that refuses it, so that a caller can set bad lines aside
(``events import --max-invalid``) and go on. Problems of the whole file (it is missing, its
CSV header, a Parquet file that cannot be opened) raise at once.

The readers refuse what Python's parsers cannot take as one line naming the file and line, as
the test set readers do (``evalplat.formats.text_files``): integers of more than 4300 digits,
JSON nested deeper than the parser's recursion limit, a CSV field over 131,072 characters,
bytes that are not UTF-8. A Parquet "line" is its row number (1-based); a Parquet file whose
columns carry UBI names (``action_name``, ``query_response_hit_ids``, ``event_attributes``,
``query_attributes``) is read as UBI records, any other as flat rows.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.formats.text_files import decode_text

FORMATS = ("ubi", "jsonl", "csv", "parquet")
UBI_COLUMNS = ("action_name", "query_response_hit_ids", "query_response_object_ids",
               "event_attributes", "query_attributes")  # fmt: skip
_BATCH = 10_000

Row = tuple[int, "dict[str, Any] | InputError"]


def guess_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix == ".parquet":
        return "parquet"
    return "ubi"


def log_rows(path: Path, kind: str) -> tuple[str, Iterator[Row]]:
    """(``ubi`` or ``flat``: how the records read, the rows) of ``path`` read as ``kind``."""
    if kind not in FORMATS:
        raise InputError(f"unknown events format {kind!r} (formats: {', '.join(FORMATS)})")
    if not path.is_file():
        raise InputError("no such file", path=path)
    if kind == "parquet":
        return _parquet_rows(path)
    if kind == "csv":
        return "flat", _csv_rows(path)
    return ("ubi" if kind == "ubi" else "flat"), _json_rows(path)


def _json_rows(path: Path) -> Iterator[Row]:
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    decode = json.JSONDecoder().decode
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            bad = raw[error.start]
            yield number, InputError(f"not valid UTF-8 text (byte 0x{bad:02x})", path=path,
                                     line=number)  # fmt: skip
            continue
        if not line.strip():
            continue
        try:
            value = decode(line)
        except json.JSONDecodeError as error:
            yield number, InputError(f"invalid JSON ({error.msg}, column {error.colno})",
                                     path=path, line=number)  # fmt: skip
            continue
        except ValueError:  # an integer of more than 4300 digits
            yield number, InputError("invalid JSON: an integer of more than 4300 digits",
                                     path=path, line=number)  # fmt: skip
            continue
        except RecursionError:
            yield number, InputError("invalid JSON: nested too deeply", path=path, line=number)
            continue
        if not isinstance(value, dict):
            yield number, InputError("expected a JSON object", path=path, line=number)
            continue
        yield number, value


def _csv_rows(path: Path) -> Iterator[Row]:
    text = decode_text(path.read_bytes(), path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    while True:
        try:
            fields = [value.strip() for value in next(reader)]
        except StopIteration:
            return
        except csv.Error as error:
            if header is None:
                raise InputError(f"malformed CSV header: {error}", path=path,
                                 line=reader.line_num) from None  # fmt: skip
            yield reader.line_num, InputError(f"malformed CSV: {error}", path=path,
                                              line=reader.line_num)  # fmt: skip
            continue
        if not any(fields):
            continue
        if header is None:
            header = _header(fields, path, reader.line_num)
            continue
        if len(fields) > len(header):
            yield reader.line_num, InputError("more fields than the header names", path=path,
                                              line=reader.line_num)  # fmt: skip
            continue
        yield reader.line_num, {k: v for k, v in zip(header, fields, strict=False) if v != ""}


def _header(fields: list[str], path: Path, line: int) -> list[str]:
    seen: set[str] = set()
    for name in fields:
        if not name:
            raise InputError("the header has an empty column name", path=path, line=line)
        if name in seen:
            raise InputError(f"the header names column {name!r} twice", path=path, line=line)
        seen.add(name)
    return fields


def _parquet_rows(path: Path) -> tuple[str, Iterator[Row]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        source = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as error:
        raise InputError(f"not a Parquet file ({_first_line(error)})", path=path) from None
    names = set(source.schema_arrow.names)
    shape = "ubi" if names & set(UBI_COLUMNS) else "flat"

    def rows() -> Iterator[Row]:
        first = 1
        try:
            for batch in source.iter_batches(batch_size=_BATCH):
                try:
                    records = batch.to_pylist()
                except (pa.ArrowException, ValueError, OverflowError) as error:
                    last = first + batch.num_rows - 1
                    problem = f"rows {first} to {last} cannot be read ({_first_line(error)})"
                    raise InputError(problem, path=path) from None
                for offset, record in enumerate(records):
                    yield first + offset, record
                first += batch.num_rows
        except (pa.ArrowException, OSError) as error:
            raise InputError(f"cannot read row {first} on ({_first_line(error)})",
                             path=path) from None  # fmt: skip

    return shape, rows()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
