"""A list of (query, document) pairs to grade, as CSV: ``query_id,doc_id`` and optionally
``rank``, with a header row. The CSVs ``evalplat unjudged`` prints and ``evalplat queries
--judge-csv`` writes are such lists (their other columns are read past).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.formats.text_files import decode_text
from evalplat.inputs.validation import check_identifier, check_number, shown

if TYPE_CHECKING:
    import pandas as pd

PAIR_COLUMNS = ("query_id", "doc_id", "rank")
RANK_MAX = 2**31 - 1  # the stored rank's range


def read_pair_list(path: Path) -> pd.DataFrame:
    """``query_id, doc_id, rank`` (rank None where the file has none), in file order; a pair
    listed twice, a column named twice or a field CSV cannot hold is an error naming the file
    and line."""
    import pandas as pd

    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path=path) from None
    records = _records(decode_text(data, path), path)
    header = [h.strip() for h in next(records, (1, []))[1]]
    if "query_id" not in header or "doc_id" not in header:
        raise InputError("expected a header with query_id and doc_id columns", path=path, line=1)
    twice = sorted({h for h in header if h and header.count(h) > 1})
    if twice:
        raise InputError(f"column {twice[0]!r} is named twice in the header", path=path, line=1)
    q, d = header.index("query_id"), header.index("doc_id")
    r = header.index("rank") if "rank" in header else None
    rows: dict[tuple[str, str], tuple[int | None, int]] = {}
    for line, row in records:
        if not row:
            continue
        if len(row) != len(header):
            raise InputError(
                f"expected {len(header)} fields, found {len(row)}", path=path, line=line
            )
        query_id = check_identifier(row[q].strip(), "query id", path=path, line=line)
        doc_id = check_identifier(row[d].strip(), "doc id", path=path, line=line)
        rank = None if r is None or not row[r].strip() else _rank(row[r].strip(), path, line)
        first = rows.setdefault((query_id, doc_id), (rank, line))[1]
        if first != line:
            raise InputError(
                f"pair ({query_id}, {doc_id}) is listed twice (first on line {first})",
                path=path,
                line=line,
            )
    if not rows:
        raise InputError("no pairs: the file has a header and nothing else", path=path)
    return pd.DataFrame(
        [(q_, d_, rank) for (q_, d_), (rank, _) in rows.items()], columns=list(PAIR_COLUMNS)
    )


def _records(text: str, path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of each CSV record; a record CSV cannot read (a field past the csv
    module's size limit) is an error naming its line."""
    reader = csv.reader(io.StringIO(text, newline=""))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise InputError(f"not CSV: {error}", path=path, line=reader.line_num) from None
        yield reader.line_num, row


def _rank(text: str, path: Path, line: int) -> int:
    if not text.isascii() or not text.isdigit():
        raise InputError(f"rank {text[:20]!r} is not a whole number", path=path, line=line)
    if len(text.lstrip("0")) > len(str(RANK_MAX)):  # thousands of digits: not converted
        raise InputError(f"rank {shown(text)} is out of range (1 to {RANK_MAX})", path=path,
                         line=line)  # fmt: skip
    return int(check_number(int(text), "rank", minimum=1, maximum=RANK_MAX, path=path, line=line))
