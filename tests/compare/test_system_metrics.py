"""Latency and zero results gate like relevance once a gate names them: a slower candidate, or
one that answers fewer queries, fails ``compare --gate ... --fail-on-regression``; timing noise
does not. A latency gate is decided on both configs searched again together, query by query,
by ``compare`` (``evalplat.running.paired_timing``). Without ``--gate`` they are shown, not
gated, and the output says so.

The engine is a loopback HTTP server of the tests' own (``fixtures/latency_engine.py``, in a
process of its own) that answers like Elasticsearch after a delay set per path: ``/base``
waits ``BASE`` seconds, ``/double`` twice that, ``/noisy`` ``BASE`` times a factor drawn
uniformly from [0.9, 1.1], and ``/sparse`` answers like ``/base`` but returns nothing for
every tenth query.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.running import runner
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

# seconds: large against the loopback round trip and the scheduling delays of a busy machine,
# so that what the server is told to add dominates whatever else a request costs, in both
# directions of the tests (the engine's listen backlog is sized for CONCURRENCY: a dropped SYN
# costs a second). Latency is decided on both versions timed together, query by query, so
# the load moves both timings of a pair alike: a quarter of a second is plenty. Half the
# queries at a time: a run waits two delays, and paired timing two per search of a pair and
# round, rather than five with twenty at a time (11 to 18 s a test, 6 to 10 s this way).
BASE = 0.25
QUERIES = 100
CONCURRENCY = QUERIES // 2


def content() -> TestSetContent:
    ids = [f"q{n}" for n in range(QUERIES)]
    queries = pd.DataFrame(
        {"query_id": ids, "text": [f"topic {n}" for n in range(QUERIES)],
         "weight": [float("nan")] * QUERIES, "tags": [None] * QUERIES}
    )  # fmt: skip
    judgments = pd.DataFrame(
        {"query_id": ids, "doc_id": [f"d{n}" for n in range(QUERIES)], "grade": [2] * QUERIES,
         "source": [None] * QUERIES}
    )  # fmt: skip
    return TestSetContent(queries=queries, judgments=judgments)


@pytest.fixture
def engine() -> Iterator[str]:
    script = Path(__file__).parent / "fixtures" / "latency_engine.py"
    process = subprocess.Popen(
        [sys.executable, str(script), str(BASE)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())  # printed once the socket listens
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.communicate()  # reap it and close its pipe


def _runs(store: Store, url: str, modes: tuple[str, str]) -> tuple[int, int]:
    store.import_test_set("topics", content())
    ids = []
    for mode in modes:
        store.add_config(mode, "http", {"preset": "elasticsearch", "url": f"{url}/{mode}"})
        settings = runner.RunSettings(concurrency=CONCURRENCY)
        ids.append(runner.run(store, mode, "topics", settings=settings).id)
    return ids[0], ids[1]


GATED = ("nDCG@10", "Latency", "Latency(p=95)", "ZeroResult")


def _compare(
    cli: Callable[..., Any], db_url: str, runs: tuple[int, int], gates: tuple[str, ...] = GATED
) -> tuple[int, dict]:
    named = [arg for name in gates for arg in ("--gate", name)]
    done = cli("compare", str(runs[0]), str(runs[1]), "--db", db_url, "--json",
               "--fail-on-regression", *named)  # fmt: skip
    return done.exit_code, json.loads(done.stdout)


def _compared(
    cli: Callable[..., Any], db_url: str, engine: str, modes: tuple[str, str]
) -> tuple[int, dict[str, Any], dict[str, dict[str, Any]]]:
    """Run both modes, compare them: (exit code, the JSON result, its rows by metric)."""
    with Store.open(db_url) as store:
        runs = _runs(store, engine, modes)
    code, result = _compare(cli, db_url, runs)
    return code, result, {row["metric"]: row for row in result["metrics"]}


def test_a_candidate_that_doubles_latency_fails_the_gate(
    db_url: str, engine: str, cli: Callable[..., Any]
) -> None:
    code, result, rows = _compared(cli, db_url, engine, ("base", "double"))
    assert code == 1 and result["verdict"] == "regression"
    for name in ("Latency", "Latency(p=95)"):
        assert rows[name]["verdict"] == "regression", {
            k: v
            for k, v in rows[name].items()
            if k
            in (
                "baseline",
                "candidate",
                "p_value",
                "p_corrected",
                "ci_low",
                "ci_high",
                "test",
                "max_relative_drop",
                "gated",
                "unjudged_mode",
            )
        }
        assert rows[name]["higher_is_better"] is False
        # time.sleep waits at least as long as asked: the candidate is BASE slower per query
        assert rows[name]["delta"] > 0.5 * BASE * 1000
    # decided on both versions timed together by compare, query by query (the same pairs)
    # 100 queries, timed in two rounds to 200 pairs
    assert rows["Latency(p=95)"]["test"] == "wilcoxon" and rows["Latency"]["timing_pairs"] == 200
    assert rows["Latency"]["timing_ratio"] > 1.5
    assert rows["Latency"]["max_relative_drop"] == 0.2  # the measure's default threshold
    assert rows["nDCG@10"]["verdict"] == "unchanged"  # same results: relevance did not move
    # without --gate, latency is shown but not gated: the relevance metrics decide
    with Store.open(db_url) as store:
        runs = (store.resolve_run("base@latest"), store.resolve_run("double@latest"))
    code, result = _compare(cli, db_url, runs, gates=())
    latency = {m["metric"]: m for m in result["metrics"]}["Latency"]
    assert (code, result["verdict"]) == (0, "unchanged")
    assert (latency["gated"], latency["reason"]) == (False, "not_gated")
    assert "not gated (an operational measure" in latency["why"]
    assert "Latency" in result["gating"]["not_gated"]
    gated = [g["metric"] for g in result["gating"]["gated"]]
    assert "nDCG@10" in gated and not [name for name in gated if "Latency" in name]


def test_timing_noise_of_ten_percent_does_not_alert(
    db_url: str, engine: str, cli: Callable[..., Any]
) -> None:
    code, _, rows = _compared(cli, db_url, engine, ("noisy", "base"))
    assert code == 0, rows
    assert rows["Latency"]["verdict"] != "regression"
    assert rows["Latency(p=95)"]["verdict"] != "regression"


def test_an_identical_latency_profile_never_alerts() -> None:
    from evalplat.comparison import compare_scores
    from evalplat.comparison.results import Gate

    scores = pd.DataFrame(
        {"query_id": [f"q{n}" for n in range(50)], "metric": "Latency(p=95)",
         "value": [float(10 + n % 7) for n in range(50)]}
    )  # fmt: skip
    row = compare_scores(scores, scores, gates=[Gate("Latency(p=95)")]).metrics[0]
    # two stored runs without paired timings: shown, no test, no verdict to alert on
    assert (row.verdict, row.p_value, row.delta, row.gated) == ("unchanged", None, 0.0, False)
    assert row.not_gated == "unpaired"


def test_answering_nothing_for_a_tenth_more_queries_fails_the_gate(
    db_url: str, engine: str, cli: Callable[..., Any]
) -> None:
    code, _, rows = _compared(cli, db_url, engine, ("base", "sparse"))
    assert code == 1
    assert rows["ZeroResult"]["baseline"] == 0.0
    assert rows["ZeroResult"]["candidate"] == pytest.approx(0.1)
    assert rows["ZeroResult"]["verdict"] == "regression"


def test_an_imported_run_has_no_latency_rather_than_zero(tmp_path: Any, store: Store) -> None:
    store.import_test_set("topics", content())
    run_file = tmp_path / "run.txt"
    run_file.write_text("".join(f"q{n} Q0 d{n} 1 2.0 x\n" for n in range(QUERIES)))
    info = runner.import_run(store, run_file, "imported", "topics")
    assert "Latency" not in info.means and "Latency(p=95)" not in info.means
    assert info.means["ZeroResult"] == 0.0
    scores = store.evaluation_scores(info.id)
    assert not scores["metric"].str.startswith("Latency").any()
