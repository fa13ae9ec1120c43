"""The vectorised tiers of the TREC readers (:mod:`evalplat.formats.trec`): pyarrow parses the
file in kernels, with no Python per line, and any doubt about a file sends it back to the
reference pass by raising :class:`FastPathFailed`.

1. :func:`read_delimited`: pyarrow's CSV reader with a single-character delimiter (space or tab,
   sniffed from the first line) over the file's mapped bytes, keeping only the fields it needs.
2. :func:`read_split`: whole lines, comments dropped, split on ASCII whitespace in kernels, for
   mixed whitespace, comments and extra trailing fields.

Both accept only what the reference pass accepts and return the same values: the input contract
(:mod:`evalplat.inputs.validation`) is checked here in kernels, and anything it might refuse is
left to the reference pass to name.
"""

from __future__ import annotations

import contextlib
import mmap
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.inputs.validation import GRADE_MAX, GRADE_MIN, ID_MAX_LENGTH

if TYPE_CHECKING:
    import pyarrow as pa

_SCAN_BYTES = 1 << 24  # the delimiter scan looks at this much at a time
# pyarrow parses blocks of this size, one per thread at a time. Small blocks are parsed while
# their text is in the cache and their buffers are handed out again by the allocator, so the
# kernel zeroes fewer fresh buffers; much smaller ones cost more per block than they spare
# (docs/performance.md, "Figures behind choices in the code").
_BLOCK_BYTES = 1 << 21


class FastPathFailed(Exception):
    """Internal: the vectorised tiers could not read the file; the slow pass will say why."""


def _mapped(path: Path) -> mmap.mmap:
    """The file's bytes, mapped read-only: the delimiter scan and the parse both read the page
    cache through it, so the file is read once, with no ``read`` call and no copy of the text
    into fresh buffers (reading it in 16 MiB ``bytes`` cost a page fault per 4 KiB of each new
    buffer; the parse's own reads of a path cost as much again). The map is closed when the
    parse ends, before the columns are coded, so the text is not held beside the engine's
    arrays."""
    with path.open("rb") as handle:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


def _parse_pool() -> pa.MemoryPool:
    """The memory pool the CSV parse allocates from: jemalloc where pyarrow has it.

    The parse allocates and frees a block's buffers on both threads, which pyarrow's default
    pool (mimalloc) does with more system time and a higher peak than jemalloc
    (docs/performance.md). Only this parse uses it; the rest of the process keeps the default
    pool.
    """
    import pyarrow as pa

    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        return pa.default_memory_pool()


def arrow_types(
    keep: tuple[tuple[int, str], ...], *, grade_text: bool = False
) -> dict[str, pa.DataType]:
    """Column types; ``grade_text`` reads grades as text, for :func:`_grades_from_text`."""
    import pyarrow as pa

    types: dict[str, pa.DataType] = {}
    for _, name in keep:
        if name == "grade":
            types[name] = pa.string() if grade_text else pa.int64()
        elif name == "score":
            types[name] = pa.float64()
        else:
            types[name] = pa.string()
    return types


def _sniff_delimiter(text: mmap.mmap) -> str:
    """Space or tab, from the first line; fails when the other one also occurs in the file, or
    when a field is empty (a doubled delimiter, or one at a line's start or end).

    Finding empty fields here lets the parser skip the fields it does not keep instead of
    reading them to look. The file costs one ``memchr`` and, per 16 MiB chunk, one numpy pass
    that looks for two whitespace bytes in a row; only a chunk that has some (``\\r\\n``, blank
    lines) is searched for the exact patterns.
    """
    delimiter = _scan(text)
    if delimiter is None:
        raise FastPathFailed
    return delimiter


def _scan(text: mmap.mmap) -> str | None:
    """:func:`_sniff_delimiter` over the mapped bytes; None when the fast tier cannot read them."""
    first = text[: text.find(b"\n", 0, 65536) + 1 or 65536]
    delimiter, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
    if text.find(other) != -1:
        return None
    ends = (b"\n", b"\r")
    empty = (
        delimiter * 2,
        *(end + delimiter for end in ends),
        *(delimiter + end for end in ends),
    )
    if text[:1] == delimiter or text[-1:] == delimiter:  # at the file's start or last line's end
        return None
    if _has_any(text, empty):
        return None
    return delimiter.decode()


def _has_any(text: mmap.mmap, patterns: tuple[bytes, ...]) -> bool:
    """Whether a two-byte whitespace pattern occurs; its numpy view of the map ends on return,
    so the map can be closed.

    Two bytes in a row are both whitespace (at most 0x20) exactly when the larger of the two
    is: per chunk, one pass writes each pair's larger byte into a scratch buffer kept for every
    chunk, and one reduction finds its least (no boolean arrays, no fresh pages per chunk)."""
    import numpy as np

    data = np.frombuffer(text, dtype=np.uint8)
    scratch = np.empty(min(_SCAN_BYTES, max(len(data) - 1, 0)), dtype=np.uint8)
    for start in range(0, len(data) - 1, _SCAN_BYTES):
        end = min(start + _SCAN_BYTES + 1, len(data))  # a byte of overlap: patterns across chunks
        pairs = scratch[: end - start - 1]
        np.maximum(data[start + 1 : end], data[start : end - 1], out=pairs)
        if pairs.min() <= 0x20 and any(
            text.find(pattern, start, end) != -1 for pattern in patterns
        ):
            return True
    return False


def read_delimited(
    path: Path, n_fields: int, keep: tuple[tuple[int, str], ...], *, exact: bool
) -> pa.Table:
    """Tier 1: exactly ``n_fields`` fields split by one delimiter character on every line.

    Only the kept fields are converted. An empty field, which whitespace splitting would not
    see, sends the file to the next tier instead of shifting columns: the delimiter sniffing
    finds those in any field, and a kept text field is checked for them again here.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [f"f{i}" for i in range(n_fields)]
    types = arrow_types(keep, grade_text=True)
    for index, name in keep:
        names[index] = name
    text = _mapped(path)
    try:
        table = _parse(text, names, types)
    finally:
        _close(text)
    if table.num_rows == 0:
        raise FastPathFailed
    for name in types:
        is_text = types[name] in (pa.string(), pa.binary())
        if is_text and pc.min(pc.binary_length(table.column(name))).as_py() == 0:
            raise FastPathFailed
    table = _grades_from_text(table)
    _check_contract(table)
    # a comment line that happens to have the right number of fields
    if pc.any(pc.starts_with(table.column("query_id"), "#")).as_py():
        raise FastPathFailed
    return table


def _parse(text: mmap.mmap, names: list[str], types: dict[str, pa.DataType]) -> pa.Table:
    """pyarrow's parse of the mapped text (the kept columns only, on the CPU pool's threads)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    delimiter = _sniff_delimiter(text)
    source = pa.BufferReader(pa.py_buffer(text))
    try:
        return pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter,
                quote_char=False,
                double_quote=False,
                escape_char=False,
                ignore_empty_lines=True,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                null_values=[],
                include_columns=list(types),
            ),
            memory_pool=_parse_pool(),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as error:
        raise FastPathFailed from error
    finally:
        source.close()
        del source


def _close(text: mmap.mmap) -> None:
    """Unmap the text; while a buffer of it is still referenced (an error's traceback), the
    map is left to the garbage collector, which closes it when the last reference goes."""
    with contextlib.suppress(BufferError):
        text.close()


def _grades_from_text(table: pa.Table) -> pa.Table:
    """The grade column as int64, when every grade is ASCII digits with an optional sign.

    Arrow's integer parsing also reads hexadecimal (``0x1F``); the contract
    (:func:`evalplat.inputs.validation.parse_grade`) does not, so any other spelling goes to
    the slow pass, which names the line.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if "grade" not in table.column_names:
        return table
    grades = table.column("grade")
    if not pc.all(pc.match_substring_regex(grades, r"^-?[0-9]{1,18}$")).as_py():
        raise FastPathFailed
    index = table.column_names.index("grade")
    return table.set_column(index, "grade", pc.cast(grades, pa.int64()))


def _check_contract(table: pa.Table) -> None:
    """The input contract (:mod:`evalplat.inputs.validation`) in vectorised kernels: ids of at most
    200 characters without control characters, grades in range, finite scores. Any doubt
    sends the file to the slow pass, which names the line."""
    import pyarrow.compute as pc

    from evalplat.inputs.columns import has_control_characters, has_unicode_whitespace

    if table.num_rows == 0:
        return  # no rows, nothing to check (the caller's slow pass says the file is empty)
    for name in ("query_id", "doc_id"):
        column = table.column(name)
        if pc.max(pc.utf8_length(column)).as_py() > ID_MAX_LENGTH:
            raise FastPathFailed
        if has_control_characters(column) or has_unicode_whitespace(column):
            raise FastPathFailed
    if "grade" in table.column_names:
        grades = table.column("grade")
        if pc.min(grades).as_py() < GRADE_MIN or pc.max(grades).as_py() > GRADE_MAX:
            raise FastPathFailed
    # NaN or infinite scores make the ordering meaningless; the slow pass names the line
    if "score" in table.column_names and not pc.all(pc.is_finite(table.column("score"))).as_py():
        raise FastPathFailed


def read_split(
    path: Path, n_fields: int, keep: tuple[tuple[int, str], ...], *, exact: bool
) -> pa.Table:
    """Tier 2: whole lines, comments dropped, split on ASCII whitespace, all in pyarrow kernels."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    try:
        lines = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=["line"], block_size=_BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(
                delimiter="\x1f",  # a control character that never appears in TREC files
                quote_char=False,
                double_quote=False,
                escape_char=False,
                ignore_empty_lines=True,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={"line": pa.string()},
                strings_can_be_null=False,
                null_values=[],
            ),
            memory_pool=_parse_pool(),
        ).column("line")
        stripped = pc.ascii_trim_whitespace(lines)
        nonempty = pc.cast(pc.utf8_length(stripped), pa.bool_())  # a length cast to bool
        lines = stripped.filter(pc.and_(pc.invert(pc.starts_with(stripped, "#")), nonempty))
        fields = pc.ascii_split_whitespace(lines)
        counts = pc.list_value_length(fields)
        least, most = (bound.as_py() for bound in pc.min_max(counts).values())
        if len(counts) and (least < n_fields or (exact and most != n_fields)):
            raise FastPathFailed
        types = arrow_types(keep, grade_text=True)
        columns = {
            name: pc.cast(pc.list_element(fields, _int32(index)), types[name])
            for index, name in keep
        }
        table = _grades_from_text(pa.table(columns))
    except (pa.ArrowInvalid, UnicodeDecodeError) as error:
        raise FastPathFailed from error
    _check_contract(table)
    return table


def _int32(value: int) -> pa.Scalar:
    """An int32 scalar built from its bytes. Any Python value pyarrow converts itself goes
    through its pandas shim, which imports pandas, a cost every whitespace-split file would pay
    (docs/performance.md)."""
    import struct

    import pyarrow as pa

    return pa.Array.from_buffers(pa.int32(), 1, [None, pa.py_buffer(struct.pack("<i", value))])[0]
