"""A sweep's new runs are scored from the results it holds in memory: the scores are those of
the stored results, an interrupted setting is left resumable, and a sweep killed at any commit
leaves no run that looks complete and converges when run again. Searched one at a time, the
queries run on the caller's thread with the outcomes a pool gives."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evalplat.running import runner
from evalplat.running.runner import RunInterruptedError, RunSettings
from evalplat.running.search_driver import search_unstored
from evalplat.running.sweep import SweepOptions, plan_sweep, sweep
from evalplat.searchers.base import Hit, Searcher, SearchError, TransientSearchError
from evalplat.searchers.retry import RetryPolicy
from evalplat.store import Store

from .conftest import ENGINE, planted_content
from .planted import QUERIES, _unit


def run_sweep(store: Store, grid: list[str], **settings: int) -> object:
    options = SweepOptions(metric="P@1", settings=RunSettings(concurrency=1, **settings))
    return sweep(store, plan_sweep(store, "engine", "planted", grid, options))


def _known(skill: float) -> float:
    """The planted P@1 of a skill: the share of queries it knows."""
    return sum(_unit(str(n)) < skill for n in range(QUERIES)) / QUERIES


def test_scores_from_memory_are_those_of_the_stored_results(planted: Store) -> None:
    result = run_sweep(planted, ["skill=0.2,0.9"])
    for row in result.rows:  # type: ignore[attr-defined]
        kept = planted.evaluation_scores(row.run_id)
        means = planted.run_info(row.run_id).means
        again = runner.rescore(planted, row.run_id)  # reads the stored results and records
        assert again.means == means
        assert planted.evaluation_scores(row.run_id).equals(kept)
        assert {"P@1", "nDCG@10", "NumRet", "Latency", "ZeroResult"} <= set(means)
    assert [row.mean for row in result.rows] == [_known(0.9), _known(0.2)]  # type: ignore[attr-defined]


def test_an_interrupted_setting_keeps_its_stored_chunks_and_is_resumed(
    planted: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANTED_STOP", "0.9:topic 45")
    with pytest.raises(RunInterruptedError):
        run_sweep(planted, ["skill=0.2,0.9"], batch_size=20)
    [stopped] = planted.list_runs("engine~skill=0.9")
    assert stopped.status == "interrupted" and not stopped.means
    ok = planted.run_outcomes(stopped.id)
    assert len(ok) == 40 and set(ok["status"]) == {"ok"}  # two chunks of 20 were stored
    monkeypatch.delenv("PLANTED_STOP")
    result = run_sweep(planted, ["skill=0.2,0.9"], batch_size=20)
    assert (result.searched, result.cached) == (1, 1)  # type: ignore[attr-defined]
    [resumed] = planted.list_runs("engine~skill=0.9")
    assert resumed.id == stopped.id and resumed.status == "complete"
    assert resumed.means["P@1"] == _known(0.9)


def _sweep_in_subprocess(url: str, crash: str | None, trace: Path | None) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALPLAT_CRASH")}
    if crash is not None:
        env["EVALPLAT_CRASH_AT"] = crash
    if trace is not None:
        env["EVALPLAT_CRASH_TRACE"] = str(trace)
    args = ["sweep", "engine", "-t", "planted", "--grid", "skill=0.9", "--metric", "P@1",
            "--concurrency", "1", "--db", url]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", "from evalplat.cli import main; main()", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode


def _complete_runs_are_whole(store: Store) -> None:
    for run in store.list_runs():
        if run.status == "complete":
            assert run.queries_done == run.queries_total == QUERIES
            assert run.means["P@1"] == _known(float(run.config.partition("=")[2] or 0.4))


def _fresh(path: Path) -> str:
    url = f"sqlite:///{path}"
    with Store.init(url) as store:
        store.import_test_set("planted", planted_content())
        store.add_config("engine", "python", dict(ENGINE))
    return url


@pytest.mark.slow
def test_a_sweep_killed_at_any_commit_converges_when_run_again(tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    assert _sweep_in_subprocess(_fresh(tmp_path / "traced.db"), None, trace) == 0
    names = trace.read_text(encoding="utf-8").split()
    points = [f"{name}:{names[: i + 1].count(name)}" for i, name in enumerate(names)]
    assert len(points) >= 7  # the baseline's run and the setting's: created, stored, finished
    for point in points:
        url = _fresh(tmp_path / f"{point.replace(':', '-')}.db")
        assert _sweep_in_subprocess(url, point, None) == -9, point  # SIGKILL
        with Store.open(url) as store:
            _complete_runs_are_whole(store)
            result = run_sweep(store, ["skill=0.9"])  # the killed process is gone: resumed
            _complete_runs_are_whole(store)
            runs = store.list_runs()
            assert not [run.id for run in runs if run.status == "running"], point
            complete = sorted(run.config for run in runs if run.status == "complete")
            assert complete == ["engine", "engine~skill=0.9"], point
            assert result.winner == "skill=0.9", point  # type: ignore[attr-defined]


class _Flaky(Searcher):
    """Answers every query with its topic's documents; the first try of ``flaky`` times out
    and ``broken`` always fails. Records the thread of each call."""

    kind = "flaky"

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.tried: set[str] = set()

    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        self.threads.append(threading.current_thread().name)
        if query_id == "broken":
            raise SearchError("the engine refused the query")
        if query_id == "flaky" and query_id not in self.tried:
            self.tried.add(query_id)
            raise TransientSearchError("timed out")
        return [(f"{query_id}-{n}", 1.0 / n) for n in range(1, depth + 1)]


def test_one_at_a_time_searches_on_the_callers_thread_as_a_pool_would() -> None:
    queries = [(q, f"text {q}") for q in ("a", "flaky", "broken", "b", "c")]
    retry = RetryPolicy(retries=2, backoff=0.0, jitter=False)
    outcomes = {}
    for concurrency in (1, 3):
        engine = _Flaky()
        settings = RunSettings(concurrency=concurrency, depth=3, retry=retry)
        got = search_unstored(engine, queries, settings)
        outcomes[concurrency] = [(o.query_id, o.status, o.attempts, o.hits) for o in got]
        on_caller = set(engine.threads) == {threading.current_thread().name}
        assert on_caller == (concurrency == 1), engine.threads
    assert outcomes[1] == outcomes[3]
    assert [status for _, status, _, _ in outcomes[1]] == ["ok", "ok", "failed", "ok", "ok"]
    assert outcomes[1][1][2] == 2  # the timed-out try was retried once
