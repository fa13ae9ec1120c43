"""One format per kind of number: scores, counts, durations and p-values read the same in the
console, JUnit XML, alert messages and pages (``evalplat.metrics.numbers``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from evalplat.alerts.message import AlertMessage
from evalplat.comparison import compare_scores
from evalplat.metrics.numbers import counted, delta_text, kind_of, p_text, value_text
from evalplat.reports.render import fmt_pvalue, fmt_value


@pytest.mark.parametrize(
    ("p", "text"),
    [(9.999000099990002e-05, "1.0e-04"), (0.0085, "0.0085"), (0.034, "0.034"), (0.21, "0.21"),
     (1.0, "1.0"), (0.00099, "9.9e-04"), (0.5, "0.50")],
)  # fmt: skip
def test_p_values_have_two_significant_digits(p: float, text: str) -> None:
    assert p_text(p) == text
    assert fmt_pvalue(p) == text  # the pages use the same rule
    alert = AlertMessage("opened", "c", "t", "nDCG@10", p_value=p, test="randomization")
    assert dict(alert.facts())["p-value"] == f"{text} (randomization)"  # alerts too


@pytest.mark.parametrize(
    ("metric", "value", "shown", "change"),
    [("NumRet", 20.0, "20", "-3"), ("NumRet", 22500.0, "22500", "-3"),
     ("Latency(p=95)", 182.44, "182.4 ms", "-3.0 ms"), ("nDCG@10", 0.43121, "0.4312", "-3.0000")],
)  # fmt: skip
def test_each_kind_of_figure_has_one_format(
    metric: str, value: float, shown: str, change: str
) -> None:
    assert value_text(value, metric) == shown == fmt_value(value, metric)
    assert delta_text(-3.0, metric) == change
    assert kind_of("not a metric(") == "score"


def test_junit_prints_p_values_and_counts_in_their_formats(tmp_path: Path) -> None:
    from evalplat.cli.compare_output import write_junit

    ids = [f"q{n:02d}" for n in range(40)]
    frame = pd.DataFrame(
        [(q, "nDCG@10", 0.9) for q in ids] + [(q, "NumRet", 10.0) for q in ids],
        columns=["query_id", "metric", "value"],
    )
    worse = frame.assign(value=[0.2] * 40 + [9.0] * 40)
    result = compare_scores(frame, worse, options=None)
    path = tmp_path / "gate.xml"
    write_junit(result, path)
    [case] = ET.parse(path).getroot().iter("testcase")
    failure = case.find("failure")
    assert failure is not None
    message = failure.get("message") or ""
    assert "p=1.0e-04" in message and "e-05" not in message, message
    assert "0.9000 -> 0.2000 (delta -0.7000" in message
    counts = result.metric("NumRet")
    assert (value_text(counts.baseline, "NumRet"), value_text(counts.candidate, "NumRet")) == (
        "400",
        "360",
    )


def test_a_count_agrees_with_its_noun() -> None:
    assert [counted(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert counted(1, "query") == "1 query" and counted(3, "query") == "3 queries"
    assert counted(2, "search") == "2 searches" and counted(2, "day") == "2 days"
    assert counted(2, "regression opened", "regressions opened") == "2 regressions opened"
