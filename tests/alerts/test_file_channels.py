"""The JUnit XML and JSON file channels."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from evalplat.alerts import build_channel, deliver

from .messages import regression


def test_junit_file_has_a_failure_per_opened_alert_and_passes_resolutions(tmp_path: Path) -> None:
    path = tmp_path / "out" / "alerts.xml"
    channel = build_channel({"type": "junit", "path": str(path)})
    assert deliver(channel, regression("opened")).ok
    assert deliver(channel, regression("resolved")).ok
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    opened, resolved = suite.findall("testcase")
    assert opened.get("classname") == "evalplat.docs-bm25.cranfield"
    assert opened.get("name") == "nDCG@10"
    failure = opened.find("failure")
    assert failure is not None and failure.get("type") == "regression"
    assert "0.4120 → 0.3870" in (failure.text or "")
    assert resolved.find("failure") is None
    assert "Resolved:" in (resolved.findtext("system-out") or "")


def test_a_new_junit_channel_starts_the_file_afresh(tmp_path: Path) -> None:
    path = tmp_path / "alerts.xml"
    for _ in range(2):  # two nightly invocations
        assert deliver(build_channel({"type": "junit", "path": str(path)}), regression()).ok
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "1"


def test_json_channel_appends_one_line_per_alert_across_channel_objects(tmp_path: Path) -> None:
    path = tmp_path / "alerts.jsonl"
    for event in ("opened", "resolved"):
        assert deliver(build_channel({"type": "json", "path": str(path)}), regression(event)).ok
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["event"] for r in records] == ["opened", "resolved"]
    assert records[0]["title"] == "Regression: nDCG@10 of docs-bm25 on cranfield"
    assert records[0]["worst_queries"][1] == {
        "query_id": "q7",
        "text": "heat transfer",
        "baseline": 0.65,
        "candidate": 0.31,
        "delta": records[0]["worst_queries"][1]["candidate"] - 0.65,
    }
    assert records[1]["sent_at"] >= records[0]["sent_at"]


def test_json_channel_writes_an_idempotency_key_once(tmp_path: Path) -> None:
    """A notice sent again (same keys) adds only the events the file does not hold yet; lines
    that are not evalplat's (cut short, another tool's) are kept and hold no key."""
    from evalplat.alerts.notice import Notice

    path = tmp_path / "alerts.jsonl"
    path.write_text('{"idempotency_key": "k1", "event": "opened"\nnot json\n[1]\n')
    opened, resolved = regression("opened"), regression("resolved")
    for keys in (("k1", "k2"), ("k1", "k2"), ("k2", "k3")):
        notice = Notice((opened, resolved), keys)
        assert deliver(build_channel({"type": "json", "path": str(path)}), notice).ok
    lines = path.read_text().splitlines()
    assert lines[:3] == ['{"idempotency_key": "k1", "event": "opened"', "not json", "[1]"]
    records = [json.loads(line) for line in lines[3:]]
    assert [(r["idempotency_key"], r["event"]) for r in records] == [
        ("k1", "opened"),  # the first line was cut short: it holds no key
        ("k2", "resolved"),
        ("k3", "resolved"),
    ]
    keyless = Notice((opened,))  # a message without keys is always written
    channel = build_channel({"type": "json", "path": str(path)})
    assert deliver(channel, keyless).ok and deliver(channel, keyless).ok
    assert len(path.read_text().splitlines()) == 8


def test_json_channel_in_write_mode_sends_a_key_once(tmp_path: Path) -> None:
    from evalplat.alerts.notice import Notice

    path = tmp_path / "alerts.json"
    channel = build_channel({"type": "json", "path": str(path), "mode": "write"})
    for keys in (("k1", "k2"), ("k2", "k3")):
        assert deliver(channel, Notice((regression(), regression("resolved")), keys)).ok
    data = json.loads(path.read_text())
    assert [d["idempotency_key"] for d in data] == ["k1", "k2", "k3"]


def test_json_channel_in_write_mode_keeps_this_runs_alerts_as_an_array(tmp_path: Path) -> None:
    path = tmp_path / "alerts.json"
    path.write_text("[]")
    channel = build_channel({"type": "json", "path": str(path), "mode": "write"})
    for event in ("opened", "opened"):
        assert deliver(channel, regression(event)).ok
    data = json.loads(path.read_text())
    assert [d["metric"] for d in data] == ["nDCG@10", "nDCG@10"]


def test_unwritable_path_is_a_recorded_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    channel = build_channel({"type": "json", "path": str(blocker / "alerts.jsonl")})
    result = deliver(channel, regression())
    assert (result.status, result.attempts) == ("failed", 1)
    assert result.error is not None and result.error.startswith(
        ("FileExistsError", "NotADirectoryError")
    )


def test_junit_file_drops_characters_xml_forbids(tmp_path: Path) -> None:
    """A query text may hold control characters (free text); XML 1.0 cannot carry them even
    escaped, so they are dropped and the file stays well-formed."""
    import dataclasses

    from evalplat.alerts import QueryMove

    message = dataclasses.replace(
        regression(),
        config="docs\x01bm25",
        worst_queries=(QueryMove("q1", "bell\x07 form\x0c feed \x1b[31m\ufffe", 0.9, 0.1),),
    )
    path = tmp_path / "alerts.xml"
    assert deliver(build_channel({"type": "junit", "path": str(path)}), message).ok
    root = ET.parse(path).getroot()  # raises on a forbidden character
    case = root.find("testsuite/testcase")
    assert case is not None and case.get("classname") == "evalplat.docsbm25.cranfield"
    assert "bell form feed [31m" in (case.findtext("failure") or "")
