"""Searching with the garbage collector's full passes kept short, so that latency is the
engine's and not evalplat's own pauses.

CPython stops every thread of the process while its collector walks the oldest generation,
and that walk visits every container the process holds, which in a long process takes far
longer than a fast engine's answer. A query whose answer arrived during such a pause is timed
with it, and a percentile over 20 queries moves by the whole pause: a latency gate then sees
a regression the engine never had (docs/performance.md gives the figures measured).

``steady_collector`` moves what the process holds when searching starts to the collector's
permanent generation (``gc.freeze``), so a full pass during the searching walks only what the
run created, and gives it back (``gc.unfreeze``) when the last search of the process ends.
Young collections go on as before; cyclic garbage among the frozen objects waits for the
first full pass after the searching.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_searching = 0  # the searches of this process inside ``steady_collector`` now


@contextmanager
def steady_collector() -> Iterator[None]:
    """Freeze the heap while the block searches; nested or concurrent blocks share one freeze,
    undone when the last one ends."""
    global _searching
    with _lock:
        if _searching == 0:
            gc.freeze()
        _searching += 1
    try:
        yield
    finally:
        with _lock:
            _searching -= 1
            if _searching == 0:
                gc.unfreeze()
