"""Doc ids as 64-bit numbers, computed in numpy straight from Arrow's string buffers.

Hashing millions of distinct doc ids into a dictionary is the most expensive step of an
evaluation. Here each id is read as big-endian 8-byte words (bytes past its end are zero), which
gives two things without a hash table:

- a **fingerprint** (the words and the length mixed into one uint64): equal ids always get equal
  fingerprints; different ids collide with probability ~2^-64, and callers verify every match
  and every clash on the real strings, falling back to an exact dictionary when one is false;
- **sort keys**: comparing the word sequences as unsigned integers is comparing the ids byte by
  byte (``strcmp`` order, which trec_eval uses to break score ties), for ids without NUL bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from numpy.typing import NDArray

_MIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX_2 = np.uint64(0xC4CEB9FE1A85EC53)
_STEP = np.uint64(0x9E3779B97F4A7C15)
_SHIFT_33 = np.uint64(33)
# _MASKS[r] keeps the first r bytes of a big-endian word
_MASKS = np.array(
    [0] + [(0xFFFFFFFFFFFFFFFF << (64 - 8 * r)) & 0xFFFFFFFFFFFFFFFF for r in range(1, 9)],
    dtype=np.uint64,
)


def mix(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """A 64-bit finaliser (murmur3's fmix64): spreads every input bit over the output."""
    return mix_in_place(values.copy())


def mix_in_place(values: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """:func:`mix`, overwriting ``values``; one scratch array instead of a new one per step
    (at 10M ids each new array is 80 MB of fresh pages for the kernel to zero)."""
    scratch = np.right_shift(values, _SHIFT_33)
    values ^= scratch
    values *= _MIX_1
    np.right_shift(values, _SHIFT_33, out=scratch)
    values ^= scratch
    values *= _MIX_2
    np.right_shift(values, _SHIFT_33, out=scratch)
    values ^= scratch
    return values


@dataclass(frozen=True)
class StringColumn:
    """The bytes and offsets of one Arrow string array, as numpy views (no copy of the data)."""

    data: NDArray[np.uint8]
    starts: NDArray[np.signedinteger[Any]]  # int32 (string) or int64 (large_string) views
    lengths: NDArray[np.signedinteger[Any]]

    @classmethod
    def of(cls, array: pa.Array) -> StringColumn:
        """Views over a (single-chunk) string or large_string array."""
        buffers = array.buffers()
        offsets: NDArray[np.signedinteger[Any]]
        if pa.types.is_large_string(array.type):
            offsets = np.frombuffer(buffers[1], dtype=np.int64)
        else:
            offsets = np.frombuffer(buffers[1], dtype=np.int32)
        offsets = offsets[array.offset : array.offset + len(array) + 1]
        data = (
            np.frombuffer(buffers[2], dtype=np.uint8)
            if buffers[2] is not None
            else np.zeros(0, np.uint8)
        )
        if len(data) < 8:  # the unaligned 8-byte view needs at least 8 bytes
            data = np.concatenate([data, np.zeros(8, np.uint8)])
        return cls(data, offsets[:-1], np.diff(offsets))

    def part(self, rows: slice) -> StringColumn:
        """The ids of a range of rows (views, no copy)."""
        return StringColumn(self.data, self.starts[rows], self.lengths[rows])

    def word(self, rows: NDArray[np.int64] | slice, index: int) -> NDArray[np.uint64]:
        """Big-endian bytes ``8*index .. 8*index+7`` of the selected ids, zero past each end."""
        starts = self.starts[rows] + 8 * index if index else self.starts[rows]
        limit = len(self.data) - 8
        # every byte position as the start of an unaligned little-endian uint64 (a strided view)
        words = np.ndarray(shape=(limit + 1,), dtype="<u8", buffer=self.data.data, strides=(1,))
        if isinstance(rows, slice):  # offsets ascend: the ids near the end are a suffix
            tail = np.arange(int(np.searchsorted(starts, limit, side="right")), len(starts))
        else:
            tail = np.flatnonzero(starts > limit)
        if len(tail):
            # ids ending in the last 7 bytes: load the final word, shift their bytes to the front
            shift = ((starts[tail].astype(np.int64) - limit) * 8).astype(np.uint64)
            starts = starts.copy()
            starts[tail] = limit
        loaded: NDArray[np.uint64] = words[starts]
        loaded.byteswap(inplace=True)
        if len(tail):
            loaded[tail] <<= shift
        # keep the id's own bytes: shift the rest out and back (a shift of 64 gives 0 in numpy)
        missing = 8 * index + 8 - self.lengths[rows]
        if missing.max(initial=0) > 0:
            np.clip(missing, 0, 8, out=missing)
            bits = missing.astype(np.uint8)  # widened in small buffers by the shifts
            del missing
            bits <<= 3
            loaded >>= bits
            loaded <<= bits
        return loaded

    def fingerprint(
        self, salt: NDArray[np.uint64] | None = None, out: NDArray[np.uint64] | None = None
    ) -> NDArray[np.uint64]:
        """One uint64 per id (and per ``salt`` value, e.g. a scaled topic code): equal inputs
        give equal values. Written into ``out`` when given."""
        if out is None:
            result = self.lengths.astype(np.uint64)
        else:
            result = out
            result[...] = self.lengths
        result *= _STEP
        if salt is not None:
            result ^= salt
        if len(result) == 0:
            return result
        result ^= self.word(slice(None), 0)
        for index in range(1, (int(self.lengths.max()) + 7) // 8):
            rows = np.flatnonzero(self.lengths > 8 * index)  # only ids this long go on
            result[rows] = mix_in_place(result[rows]) * _STEP + self.word(rows, index)
        return mix_in_place(result)

    def sort_words(self, rows: NDArray[np.int64]) -> list[NDArray[np.uint64]]:
        """Words of the selected ids, most significant first: their lexicographic order is the
        byte order of the ids."""
        longest = int(self.lengths[rows].max(initial=0))
        return [self.word(rows, index) for index in range((longest + 7) // 8)]
