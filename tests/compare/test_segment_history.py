"""History per segment: a metric over the queries carrying one tag, run by run."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalplat.comparison.segment_history import segment_values
from evalplat.metrics.names import parse
from evalplat.store import Store

from .test_segments_store import runs


def _queries() -> pd.DataFrame:
    # run 1: q1 (weight 3, head), q2 (weight 1, head + tail), q3 (no weight, tail), q4 (no tags)
    return pd.DataFrame(
        {
            "run_id": [1, 1, 1, 1],
            "query_id": ["q1", "q2", "q3", "q4"],
            "weight": [3.0, 1.0, None, 2.0],
            "tags": [["head"], ["head", "tail"], ["tail"], None],
        }
    )


def _scores(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"run_id": 1, "query_id": ["q1", "q2", "q3", "q4"], "value": values})


def test_a_segment_mean_is_weighted_like_a_comparison() -> None:
    frame = segment_values(_scores([0.8, 0.4, 0.1, 0.9]), _queries(), parse("nDCG@10"))
    rows = {r["segment"]: r for r in frame.to_dict("records")}
    # head: (3 * 0.8 + 1 * 0.4) / 4 = 0.7; tail: (1 * 0.4 + 1 * 0.1) / 2 = 0.25 (q3 counts 1)
    assert rows["head"]["value"] == pytest.approx(0.7)
    assert rows["tail"]["value"] == pytest.approx(0.25)
    assert (rows["head"]["queries"], rows["tail"]["queries"]) == (2, 2)
    assert list(frame["segment"]) == ["head", "tail"]  # q4 has no tag: in no segment


def test_a_geometric_mean_measure_is_a_weighted_geometric_mean_per_segment() -> None:
    frame = segment_values(_scores([0.8, 0.2, 0.0, 0.9]), _queries(), parse("gm_map"))
    rows = dict(zip(frame["segment"], frame["value"], strict=True))
    # head: exp((3 ln 0.8 + ln 0.2) / 4); tail: 0 is floored at 1e-5, as trec_eval floors it
    assert rows["head"] == pytest.approx(math.exp((3 * math.log(0.8) + math.log(0.2)) / 4))
    assert rows["tail"] == pytest.approx(math.sqrt(0.2 * 1e-5))


def test_sums_and_percentiles_follow_the_measure_and_unknown_values_are_left_out() -> None:
    sums = segment_values(_scores([10, 20, 30, 40]), _queries(), parse("NumRet"))
    assert dict(zip(sums["segment"], sums["value"], strict=True)) == {"head": 30, "tail": 50}
    latency = _scores([120.0, 80.0, math.nan, 5.0])
    p95 = segment_values(latency, _queries(), parse("Latency(p=95)"))
    # head: 80, 120 -> rank ceil(0.95 * 2) = 2 -> 120; tail: q3 failed (unknown), only 80 left
    assert dict(zip(p95["segment"], p95["value"], strict=True)) == {"head": 120.0, "tail": 80.0}
    assert dict(zip(p95["segment"], p95["queries"], strict=True)) == {"head": 2, "tail": 1}


def test_history_per_segment_shows_the_tail_regressing_while_the_head_is_flat(
    store: Store,
) -> None:
    first, second, _ = runs(store)  # the candidate's 25 tail queries lose every relevant doc
    frame, known = store.history_segments(store.history("engine"), "P@5")
    assert known == ["head", "rare", "tail"]
    values = {(r["run_id"], r["segment"]): (r["value"], r["queries"]) for r in
              frame.to_dict("records")}  # fmt: skip
    # four relevant documents in the top 5 of every query: P@5 = 0.8; none in the tail after
    assert values[(first, "head")] == pytest.approx((0.8, 35))
    assert values[(second, "head")] == pytest.approx((0.8, 35))
    assert values[(first, "tail")] == pytest.approx((0.8, 25))
    assert values[(second, "tail")] == pytest.approx((0.0, 25))
    assert values[(second, "rare")] == pytest.approx((0.8, 4))


def test_history_command_prints_and_exports_segment_rows(
    db_url: str, cli: Callable[..., Any]
) -> None:
    with Store.open(db_url) as store:
        first, second, _ = runs(store)
    shown = cli("history", "engine", "-m", "P@5", "--segment", "tail", "--segment", "head",
                "--json", "--db", db_url)  # fmt: skip
    assert shown.exit_code == 0, shown.stderr
    points = json.loads(shown.stdout)
    assert [p["run_id"] for p in points] == [first, second]
    assert points[1]["segments"] == [
        {"segment": "head", "metric": "P@5", "value": pytest.approx(0.8), "queries": 35},
        {"segment": "tail", "metric": "P@5", "value": pytest.approx(0.0), "queries": 25},
    ]
    table = cli("history", "engine", "-m", "P@5", "--segment", "tail", "--db", db_url)
    assert table.exit_code == 0 and "[tail]" in table.stdout
    row = next(line for line in table.stdout.splitlines() if line.startswith(f"│ {second} "))
    assert row.split("│")[-4].strip() == "0.0000"  # the tail column of the candidate
    plain = cli("history", "engine", "--json", "--db", db_url)
    assert "segments" not in json.loads(plain.stdout)[0]


def test_an_unknown_segment_is_exit_2_naming_the_option_and_the_known_tags(
    db_url: str, cli: Callable[..., Any]
) -> None:
    with Store.open(db_url) as store:
        runs(store)
    result = cli("history", "engine", "--segment", "tial", "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --segment 'tial': no query of these runs carries this tag "
        "(known tags: head, rare, tail)"
    ]


def test_the_history_page_draws_a_line_per_segment(store: Store, tmp_path: Path) -> None:
    from evalplat.reports.gather import gather_history
    from evalplat.reports.render import render_history

    first, second, _ = runs(store)
    (page,) = gather_history(store, "engine")
    assert page.segment_metric == page.metrics[0] == "AP"  # the first metric, alphabetically
    assert sorted(page.segments) == ["head", "rare", "tail"]
    # AP: 4 of the 6 relevant documents at ranks 1-4 = 4/6; the tail retrieves none after
    assert page.segments["head"] == pytest.approx({first: 4 / 6, second: 4 / 6})
    assert page.segments["tail"] == pytest.approx({first: 4 / 6, second: 0.0})
    html = render_history(store, "engine", tmp_path / "history.html").read_text()
    assert '<h2 id="by-segment">AP by segment</h2>' in html
    assert html.count('aria-label="AP over time, segment ') == 3
