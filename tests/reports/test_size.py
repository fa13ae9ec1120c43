"""A synthetic 10,000-query comparison stays a readable page: ≤ 20 MiB, with only the first page
of queries in the markup, and a real browser loads it and sorts its 10,000 rows.

No wall-clock budget: the machine that runs the suite may be loaded. The browser check waits on
the page's own events (the status line filled in, the first row changing) with generous timeouts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evalplat.comparison.verdicts import CompareOptions, compare_scores
from evalplat.reports import comparison_html, run_html
from evalplat.reports.compared import comparison_page
from evalplat.reports.data import RunHeader, run_page

QUERIES = 10_000
DEPTH = 100
METRICS = ["nDCG@10", "P@10", "R@100", "AP", "RR@10", "Judged@10"]
LIMIT = 20 * 1024 * 1024
WAIT_MS = 120_000  # a ceiling for a stuck browser, not a speed budget


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


@pytest.fixture(scope="module")
def big_page(big: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> Path:
    page = comparison_page(
        big["result"],  # type: ignore[arg-type]
        baseline=_header(1),
        candidate=_header(2),
        query_text=big["texts"],  # type: ignore[arg-type]
        judgments=big["judgments"],  # type: ignore[arg-type]
        baseline_results=big["results_a"],  # type: ignore[arg-type]
        candidate_results=big["results_b"],  # type: ignore[arg-type]
    )
    assert len(page.table.rows) == QUERIES and len(page.table.first_page) == 50
    path = tmp_path_factory.mktemp("big") / "big.html"
    path.write_text(comparison_html(page), encoding="utf-8")
    return path


def test_ten_thousand_query_comparison_page_is_small(big_page: Path) -> None:
    html = big_page.read_text(encoding="utf-8")
    size = len(html.encode("utf-8"))
    assert size <= LIMIT, f"{size / 2**20:.1f} MiB"
    assert html.count("<tr>") < 600  # only the first page of queries is in the markup


def test_ten_thousand_query_comparison_page_loads_and_sorts_in_chromium(
    big_page: Path, browser: Any
) -> None:
    first_cell = "#query-table tbody tr td"
    page = browser.new_page()
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(big_page.as_uri(), timeout=WAIT_MS)
    page.wait_for_selector("#q-status:not(:empty)")
    before = page.text_content(first_cell)
    page.click("#query-table th[data-key='q'] button")
    page.wait_for_function(f"document.querySelector({first_cell!r}).textContent === 'q00000'")
    page.close()
    assert errors == []
    assert before != "q00000"  # the click did the sorting


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
