"""The command searcher with a real engine process (tests/searchers/fixtures)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from evalplat.searchers import (
    BackendUnavailableError,
    SearchContext,
    SearchError,
    TransientSearchError,
    get_kind,
)

ENGINE = Path(__file__).resolve().parent / "fixtures" / "json_lines_engine.py"


def command(**params: Any) -> Any:
    params.setdefault("command", [sys.executable, str(ENGINE)])
    return get_kind("command").create(params, SearchContext())


def test_queries_go_in_and_ranked_results_come_out() -> None:
    with command() as searcher:
        searcher.check()
        assert searcher.search("q1", "boundary layer shock", 10) == [("d3", 3.0), ("d1", 2.0)]
        assert searcher.search("q2", "boundary layer shock", 1) == [("d3", 3.0)]
        assert searcher.search("q3", "nothing matches", 10) == []


def test_the_process_is_started_once_and_kept() -> None:
    with command() as searcher:
        first = searcher.search("q1", "pid", 1)
        assert searcher.search("q2", "pid", 1) == first


def test_a_crashed_process_is_transient_and_restarted() -> None:
    with command() as searcher:
        before = searcher.search("q1", "pid", 1)
        with pytest.raises(TransientSearchError, match="exited with code 3: engine: fatal"):
            searcher.search("q2", "crash", 1)
        after = searcher.search("q3", "pid", 1)
    assert after != before


def test_non_json_output_names_the_line_and_restarts_the_process() -> None:
    with command() as searcher:
        before = searcher.search("q1", "pid", 1)
        with pytest.raises(
            SearchError, match=r"WARNING: not json at all.*not a JSON line"
        ) as error:
            searcher.search("q2", "garbage", 1)
        assert not isinstance(error.value, TransientSearchError)
        assert searcher.search("q3", "pid", 1) != before
        assert searcher.search("q4", "heat", 5) == [("d2", 1.0)]


def test_an_error_reply_fails_only_that_query() -> None:
    with command() as searcher:
        with pytest.raises(SearchError, match="index 'docs' is missing"):
            searcher.search("q1", "error", 1)
        assert searcher.search("q2", "heat", 5) == [("d2", 1.0)]


def test_a_hung_process_times_out_and_is_replaced() -> None:
    # "hang" never answers (30 s), so the timeout must fire; 3 s is also the time the replacement
    # process gets to start and answer, which a loaded machine needs.
    with command(timeout=3) as searcher:
        with pytest.raises(TransientSearchError, match=r"no answer.*within 3s"):
            searcher.search("q1", "hang", 1)
        assert searcher.search("q2", "heat", 5) == [("d2", 1.0)]


def test_a_missing_program_fails_the_check() -> None:
    with (
        command(command="/nonexistent/engine --flag") as searcher,
        pytest.raises(BackendUnavailableError, match="cannot start"),
    ):
        searcher.check()


def test_command_line_placeholders_are_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALPLAT_TEST_ENGINE", str(ENGINE))
    with command(command=f"'{sys.executable}' ${{EVALPLAT_TEST_ENGINE}}") as searcher:
        assert searcher.search("q", "heat", 1) == [("d2", 1.0)]


def test_a_pool_of_processes_serves_threads() -> None:
    results: list[list[tuple[str, float]]] = []
    pids: set[str] = set()
    lock = threading.Lock()
    with command(processes=2) as searcher:

        def worker(n: int) -> None:
            for i in range(10):
                hits = searcher.search(f"q{n}-{i}", "boundary flow", 10)
                pid = searcher.search(f"p{n}-{i}", "pid", 1)[0][0]
                with lock:
                    results.append(hits)
                    pids.add(pid)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 40
    assert all(hits == [("d1", 2.0), ("d3", 1.0)] for hits in results)
    assert 1 <= len(pids) <= 2
