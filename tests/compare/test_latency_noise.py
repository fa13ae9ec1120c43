"""A latency gate does not cry wolf on a busy machine: two runs of one unchanged ``python``
searcher (a 10 ms sleep per query) while processes spin on every core do not fail
``compare --fail-on-regression``, and a real slowdown to 60 ms under the same load still does.
The gate needs a rise of 35 ms as well as 20 % (scripts/latency_noise.py measured the noise)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.comparison import compare_scores
from evalplat.running import runner
from evalplat.store import Store
from evalplat.testsets.content import TestSetContent

QUERIES = 200
ENGINE = """
import time


def search(query, depth, delay_ms=10.0, **params):
    time.sleep(delay_ms / 1000.0)
    topic = query.split()[-1]
    return [("d" + topic, 2.0), ("n" + topic, 1.0)]
"""


def content() -> TestSetContent:
    ids = [f"q{n}" for n in range(QUERIES)]
    return TestSetContent(
        queries=pd.DataFrame({"query_id": ids, "text": [f"topic {n}" for n in range(QUERIES)],
                              "weight": [float("nan")] * QUERIES, "tags": [None] * QUERIES}),
        judgments=pd.DataFrame({"query_id": ids, "doc_id": [f"d{n}" for n in range(QUERIES)],
                                "grade": [1] * QUERIES, "source": [None] * QUERIES}),
    )  # fmt: skip


@pytest.fixture
def busy() -> Iterator[None]:
    """One process spinning on each of the machine's two cores while the test runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for process in spinners:
            process.kill()
            process.wait()


def _run(db_url: str, folder: Path, name: str, delay_ms: float) -> int:
    with Store.open(db_url) as store:
        if "topics" not in {t.name for t in store.list_test_sets()}:
            store.import_test_set("topics", content())
        store.add_config(name, "python", {"function": "sleepy_engine:search",
                                          "path": str(folder), "delay_ms": delay_ms})  # fmt: skip
        settings = runner.RunSettings(concurrency=2)
        return runner.run(store, name, "topics", settings=settings).id


def _compare(cli: Callable[..., Any], db_url: str, a: int, b: int) -> tuple[int, dict[str, Any]]:
    done = cli("compare", str(a), str(b), "--fail-on-regression", "--json", "--db", db_url,
               "--gate", "Latency", "--gate", "Latency(p=95)")  # fmt: skip
    rows = {row["metric"]: row for row in json.loads(done.stdout)["metrics"]}
    return done.exit_code, rows


def test_an_unchanged_searcher_on_a_busy_machine_passes_and_a_slowdown_fails(
    db_url: str, tmp_path: Path, cli: Callable[..., Any], busy: None
) -> None:
    (tmp_path / "sleepy_engine.py").write_text(ENGINE, encoding="utf-8")
    first = _run(db_url, tmp_path, "steady", 10.0)
    second = _run(db_url, tmp_path, "steady", 10.0)
    code, rows = _compare(cli, db_url, first, second)
    p95 = rows["Latency(p=95)"]
    assert code == 0, p95
    assert p95["verdict"] != "regression" and rows["Latency"]["verdict"] != "regression"
    assert (p95["max_drop"], p95["max_relative_drop"]) == (35.0, 0.2)
    assert p95["baseline"] >= 10.0  # the sleep is measured: at least what was asked
    # latency alone: no metric reads judgments, nothing to bound under the unjudged guard
    alone = cli("compare", str(first), str(second), "--metric", "Latency(p=95)",
                "--fail-on-regression", "--json", "--db", db_url)  # fmt: skip
    assert alone.exit_code == 0, alone.stderr
    assert [m["metric"] for m in json.loads(alone.stdout)["metrics"]] == ["Latency(p=95)"]
    slow = _run(db_url, tmp_path, "slow", 60.0)
    code, rows = _compare(cli, db_url, second, slow)
    # the mean is the steadier figure under load: 50 ms more on every query
    assert code == 1, rows["Latency"]
    assert rows["Latency"]["verdict"] == "regression" and rows["Latency"]["delta"] > 35.0
    assert rows["Latency(p=95)"]["delta"] > 0.0


def test_a_relative_rise_alone_does_not_fail_a_latency_gate() -> None:
    """12 ms to 20 ms on every query is a 67 % rise but 8 ms: under the default gate it is not a
    regression; a gate that sets ``max_drop = 0`` asks for the relative rise alone."""
    from evalplat.comparison.results import Gate

    def scores(ms: float) -> pd.DataFrame:
        values = [ms + (n % 5) * 0.1 for n in range(60)]
        ids = [f"q{n}" for n in range(60)]
        return pd.DataFrame({"query_id": ids, "metric": "Latency(p=95)", "value": values})

    [default] = compare_scores(scores(12.0), scores(20.0)).metrics
    assert default.verdict == "unchanged" and default.delta == pytest.approx(8.0)
    gate = Gate("Latency(p=95)", max_drop=0.0)
    [relative] = compare_scores(scores(12.0), scores(20.0), gates=[gate]).metrics
    assert (relative.verdict, relative.max_relative_drop) == ("regression", 0.2)
    [slower] = compare_scores(scores(12.0), scores(52.0)).metrics
    assert slower.verdict == "regression"
