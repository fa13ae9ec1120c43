"""A list of (query, document) pairs to grade, as CSV: ``query_id,doc_id`` and optionally
``rank``, with a header row. The CSVs ``evalplat unjudged`` prints and ``evalplat queries
--judge-csv`` writes are such lists (their other columns are read past).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.formats.text_files import decode_text
from evalplat.inputs.validation import check_identifier, check_number

if TYPE_CHECKING:
    import pandas as pd

PAIR_COLUMNS = ("query_id", "doc_id", "rank")


def read_pair_list(path: Path) -> pd.DataFrame:
    """``query_id, doc_id, rank`` (rank None where the file has none), in file order, each
    pair once; an error names the file and line."""
    import pandas as pd

    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path=path) from None
    reader = csv.reader(io.StringIO(decode_text(data, path), newline=""))
    header = [h.strip() for h in next(reader, [])]
    if "query_id" not in header or "doc_id" not in header:
        raise InputError("expected a header with query_id and doc_id columns", path=path, line=1)
    q, d = header.index("query_id"), header.index("doc_id")
    r = header.index("rank") if "rank" in header else None
    rows: dict[tuple[str, str], int | None] = {}
    for line, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise InputError(
                f"expected {len(header)} fields, found {len(row)}", path=path, line=line
            )
        query_id = check_identifier(row[q].strip(), "query id", path=path, line=line)
        doc_id = check_identifier(row[d].strip(), "doc id", path=path, line=line)
        rank = None
        if r is not None and row[r].strip():
            text = row[r].strip()
            if not text.isascii() or not text.isdigit():
                raise InputError(f"rank {text[:20]!r} is not a whole number", path=path, line=line)
            rank = int(check_number(int(text), "rank", minimum=1, path=path, line=line))
        rows.setdefault((query_id, doc_id), rank)
    if not rows:
        raise InputError("no pairs: the file has a header and nothing else", path=path)
    return pd.DataFrame(
        [(q_, d_, rank) for (q_, d_), rank in rows.items()], columns=list(PAIR_COLUMNS)
    )
