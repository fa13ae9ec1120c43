"""A run searches with the heap it started with frozen (``evalplat.running.collector``): a full
collection during the searching walks only what the run made, so a query's latency does not
take in a pause of evalplat's own; the heap is given back when the last search ends, also
when the searching fails."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from evalplat.running import runner
from evalplat.running.collector import steady_collector
from evalplat.running.search_driver import RunSettings, search_unstored
from evalplat.searchers.base import Hit, Searcher
from evalplat.store import Store

from .helpers import small_content

ENGINE = """
import gc
from pathlib import Path

def search(query, depth, **params):
    with open(Path(__file__).with_name("frozen.txt"), "a", encoding="utf-8") as seen:
        seen.write(f"{gc.get_freeze_count()}\\n")
    return [("d" + query.split()[-1], 1.0)]
"""

HELD = 50_000  # containers the process holds before the run searches


def test_a_run_searches_with_the_heap_it_started_with_frozen(store: Store, tmp_path: Path) -> None:
    (tmp_path / "freeze_engine.py").write_text(ENGINE, encoding="utf-8")
    store.import_test_set("small", small_content())
    store.add_config("engine", "python", {"function": "freeze_engine:search",
                                          "path": str(tmp_path)})  # fmt: skip
    held = [[n] for n in range(HELD)]
    assert gc.get_freeze_count() == 0
    info = runner.run(store, "engine", "small", settings=RunSettings(concurrency=2))
    assert info.status == "complete"
    seen = [int(line) for line in (tmp_path / "frozen.txt").read_text().split()]
    assert len(seen) == 10 and min(seen) >= HELD, seen
    assert gc.get_freeze_count() == 0  # given back: the next full collection walks it all
    assert len(held) == HELD


class _Counting(Searcher):
    kind = "counting"

    def __init__(self) -> None:
        self.frozen: list[int] = []

    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        self.frozen.append(gc.get_freeze_count())
        return [("d" + query_id, 1.0)]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_unstored_searching_freezes_the_heap_too(concurrency: int) -> None:
    engine = _Counting()
    held = [[n] for n in range(HELD)]
    queries = [(f"q{n}", f"topic {n}") for n in range(6)]
    search_unstored(engine, queries, RunSettings(concurrency=concurrency, depth=1))
    assert len(engine.frozen) == 6 and min(engine.frozen) >= HELD
    assert gc.get_freeze_count() == 0 and len(held) == HELD


def test_searches_at_once_share_one_freeze_undone_by_the_last() -> None:
    inner_entered, outer_may_end = threading.Event(), threading.Event()
    counts: list[int] = []

    def other_search() -> None:
        with steady_collector():
            inner_entered.set()
            outer_may_end.wait(10)
        counts.append(gc.get_freeze_count())  # this one ended first: still frozen

    with steady_collector():
        frozen = gc.get_freeze_count()
        assert frozen > 0
        thread = threading.Thread(target=other_search)
        thread.start()
        assert inner_entered.wait(10)
        outer_may_end.set()
        thread.join(10)
        assert counts and counts[0] >= frozen
    assert gc.get_freeze_count() == 0


def test_a_search_that_fails_gives_the_heap_back() -> None:
    with pytest.raises(RuntimeError), steady_collector():
        assert gc.get_freeze_count() > 0
        raise RuntimeError("the engine broke")
    assert gc.get_freeze_count() == 0
