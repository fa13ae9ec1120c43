"""Fixed report data: a small comparison, run, history and site index built by hand (no
database), plus a hostile query text, so rendered pages are deterministic for golden files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from evalplat.comparison.changes import Changes, TestSetChange, diff_configs
from evalplat.comparison.leaderboard import Leaderboard
from evalplat.comparison.results import SegmentComparison
from evalplat.comparison.verdicts import (
    CompareOptions,
    ComparisonResult,
    MetricComparison,
    Movers,
    OverlapSummary,
    QueryMove,
)
from evalplat.reports.compared import ComparisonPage, comparison_page
from evalplat.reports.data import (
    HistoryPage,
    HistoryRun,
    RunHeader,
    RunPage,
    history_page,
    run_page,
)
from evalplat.reports.index_data import AlertRow, LastNight, NightEventRow, SiteEntry, SiteIndex
from evalplat.reports.online_page import OfflineOnlinePage

HOSTILE = "<script>alert(1)</script>"
GOLDEN = Path(__file__).resolve().parent / "golden"
PEOPLE = "people's grades"


def header(run_id: int, version: int, label: str | None, day: int) -> RunHeader:
    return RunHeader(
        id=run_id, config="docs-bm25", config_version=version, label=label, searcher="builtin",
        test_set="mini", test_set_version=1, status="complete", trigger="nightly",
        started_at=f"2026-05-{day:02d} 03:00 UTC", finished_at=f"2026-05-{day:02d} 03:02 UTC",
        queries_total=4, queries_failed=0,
    )  # fmt: skip


QUERY_TEXT = {"q1": "laminar flow", "q2": HOSTILE, "q3": "shock & boundary layers", "q4": ""}
# per-query nDCG@10 and P@5, baseline then candidate
SCORES = {
    "nDCG@10": {"q1": (0.8, 0.5), "q2": (0.4, 0.1), "q3": (0.3, 0.6), "q4": (0.0, 0.0)},
    "P@5": {"q1": (0.6, 0.4), "q2": (0.2, 0.2), "q3": (0.2, 0.4), "q4": (0.0, 0.0)},
}


def _metric(name: str, b: float, c: float, verdict: str, gated: bool) -> MetricComparison:
    return MetricComparison(
        metric=name, higher_is_better=True, baseline=b, candidate=c, delta=c - b,
        relative_delta=(c - b) / b, ci_low=-0.2, ci_high=0.05, test="randomization",
        p_value=0.0312, p_corrected=0.0624 if gated else None, effect_size=-0.5, wins=1, ties=1,
        losses=2, baseline_judged=0.75, candidate_judged=0.6, gated=gated, verdict=verdict,
        max_drop=0.01,
    )  # fmt: skip


def comparison_result() -> ComparisonResult:
    rows = [(metric, q, b, c, c - b) for metric, per in SCORES.items() for q, (b, c) in per.items()]
    per_query = pd.DataFrame(rows, columns=["metric", "query_id", "baseline", "candidate", "delta"])
    movers = Movers(
        "nDCG@10",
        worse=(QueryMove("q1", 0.8, 0.5, -0.3), QueryMove("q2", 0.4, 0.1, -0.3)),
        better=(QueryMove("q3", 0.3, 0.6, 0.3),),
    )
    return ComparisonResult(
        metrics=(
            _metric("nDCG@10", 0.375, 0.3, "regression", True),
            _metric("P@5", 0.25, 0.25, "unchanged", False),
        ),
        movers={"nDCG@10": movers},
        overlap=OverlapSummary(k=10, p=0.9, jaccard=0.5, rbo=0.61, kendall_tau=0.2, queries=4),
        options=CompareOptions(),
        gates=(),
        verdict="regression",
        queries=4,
        per_query=per_query,
        id=7,
        baseline_run_id=1,
        candidate_run_id=2,
        test_set="mini@1",
        created_at="2026-05-02T03:05:00+00:00",
        changes=Changes(
            diff_configs(
                {"tokenizer": "porter"},
                {"tokenizer": "unicode61", "note": HOSTILE},
                labels=("porter", "unicode61"),
            ),
            TestSetChange("mini", 1, 2, judgments_added=3, grades_changed=1),
        ),
    )


def segmented_result() -> ComparisonResult:
    """The comparison above with query weights and tags: two segments of nDCG@10, one gated."""
    from dataclasses import replace

    def row(segment: str, b: float, c: float, gated: bool, note: str | None) -> SegmentComparison:
        return SegmentComparison(
            metric="nDCG@10", segment=segment, queries=2, higher_is_better=True, baseline=b,
            candidate=c, delta=c - b, relative_delta=(c - b) / b, ci_low=-0.3, ci_high=0.1,
            test="randomization", p_value=0.25, p_corrected=0.5 if gated else 0.25, gated=gated,
            verdict="unchanged", note=note,
        )  # fmt: skip

    return replace(
        comparison_result(),
        weighted=True,
        segments=(
            row("head", 0.6, 0.3, True, None),
            row(HOSTILE, 0.15, 0.35, False, "2 queries, fewer than 20: not gated"),
        ),
        query_tags={"q1": ("head",), "q2": ("head", HOSTILE), "q3": (HOSTILE,)},
    )


def results(rankings: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(q, d, r + 1, 10.0 - r) for q, docs in rankings.items() for r, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score"])


# titles of some documents, as the store's test set documents give them
TITLES = {"d1": "Laminar flow over a flat plate", "d7": "shock waves and boundary layers …",
          HOSTILE: HOSTILE}  # fmt: skip

JUDGMENTS = pd.DataFrame(
    [("q1", "d1", 2), ("q1", "d2", 0), ("q1", "d3", 1), ("q2", HOSTILE, 1), ("q3", "d7", 1)],
    columns=["query_id", "doc_id", "grade"],
)
BASELINE_RESULTS = results({"q1": ["d1", "d2", "d3"], "q2": [HOSTILE, "d5"], "q3": ["d6"]})
CANDIDATE_RESULTS = results({"q1": ["d2", "d1", "d9"], "q2": ["d5", "d8"], "q3": ["d7", "d6"]})


@pytest.fixture
def make_comparison_page() -> Callable[..., ComparisonPage]:
    def build(**changes: object) -> ComparisonPage:
        arguments: dict[str, object] = {
            "baseline": header(1, 1, "porter", 1),
            "candidate": header(2, 2, "unicode61", 2),
            "query_text": QUERY_TEXT,
            "judgments": JUDGMENTS,
            "baseline_results": BASELINE_RESULTS,
            "candidate_results": CANDIDATE_RESULTS,
            "k": 3,
            "titles": TITLES,
        }
        result = changes.pop("result", None) or comparison_result()
        arguments.update(changes)
        return comparison_page(result, **arguments)  # type: ignore[arg-type]

    return build


@pytest.fixture
def fixed_run_page() -> RunPage:
    scores = pd.DataFrame(
        [(q, metric, b) for metric, per in SCORES.items() for q, (b, _) in per.items()],
        columns=["query_id", "metric", "value"],
    )
    outcomes = pd.DataFrame(
        [
            ("q1", "ok", 12.5, 1, 3, None),
            ("q2", "ok", 30.0, 1, 2, None),
            ("q3", "ok", 8.25, 2, 1, None),
            ("q4", "failed", None, 3, 0, "HTTP 503 from <backend>"),
        ],
        columns=["query_id", "status", "latency_ms", "attempts", "results_count", "error"],
    )
    return run_page(
        header(1, 1, "porter", 1),
        scores=scores,
        outcomes=outcomes,
        query_text=QUERY_TEXT,
        means={"nDCG@10": 0.375, "P@5": 0.25},
    )


@pytest.fixture
def fixed_history_page() -> HistoryPage:
    runs = [
        HistoryRun(
            header(1, 1, "porter", 1),
            {"nDCG@10": 0.375, "P@5": 0.25},
            True,
            None,
            None,
            1,
            f"mini@1, {PEOPLE}",
        ),
        HistoryRun(
            header(3, 1, "porter", 3),
            {"nDCG@10": 0.37, "P@5": 0.25},
            False,
            "unchanged",
            None,
            2,
            f"mini@2, {PEOPLE}",
        ),
        HistoryRun(
            header(2, 2, HOSTILE, 2),
            {"nDCG@10": 0.3, "P@5": 0.25},
            False,
            "regression",
            None,
            1,
            f"mini@1, {PEOPLE}",
        ),
    ]
    return history_page("docs-bm25", "mini", runs, ["nDCG@10", "P@5"])


@pytest.fixture
def fixed_index() -> SiteIndex:
    entry = SiteEntry(
        latest=header(2, 2, "unicode61", 2),
        primary="nDCG@10",
        primary_value=0.3,
        trend=(0.375, 0.37, 0.3),
        verdict="regression",
        run_link="runs/run-2.html",
        history_link="history/docs-bm25--mini.html",
        comparison_link="compare/compare-7.html",
        baseline_id=1,
        scored_on=f"mini@1, {PEOPLE}",
        comparison_id=7,
        verdict_metrics=("AP",),  # AP regressed; the row's figure is nDCG@10
    )
    alert = AlertRow(7, "docs-bm25", "mini", "AP", "open", "2026-05-02 03:05 UTC",
                     "0.3750 → 0.3000, Δ -0.0750, p = 0.0624", "regression", 7, 2,
                     "compare/compare-7.html")  # fmt: skip
    resolved = AlertRow(5, "docs-bm25", "mini", "nDCG@10", "resolved", "2026-05-01 03:04 UTC",
                        "0.3750 → 0.3100, Δ -0.0650, p = 0.0100", "regression", 6, 1,
                        "compare/compare-6.html")  # fmt: skip
    retired = AlertRow(3, HOSTILE, "mini", "run failed", "retired", "2026-04-30 03:01 UTC",
                       "connection refused", "operational")  # fmt: skip
    night = LastNight("2026-05-02 03:00 UTC", "2026-05-02 03:09 UTC", (
        NightEventRow("opened", "2026-05-02 03:05 UTC", alert),
        NightEventRow("resolved", "2026-05-02 03:05 UTC", resolved),
        NightEventRow("retired", "2026-05-02 03:08 UTC", retired,
                      f"config {HOSTILE} is no longer in the project file"),
    ))  # fmt: skip
    return SiteIndex((entry,), (alert,), "2026-05-02 03:00 UTC", last_night=night)


@pytest.fixture
def fixed_online_page() -> OfflineOnlinePage:
    """Five versions on one day (b lower than a offline but higher online: one of the ten A/B
    pairs disagrees, tau = 0.8 with an exact p of 10/120), the project's two pairs only (AP is
    stored and not chosen), an online:MRR of one version only (too few versions), 60 queries
    whose texts include a script tag and quotes, searched in upper case."""
    from evalplat.comparison.agreement import agreement
    from evalplat.comparison.query_clicks import query_clicks
    from evalplat.reports.online_page import offline_online_page
    from evalplat.store import OnlineAgreement

    quoted = "say \"hi\" & 'bye'"
    versions = ["a@1", "b@1", "c@1", "d@1", "e@1"]
    offline = pd.DataFrame(
        [(v, m, x) for v, x in zip(versions, (0.5, 0.4, 0.2, 0.6, 0.3), strict=True)
         for m in ("nDCG@10", "AP")], columns=["version", "metric", "value"],
    )  # fmt: skip
    online = pd.DataFrame(
        [(v, "2026-03-01", "online:CTR", x, 100)
         for v, x in zip(versions, (0.3, 0.35, 0.1, 0.4, 0.2), strict=True)]
        + [("a@1", "2026-03-01", "online:MRR", 0.2, 100)],
        columns=["version", "day", "kpi", "value", "sessions"],
    )  # fmt: skip
    pairs = [("nDCG@10", "online:CTR"), ("nDCG@10", "online:MRR")]
    rows = agreement(offline, online, pairs=pairs, samples=100)
    outcome = OnlineAgreement(test_set=HOSTILE, since=None, versions=versions, rows=rows)
    ids = [f"q{n}" for n in range(1, 61)]
    texts = {q: HOSTILE if q == "q2" else quoted if q == "q3" else f"topic {q}" for q in ids}
    queries = pd.DataFrame({"query_id": ids, "text": [texts[q] for q in ids]})
    searches = pd.DataFrame(
        [(v, texts[q].upper(), n % 5 + 1, n % 3) for n, q in enumerate(ids) for v in versions]
        + [("c@1", "elsewhere", 4, 1)],
        columns=["version", "user_query", "searches", "clicked"],
    )
    per_query = pd.DataFrame(
        [(v, q, (n % 7) / 7) for n, q in enumerate(ids) for v in versions],
        columns=["version", "query_id", "value"],
    )
    clicks = query_clicks("nDCG@10", queries, searches, per_query, versions)
    return offline_online_page(outcome, offline, online, clicks, kpi="online:CTR")


@pytest.fixture
def fixed_leaderboard() -> Leaderboard:
    """Five runs over 40 queries on nDCG@10 and P@5: two clearly better than the baseline, one
    the same, one worse; one run's label is a script tag. 200 HSD draws keep it quick."""
    import numpy as np

    from evalplat.comparison.leaderboard import LeaderboardOptions, leaderboard

    ids = [f"q{n}" for n in range(1, 41)]
    base = np.linspace(0.1, 0.7, 40)
    lifts = (0.0, 0.0, 0.25, 0.3, -0.2)
    wobble = np.tile([0.03, -0.03], 20)
    frames = [
        pd.DataFrame(
            [(q, metric, float(np.clip(v + lift + wobble[i] * (j % 2), 0, 1)))
             for metric in ("nDCG@10", "P@5") for i, (q, v) in enumerate(zip(ids, base,
                                                                              strict=True))],
            columns=["query_id", "metric", "value"],
        )
        for j, lift in enumerate(lifts)
    ]  # fmt: skip
    names = ["docs-bm25@1", "docs-bm25@2", "hybrid@1", f"dense@1 ({HOSTILE})", "stemless@1"]
    return leaderboard(names, frames, ["nDCG@10", "P@5"], options=LeaderboardOptions(draws=200),
                       run_ids=[1, 2, 3, 4, 5], test_set="mini@1")  # fmt: skip
