"""A synthetic 10,000-query comparison stays a readable page: ≤ 20 MiB, rendered quickly, and
(when chromium is there) loaded and sorted by a real browser within seconds."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalplat.comparison import CompareOptions, compare_scores
from evalplat.reports import comparison_html, run_html
from evalplat.reports.compared import comparison_page
from evalplat.reports.data import RunHeader, run_page

QUERIES = 10_000
DEPTH = 100
METRICS = ["nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10"]
LIMIT = 20 * 1024 * 1024


def _header(run_id: int) -> RunHeader:
    return RunHeader(run_id, "big", run_id, None, "builtin", "synthetic", 1, "complete", "nightly",
                     "2026-05-01 03:00 UTC", "2026-05-01 03:30 UTC", QUERIES, 0)  # fmt: skip


@pytest.fixture(scope="module")
def big() -> dict[str, object]:
    rng = np.random.default_rng(7)
    ids = [f"q{i:05d}" for i in range(QUERIES)]
    texts = {q: f"synthetic query number {i} about <things> & more" for i, q in enumerate(ids)}

    def scores(shift: float) -> pd.DataFrame:
        frames = [
            pd.DataFrame({"query_id": ids, "metric": m,
                          "value": np.clip(rng.random(QUERIES) + shift, 0, 1)})
            for m in METRICS
        ]  # fmt: skip
        return pd.concat(frames, ignore_index=True)

    def results() -> pd.DataFrame:
        docs = rng.integers(0, 50_000, size=(QUERIES, DEPTH))
        return pd.DataFrame({
            "query_id": np.repeat(ids, DEPTH), "doc_id": [f"d{d}" for d in docs.ravel()],
            "rank": np.tile(np.arange(1, DEPTH + 1), QUERIES), "score": 1.0,
        })  # fmt: skip

    baseline, candidate = scores(0.0), scores(-0.02)
    options = CompareOptions(permutations=200, bootstrap=200)
    result = compare_scores(baseline, candidate, METRICS, options=options)
    judgments = pd.DataFrame({"query_id": ids, "doc_id": "d1", "grade": 1})
    return {
        "result": result, "texts": texts, "judgments": judgments, "baseline": baseline,
        "results_a": results(), "results_b": results(),
    }  # fmt: skip


def test_ten_thousand_query_comparison_page_is_small_and_fast(
    big: dict[str, object], tmp_path: Path
) -> None:
    started = time.perf_counter()
    page = comparison_page(
        big["result"],  # type: ignore[arg-type]
        baseline=_header(1),
        candidate=_header(2),
        query_text=big["texts"],  # type: ignore[arg-type]
        judgments=big["judgments"],  # type: ignore[arg-type]
        baseline_results=big["results_a"],  # type: ignore[arg-type]
        candidate_results=big["results_b"],  # type: ignore[arg-type]
    )
    html = comparison_html(page)
    elapsed = time.perf_counter() - started
    size = len(html.encode("utf-8"))
    assert size <= LIMIT, f"{size / 2**20:.1f} MiB"
    assert elapsed < 20, f"rendering took {elapsed:.1f} s"
    assert len(page.table.rows) == QUERIES and len(page.table.first_page) == 50
    assert html.count("<tr>") < 600  # only the first page of queries is in the markup
    (tmp_path / "big.html").write_text(html, encoding="utf-8")
    if os.path.exists("/usr/bin/chromium"):
        _open_and_sort(tmp_path / "big.html")


def _open_and_sort(path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    with sync_api.sync_playwright() as driver:  # fmt: skip
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        started = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector("#q-status:not(:empty)")
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        page.click("#query-table th[data-key='q'] button")
        first = page.text_content("#query-table tbody tr td")
        sorted_in = time.perf_counter() - started
        browser.close()
    assert errors == []
    assert first == "q00000"
    assert loaded < 15 and sorted_in < 5, (loaded, sorted_in)


def test_ten_thousand_query_run_page_is_small(big: dict[str, object]) -> None:
    ids = list(big["texts"])  # type: ignore[call-overload]
    outcomes = pd.DataFrame({"query_id": ids, "status": "ok", "latency_ms": 12.0, "attempts": 1,
                             "results_count": DEPTH, "error": None})  # fmt: skip
    page = run_page(
        _header(1),
        scores=big["baseline"],  # type: ignore[arg-type]
        outcomes=outcomes,
        query_text=big["texts"],  # type: ignore[arg-type]
        means=dict.fromkeys(METRICS, 0.5),
    )
    assert len(run_html(page).encode("utf-8")) <= LIMIT
