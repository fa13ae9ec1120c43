"""A target alert reads as one in every channel: title, the target line, JUnit failure type."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from evalplat.alerts.junit import render
from evalplat.alerts.message import AlertMessage
from evalplat.alerts.notice import Notice

LINE = "nDCG@10>=0.85: 0.6200 [0.5800, 0.6600] missed"


def _message(event: str, kind: str = "target") -> AlertMessage:
    return AlertMessage(event=event, config="docs-bm25", test_set="cranfield", metric="nDCG@10",
                        candidate=0.62, candidate_run=7, kind=kind, target=LINE)  # fmt: skip


def test_a_missed_target_says_so_with_the_figure_and_its_interval() -> None:
    opened = _message("opened")
    assert opened.title() == "Target missed: nDCG@10 of docs-bm25 on cranfield"
    assert ("Target", LINE) in opened.facts()
    assert _message("resolved").title() == "Target met: nDCG@10 of docs-bm25 on cranfield"
    assert _message("opened", "drift").title() == "Drift: nDCG@10 of docs-bm25 on cranfield"
    assert AlertMessage.from_dict(opened.to_dict()) == opened


def test_a_digest_counts_target_and_drift_events_in_words() -> None:
    notice = Notice((_message("opened"), _message("opened", "drift")), ("a", "b"))
    assert notice.title() == "evalplat: 1 target missed, 1 drift"


def test_junit_marks_an_opened_target_alert_as_a_failure_of_type_target() -> None:
    root = ET.fromstring(render([_message("opened"), _message("resolved")], "nightly"))
    failures = root.findall(".//failure")
    assert [f.get("type") for f in failures] == ["target"]
    assert root.get("failures") == "1"
