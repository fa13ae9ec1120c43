"""Quepid's ratings export (CSV), read and written.

Quepid's basic export has the header ``query,docid,rating`` and one row per rated document; a
query nobody rated is a row with the query alone. Its detailed export names the columns
``Query Text``, ``Doc ID`` and ``Rating`` among others (team, case, title, fields), read past.
Column names are matched without case, spaces or underscores (``doc_id`` is ``docid``). A row
with an empty rating is a document shown but not rated: read past, its query kept. Quepid
guards a text starting with ``-``, ``=``, ``+`` or ``@`` with a space; surrounding whitespace
is dropped, so the text comes back as typed. Queries have no ids in Quepid: each gets
:func:`~evalplat.formats.judgment_lists.text_query_id` of its text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.formats.judgment_lists import (
    QueryText,
    Rating,
    judgment_list,
    rating_grade,
    text_query_id,
    texts_by_id,
)
from evalplat.formats.text_files import ParsedFile, delimited_rows, load_text

if TYPE_CHECKING:
    import pandas as pd

# normalised column name -> role; the basic export's three columns and the detailed export's
_COLUMNS = {
    "query": "query",
    "querytext": "query",
    "docid": "doc",
    "rating": "rating",
}
HEADER = ("query", "docid", "rating")


def _normal(name: str) -> str:
    return name.strip().lower().replace(" ", "").replace("_", "")


def is_quepid_header(line: str) -> bool:
    """Whether a CSV first line is a Quepid export's header (query text, doc id, rating)."""
    try:
        fields = next(delimited_rows(line, "csv", Path("-")), (0, []))[1]
    except InputError:  # not even a CSV line: the CSV reader names the file and line
        return False
    roles = {_COLUMNS.get(_normal(name)) for name in fields}
    return {"query", "doc", "rating"} <= roles and "queryid" not in map(_normal, fields)


def parse_quepid(path: Path) -> ParsedFile:
    """Judgments and query texts of a Quepid ratings CSV (module doc)."""
    return judgment_list(path, _rows(load_text(path), path))


def _rows(text: str, path: Path) -> Iterator[Rating | QueryText]:
    columns: dict[str, int] | None = None
    width = 0
    for number, fields in delimited_rows(text, "csv", path):
        if columns is None:
            columns, width = _header(fields, path, number), len(fields)
            continue
        if len(fields) > width:
            problem = f"expected {width} fields as the header names, found {len(fields)}"
            raise InputError(problem, path=path, line=number)
        cells = {role: fields[i] if i < len(fields) else "" for role, i in columns.items()}
        query = cells["query"].strip()
        if not query:
            raise InputError("missing query text", path=path, line=number)
        query_id = text_query_id(query)
        yield QueryText(number, query_id, query)
        doc, rating = cells["doc"], cells["rating"]
        if not doc and not rating:
            continue  # a query without ratings
        if not doc:
            raise InputError("missing doc id", path=path, line=number)
        if not rating:
            continue  # shown, not rated
        yield Rating(number, query_id, doc, rating_grade(rating, path, number))
    if columns is None:
        raise InputError("file is empty", path=path)


def _header(fields: list[str], path: Path, line: int) -> dict[str, int]:
    columns: dict[str, int] = {}
    for index, name in enumerate(fields):
        role = _COLUMNS.get(_normal(name))
        if role is not None and role not in columns:
            columns[role] = index
    missing = [role for role in ("query", "doc", "rating") if role not in columns]
    if missing:
        problem = "expected Quepid's header query,docid,rating (or Query Text, Doc ID, Rating)"
        raise InputError(problem, path=path, line=line)
    return columns


def write_quepid(queries: pd.DataFrame, qrels: pd.DataFrame, path: str | Path) -> Path:
    """Quepid's basic export: ``query,docid,rating``, the queries' texts (a query without text
    is written by its id), a query without judgments as a row of its own."""
    import csv
    import io

    texts = texts_by_id(queries)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    judged: set[str] = set()
    for query_id, doc_id, grade in zip(
        qrels["query_id"], qrels["doc_id"], qrels["grade"], strict=True
    ):
        judged.add(str(query_id))
        writer.writerow([texts.get(str(query_id), str(query_id)), doc_id, int(grade)])
    for query_id, text in texts.items():
        if query_id not in judged:
            writer.writerow([text, "", ""])
    path = Path(path)
    path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    return path
