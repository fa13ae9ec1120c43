"""The input contract over whole Arrow string columns, read as bytes in numpy.

A regular expression over ten million ids costs more than a second; the same question asked of
the column's UTF-8 bytes costs a few milliseconds. Control characters (Unicode ``Cc``, U+0000 to
U+001F and U+007F to U+009F, as :data:`evalplat.inputs.validation.CONTROL`) are in UTF-8 either
a single byte below 0x20 or 0x7F, or the two bytes 0xC2 0x80 to 0xC2 0x9F. In valid UTF-8 (which
Arrow's string type guarantees) 0xC2 is always a lead byte, so the byte patterns are exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from numpy.typing import NDArray


def _value_bytes(array: pa.Array) -> NDArray[np.uint8]:
    """The bytes of a string or binary array's values, as a numpy view (no copy)."""
    buffers = array.buffers()
    if buffers[2] is None or len(array) == 0:
        return np.zeros(0, dtype=np.uint8)
    wide = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    offsets: NDArray[Any] = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    first, last = offsets[array.offset], offsets[array.offset + len(array)]
    return np.frombuffer(buffers[2], dtype=np.uint8)[first:last]


def has_control_characters(column: pa.Array | pa.ChunkedArray) -> bool:
    """Whether any value of a string column holds a control character."""
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise TypeError(f"a string column is needed, not {column.type}")
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    for chunk in chunks:
        data = _value_bytes(chunk)
        if len(data) == 0:
            continue
        # reductions and one comparison: no per-byte table look-ups
        if data.min() < 0x20 or (data == 0x7F).any():
            return True
        if data.max() >= 0xC2:  # only text beyond ASCII can hold U+0080 to U+009F
            follow = data[1:][data[:-1] == 0xC2]
            if ((follow >= 0x80) & (follow <= 0x9F)).any():
                return True
    return False


# Unicode whitespace beyond ASCII, as ``str.isspace`` says: all of it is two or three bytes in
# UTF-8. Written out, since finding it among 65,536 characters was a noticeable part of every
# command's start-up (docs/performance.md); tests/contract/test_column_checks.py checks the
# list against ``str.isspace``.
_WIDE_SPACES = np.array(
    [0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000],
    dtype=np.int32,
)


def has_unicode_whitespace(column: pa.Array | pa.ChunkedArray) -> bool:
    """Whether any value of a string column holds whitespace beyond ASCII (a no-break space,
    an ideographic space, ...). ASCII text pays one reduction; text beyond it decodes only the
    two- and three-byte sequences whose lead byte can start such a space (0xC2, 0xE1 to 0xE3)."""
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        raise TypeError(f"a string column is needed, not {column.type}")
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    for chunk in chunks:
        data = _value_bytes(chunk)
        if len(data) < 2 or data.max() < 0xC2:
            continue
        # in valid UTF-8 a lead byte is never a continuation byte: positions are exact
        two = np.flatnonzero(data[:-1] == 0xC2)
        if len(two) and np.isin(0x80 | (data[two + 1].astype(np.int32) & 0x3F), _WIDE_SPACES).any():
            return True
        lead = data[:-2]
        three = np.flatnonzero((lead >= 0xE1) & (lead <= 0xE3))
        if len(three):
            points = (
                (data[three].astype(np.int32) & 0x0F) << 12
                | (data[three + 1].astype(np.int32) & 0x3F) << 6
                | (data[three + 2].astype(np.int32) & 0x3F)
            )
            if np.isin(points, _WIDE_SPACES).any():
                return True
    return False
