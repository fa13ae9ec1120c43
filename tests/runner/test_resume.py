"""A run whose process is killed (SIGKILL) or stopped with Ctrl-C (SIGINT), then resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evalplat.running import runner
from evalplat.store import Store

from .helpers import QUERY_IDS, es_params, search_server, small_content

METRICS = ["nDCG@10", "P@1", "AP"]


def _start_run(db_url: str) -> subprocess.Popen[bytes]:
    """``evalplat run`` in its own process, one query at a time against the slow server."""
    command = [sys.executable, "-c", "from evalplat.cli import main; main()", "run", "es",
               "--testset", "small", "--concurrency", "1", "--db", db_url]  # fmt: skip
    for metric in METRICS:
        command += ["--metric", metric]
    return subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    """Give the child Ctrl-C's default disposition. A suite started in the background by a
    shell without job control inherits SIGINT ignored, and Python keeps ignoring a SIGINT that
    was ignored when it started (as ``nohup`` intends): the child would never see Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_progress(store: Store, done: int, process: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        runs = store.list_runs()
        if runs and runs[0].queries_done >= done:
            return runs[0].id
        if process.poll() is not None:
            raise AssertionError(f"run ended early: {process.stderr.read()!r}")  # type: ignore[union-attr]
        time.sleep(0.05)
    raise AssertionError("the run made no progress")


def test_sigkilled_run_is_interrupted_and_resume_searches_only_the_missing_queries(
    db_url: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    # The server answers 3 queries, then holds the 4th until the run is killed: the kill lands
    # mid-run however slowly this process gets to poll.
    with Store.open(db_url) as store, search_server(delay=0.3, hold_after=3) as server:
        store.import_test_set("small", small_content())
        store.add_config("es", "http", es_params(server.url, "slow"))
        process = _start_run(db_url)
        run_id = _wait_for_progress(store, 2, process)
        process.kill()
        process.communicate()  # reap it (a zombie still has a pid) and close the pipe
        server.release.set()
        listed = json.loads(cli("runs", "list", "--db", db_url, "--json").stdout)  # type: ignore[attr-defined]
        assert listed[0]["id"] == run_id
        assert listed[0]["status"] == "interrupted"
        assert listed[0]["means"] == {}  # nothing that looks like a finished run
        kept = set(store.run_outcomes(run_id)["query_id"])
        assert 2 <= len(kept) < len(QUERY_IDS)
        searched = {q: server.count(q) for q in QUERY_IDS}

        resumed = cli("run", "--resume", str(run_id), "--db", db_url, "--json")
        assert resumed.exit_code == 0, resumed.stderr  # type: ignore[attr-defined]
        finished = json.loads(resumed.stdout)  # type: ignore[attr-defined]
        assert (finished["id"], finished["status"]) == (run_id, "complete")
        assert all(server.count(q) == searched[q] for q in kept)  # not searched again
        assert all(server.count(q) == searched[q] + 1 for q in set(QUERY_IDS) - kept)

        settings = runner.RunSettings(concurrency=4, cache_dir=tmp_path)
        clean = runner.run(store, "es", "small", metrics=METRICS, settings=settings)
        # latency is a timing, different on every run: everything else must match exactly
        assert {"Latency", "Latency(p=95)"} <= set(finished["means"])
        assert untimed(finished["means"]) == pytest.approx(untimed(clean.means))
        resumed_scores = store.evaluation_scores(run_id)
        clean_scores = store.evaluation_scores(clean.id)
        timed = resumed_scores["metric"].str.startswith("Latency")
        assert timed.sum() == len(QUERY_IDS) * 2
        assert (
            resumed_scores[~timed].values.tolist()
            == clean_scores[~clean_scores["metric"].str.startswith("Latency")].values.tolist()
        )
        assert (
            store.load_results(run_id).values.tolist()
            == store.load_results(clean.id).values.tolist()
        )


def untimed(means: dict[str, float]) -> dict[str, float]:
    return {name: value for name, value in means.items() if not name.startswith("Latency")}


def test_ctrl_c_marks_the_run_interrupted_and_exits_3(db_url: str) -> None:
    with Store.open(db_url) as store, search_server(delay=0.3) as server:
        store.import_test_set("small", small_content())
        store.add_config("es", "http", es_params(server.url, "slow"))
        process = _start_run(db_url)
        run_id = _wait_for_progress(store, 1, process)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 3
        assert f"run {run_id} interrupted" in stderr.decode()
        assert f"--resume {run_id}" in stderr.decode()
        info = store.run_info(run_id)
        assert info.status == "interrupted"
        assert info.error is not None and "Ctrl-C" in info.error
        assert info.queries_done >= 1
        assert info.pid != os.getpid()
