"""Reading query files (CSV, TSV, JSONL) into a frame of ``query_id, text, weight, tags``.

The accepted columns, keys and values are described in :mod:`evalplat.formats.testset_files`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

from evalplat.errors import InputError
from evalplat.formats.text_files import (
    ParsedFile,
    check_id,
    check_text,
    delimited_rows,
    detect_format,
    json_objects,
    json_type,
    load_text,
    new_frame,
)
from evalplat.inputs.validation import DECIMAL, check_name, shown

_QUERY_HEADER_KEYS = {"query_id": "query_id", "qid": "query_id", "id": "query_id"}
_QUERY_COLUMNS = {**_QUERY_HEADER_KEYS, "text": "text", "query": "text"}
_QUERY_COLUMNS.update(weight="weight", tags="tags")


def parse_queries(path: str | Path, format: str | None = None) -> ParsedFile:
    """:func:`read_queries` with the line of every row."""
    path = Path(path)
    fmt = detect_format(path, "queries", format)
    text = load_text(path)
    rows = (
        _query_rows_json(text, path) if fmt == "jsonl" else _query_rows_delimited(text, fmt, path)
    )
    ids: list[str] = []
    texts: list[str] = []
    weights: list[float] = []
    tags: list[str | None] = []
    lines: list[int] = []
    first: dict[str, int] = {}
    for number, query_id, query_text, weight, tag_list in rows:
        if query_id in first:
            problem = f"duplicate query id {query_id!r} (first on line {first[query_id]})"
            raise InputError(problem, path=path, line=number)
        first[query_id] = number
        ids.append(query_id)
        texts.append(query_text)
        weights.append(weight)
        tags.append(tags_json(tag_list))
        lines.append(number)
    import pandas as pd

    frame = new_frame(
        {
            "query_id": pd.Series(ids, dtype="str"),
            "text": pd.Series(texts, dtype="str"),
            "weight": pd.Series(weights, dtype="float64"),
            "tags": pd.Series(tags, dtype=object),
        }
    )
    return ParsedFile(path, frame, lambda: lines)


_QueryRow = tuple[int, str, str, float, list[str]]


def tags_json(tag_list: list[str]) -> str | None:
    """Canonical tags: sorted, without repeats, as compact JSON; ``None`` when there are none."""
    if not tag_list:
        return None
    return json.dumps(sorted(set(tag_list)), ensure_ascii=False, separators=(",", ":"))


def _weight(value: object, path: Path, line: int) -> float:
    if value is None or value == "":
        return math.nan
    number: float
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"weight {value!r} is not a number", path=path, line=line) from None
        if math.isfinite(number) and not DECIMAL.fullmatch(value):
            problem = f"weight {shown(value)} is not a number (ASCII digits)"
            raise InputError(problem, path=path, line=line)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
    else:
        problem = f"weight must be a number, found {json_type(value)}"
        raise InputError(problem, path=path, line=line)
    if not math.isfinite(number) or number <= 0:
        raise InputError(f"weight must be a number > 0, found {value!r}", path=path, line=line)
    return number


def _query_rows_json(text: str, path: Path) -> Iterator[_QueryRow]:
    for number, obj in json_objects(text, path):
        unknown = sorted(set(obj) - {"id", "query_id", "text", "weight", "tags"})
        if unknown:
            problem = f"unknown key {unknown[0]!r} (queries have id, text, weight, tags)"
            raise InputError(problem, path=path, line=number)
        if "id" in obj and "query_id" in obj:
            raise InputError("both 'id' and 'query_id' given", path=path, line=number)
        if "id" not in obj and "query_id" not in obj:
            raise InputError("missing key 'id' (or 'query_id')", path=path, line=number)
        query_id = check_id(obj.get("id", obj.get("query_id")), "query id", path, number)
        if "text" not in obj:
            raise InputError("missing key 'text'", path=path, line=number)
        query_text = obj["text"]
        if not isinstance(query_text, str):
            problem = f"text must be a string, found {json_type(query_text)}"
            raise InputError(problem, path=path, line=number)
        tag_list = obj.get("tags")
        tag_list = [] if tag_list is None else tag_list  # {}, "" or false are not "no tags"
        if not isinstance(tag_list, list) or not all(isinstance(t, str) and t for t in tag_list):
            raise InputError("tags must be a list of non-empty strings", path=path, line=number)
        raw_weight = obj.get("weight")
        if isinstance(raw_weight, str):  # JSON has numbers; a string is a mistake upstream
            problem = f"weight must be a number, found a string {raw_weight!r}"
            raise InputError(problem, path=path, line=number)
        weight = _weight(raw_weight, path, number)
        check_text(query_text, "query text", path, number)
        for tag in tag_list:
            check_name(tag, "tag", path=path, line=number)
        yield number, query_id, query_text.strip(), weight, tag_list


def _query_rows_delimited(text: str, fmt: str, path: Path) -> Iterator[_QueryRow]:
    columns: list[str] | None = None
    for number, fields in delimited_rows(text, fmt, path):
        if columns is None:
            columns = _query_header(fields, path, number)
            if columns:
                continue
        names = columns or ["query_id", "text", "weight", "tags"]
        low, high = (len(names), len(names)) if columns else (2, 4)
        if not low <= len(fields) <= high:
            expected = f"{low}" if low == high else f"{low} to {high}"
            problem = f"expected {expected} fields, found {len(fields)}"
            raise InputError(problem, path=path, line=number)
        row = dict(zip(names, fields, strict=False))
        query_id = check_id(row["query_id"], "query id", path, number)
        tag_list = [t.strip() for t in row.get("tags", "").split(",") if t.strip()]
        weight = _weight(row.get("weight"), path, number)
        check_text(row["text"], "query text", path, number)
        for tag in tag_list:
            check_name(tag, "tag", path=path, line=number)
        yield number, query_id, row["text"], weight, tag_list


def _query_header(fields: list[str], path: Path, line: int) -> list[str]:
    """Column names when ``fields`` is a header line, else an empty list."""
    if fields[0].lower() not in _QUERY_HEADER_KEYS:
        return []
    names: list[str] = []
    for name in fields:
        column = _QUERY_COLUMNS.get(name.lower())
        if column is None:
            problem = f"unknown column {name!r} (queries have query_id, text, weight, tags)"
            raise InputError(problem, path=path, line=line)
        if column in names:
            raise InputError(f"column {column!r} given twice", path=path, line=line)
        names.append(column)
    if "text" not in names:
        raise InputError("the header has no 'text' column", path=path, line=line)
    return names
