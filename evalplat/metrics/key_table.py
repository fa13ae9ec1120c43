"""The judgments' pair keys as a lookup table for the run's keys (the join's inner step)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray


class KeyTable:
    """Unique 64-bit keys, answering "where is each of these keys?".

    A direct-address table on the low key bits (keys are mixed, so those are uniform) answers
    most lookups with two gathers. Keys whose slot several table keys share are looked up by a
    binary search among those table keys only, in sorted order (random probes into millions of
    keys miss the cache on every step; sorted ones walk it). Built once, asked block by block.
    """

    def __init__(self, keys: NDArray[np.int64]) -> None:
        self.keys = keys
        bits = max(16, min(25, (8 * len(keys)).bit_length()))
        self.mask = np.int64((1 << bits) - 1)
        slot = keys & self.mask
        self.slots = np.full(1 << bits, -1, dtype=np.int32)
        own = np.arange(len(keys), dtype=np.int32)
        self.slots[slot] = own  # the last writer wins
        lost = self.slots[slot] != own
        self.slots[slot[lost]] = -2  # shared slot: answered by the binary search
        crowded = np.flatnonzero(self.slots[slot] == -2)  # the keys of shared slots
        self.crowded = crowded[np.argsort(keys[crowded])]
        self.crowded_keys = keys[self.crowded]

    def find(self, keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(positions in ``keys``, positions in the table) of the keys found in the table."""
        entry = self.slots[keys & self.mask]
        direct = np.flatnonzero(entry >= 0)
        found = self.keys[entry[direct]] == keys[direct]
        rows, matched = direct[found], entry[direct[found]].astype(np.int64)
        shared = np.flatnonzero(entry == -2)
        if len(shared):
            ordered = self.crowded_keys
            needles = keys[shared]
            in_order = np.argsort(needles)
            position = np.searchsorted(ordered, needles[in_order])
            position[position == len(ordered)] = 0
            hits = np.flatnonzero(ordered[position] == needles[in_order])
            rows = np.concatenate((rows, shared[in_order[hits]]))
            matched = np.concatenate((matched, self.crowded[position[hits]]))
        return rows, matched
