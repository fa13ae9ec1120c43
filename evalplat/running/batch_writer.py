"""A run's finished batches written by one thread beside the search: ``BatchWriter``.

The driver's main thread collects the outcomes the search threads finish and, every batch,
holds them (``HeldRun.add``, which also makes the batch's result columns); the writes go to a
single writer thread that stores each batch in its own transaction, in the order given
(``Store.record_outcomes``). The database still has one writer per run. A million results a run
spend about 1.4 s in the database on SQLite, in C, without the interpreter lock (the Arrow
scratch file and the ``INSERT ... SELECT``), so the main thread goes on collecting and holding
the next batch meanwhile, instead of leaving the search threads' outcomes queued until it is
back.

``close`` waits until every batch handed over is written and raises the first error the writer
met (the batches after a failed one are not written: the run then never looks complete, and the
error reaches the caller as if it had written them itself). At most ``pending`` batches wait at
once, so a database slower than the search holds the searching back rather than memory growing.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalplat.running.run_scoring import HeldRun
    from evalplat.store import Store
    from evalplat.store.runs import QueryOutcome

_Batch = tuple[Sequence["QueryOutcome"], dict[str, Any] | None]


class BatchWriter:
    """Stores the batches of run ``run_id`` from a thread of its own (see the module doc)."""

    def __init__(self, store: Store, run_id: int, held: HeldRun, *, pending: int = 2) -> None:
        self._store = store
        self._run_id = run_id
        self._held = held
        self._batches: queue.Queue[_Batch | None] = queue.Queue(maxsize=pending)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="evalplat-writer", daemon=True)
        self._thread.start()

    def submit(self, outcomes: Sequence[QueryOutcome]) -> None:
        """Hold ``outcomes`` and hand them to the writer; raises the writer's error, if any."""
        self._raise()
        if outcomes:
            self._batches.put((outcomes, self._held.add(self._run_id, outcomes)))

    def close(self) -> None:
        """Wait for every batch handed over to be written; raise the writer's first error."""
        self.stop()
        self._raise()

    def stop(self) -> None:
        """Wait for the writer to finish what it was given, without raising (idempotent)."""
        if self._thread.is_alive():
            self._batches.put(None)
            self._thread.join()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _loop(self) -> None:
        failed = False
        while True:
            batch = self._batches.get()
            if batch is None:
                return
            if failed:  # after a failed write, nothing more: the run must not look whole
                continue
            outcomes, columns = batch
            try:
                self._store.record_outcomes(self._run_id, outcomes, results=columns)
            except BaseException as error:  # handed to the main thread by submit and close
                self._error = error
                failed = True
