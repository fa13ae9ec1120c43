"""A run's batches are stored by one writer thread beside the search
(``evalplat.running.batch_writer``): in order, each whole, and a failed write reaches the
caller and stops the writing, so the run never looks whole; on both databases."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from evalplat.errors import OperationalError
from evalplat.running.batch_writer import BatchWriter
from evalplat.running.run_scoring import HeldRun
from evalplat.store import QueryOutcome, Store

from .helpers import new_run


def _batch(numbers: range) -> list[QueryOutcome]:
    return [QueryOutcome(f"q{n}", "ok", [(f"d{n}", 2.0), (f"d{n + 1}", 1.0)]) for n in numbers]


def test_batches_are_stored_in_order_from_one_other_thread(store: Store) -> None:
    run_id, _ = new_run(store)
    held = HeldRun(whole=True)
    writers: list[str] = []
    record = store.record_outcomes

    def recording(run: int, outcomes: Sequence[QueryOutcome], **kwargs: object) -> None:
        writers.append(threading.current_thread().name)
        record(run, outcomes, **kwargs)  # type: ignore[arg-type]

    store.record_outcomes = recording  # type: ignore[method-assign]
    writer = BatchWriter(store, run_id, held)
    for numbers in (range(0, 4), range(4, 8), range(8, 10)):
        writer.submit(_batch(numbers))
    writer.submit([])  # nothing to store: no transaction
    writer.close()
    assert writers == ["evalplat-writer"] * 3
    stored = store.load_results(run_id)
    assert len(stored) == 20 and len(store.run_outcomes(run_id)) == 10
    assert stored.equals(held.results())


def test_a_failed_write_reaches_the_caller_and_nothing_after_it_is_stored(store: Store) -> None:
    run_id, _ = new_run(store)
    calls: list[int] = []
    record = store.record_outcomes

    def failing_second(run: int, outcomes: Sequence[QueryOutcome], **kwargs: object) -> None:
        calls.append(len(outcomes))
        if len(calls) == 2:
            raise OperationalError("database is full")
        record(run, outcomes, **kwargs)  # type: ignore[arg-type]

    store.record_outcomes = failing_second  # type: ignore[method-assign]
    writer = BatchWriter(store, run_id, HeldRun(whole=True), pending=1)
    with pytest.raises(OperationalError, match="database is full"):
        for numbers in (range(0, 3), range(3, 6), range(6, 8), range(8, 10)):
            writer.submit(_batch(numbers))
        writer.close()
    writer.stop()
    assert calls[:2] == [3, 3] and len(calls) == 2  # the batches after the failed one: none
    assert sorted(store.run_outcomes(run_id)["query_id"]) == ["q0", "q1", "q2"]
