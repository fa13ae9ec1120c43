"""Arrow columns to numpy and back, straight from the buffers.

pyarrow's own conversions (``to_numpy``, ``fill_null``, ``pa.array`` of a numpy array) go
through its pandas shim and import pandas, which would weigh on a command's start-up
(docs/performance.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evalplat.errors import InputError

if TYPE_CHECKING:
    from numpy.typing import NDArray


def topic_codes(ids: pa.ChunkedArray | pa.Array, topics: pa.Array) -> NDArray[np.int32]:
    """Code of each id in ``topics`` (sorted unique strings), -1 when absent."""
    codes = pc.index_in(ids, value_set=topics)
    return filled(codes)


def filled(codes: pa.ChunkedArray | pa.Array) -> NDArray[np.int32]:
    """int32 codes with nulls as -1, copied once from the Arrow buffers of each chunk."""
    chunks = codes.chunks if isinstance(codes, pa.ChunkedArray) else [codes]
    values = np.empty(len(codes), dtype=np.int32)
    at = 0
    for chunk in chunks:
        n = len(chunk)
        if n == 0:
            continue
        part = values[at : at + n]
        part[...] = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[
            chunk.offset : chunk.offset + n
        ]
        if chunk.null_count:
            # the validity bitmap, unpacked by hand (converting a BooleanArray imports pandas)
            bitmap = np.frombuffer(chunk.buffers()[0], dtype=np.uint8)
            valid = np.unpackbits(bitmap, count=chunk.offset + n, bitorder="little")
            part[valid[chunk.offset :] == 0] = -1
        at += n
    return values


def numeric(values: pa.ChunkedArray | pa.Array, dtype: type[np.generic]) -> NDArray[Any]:
    """A null-free numeric Arrow column as numpy, straight from its buffers."""
    array = combined(values)
    if array.null_count:
        raise InputError("missing values in a numeric column")
    arrow_dtype = np.dtype(array.type.to_pandas_dtype())
    raw = np.frombuffer(array.buffers()[1], dtype=arrow_dtype)
    return raw[array.offset : array.offset + len(array)].astype(dtype, copy=False)


def booleans(values: pa.ChunkedArray | pa.Array) -> NDArray[np.bool_]:
    """A null-free Arrow boolean column as numpy, unpacked from its bitmap."""
    array = combined(values)
    if array.null_count:
        raise InputError("missing values in a boolean column")
    bits = np.frombuffer(array.buffers()[1], dtype=np.uint8)
    unpacked = np.unpackbits(bits, count=array.offset + len(array), bitorder="little")
    return unpacked[array.offset :].view(np.bool_)


def arrow(values: NDArray[Any]) -> pa.Array:
    """A numpy array of int64 or bool as Arrow."""
    if values.dtype == np.bool_:
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(packed)])
    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def combined(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One array: the only chunk as it is, several chunks concatenated."""
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            return values.chunk(0)
        return values.combine_chunks() if values.num_chunks else pa.array([], values.type)
    return values
