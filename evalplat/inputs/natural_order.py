"""The natural order of ids: digit runs compare as numbers, so ``q2`` comes before ``q10`` and
``9`` before ``10``, wherever query ids are listed (the console, JSON and CSV rows, pages)."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pandas import Series


def natural_key(text: object) -> tuple[tuple[tuple[int, int, str], ...], str]:
    """Sort key that orders digit runs as numbers: ``1 < 2 < 10 < 100``, ``q2 < q10``.

    Text is split into digit and non-digit chunks; a digit chunk compares by value (its length
    without leading zeros, then its digits: exact for ids of any length), a text chunk as text,
    and a digit chunk before a text chunk. Ties (``01`` and ``1``) fall back to the whole text.
    The page script (``_query_table.js``) sorts with the same rule.
    """
    value = str(text)
    return _chunk_key(value), value


@functools.lru_cache(maxsize=1 << 16)
def _chunk_key(value: str) -> tuple[tuple[int, int, str], ...]:
    # cached: a page sorts its query ids more than once (10,000 ids are 0.2 s a pass)
    chunks = []
    for chunk in _CHUNKS.findall(value):
        if chunk[0].isdigit():
            digits = chunk.lstrip("0")
            chunks.append((0, len(digits), digits))
        else:
            chunks.append((1, 0, chunk))
    return tuple(chunks)


_CHUNKS = re.compile(r"\d+|\D+")


def natural_column(column: Series) -> Series:
    """A ``key`` for ``DataFrame.sort_values``: a column of text (query or document ids) as its
    rank in natural order; any other column as it is."""
    if column.dtype.kind not in "OUS" and str(column.dtype) not in ("string", "str"):
        return column
    rank = {value: i for i, value in enumerate(sorted(set(column), key=natural_key))}
    return column.map(rank)
