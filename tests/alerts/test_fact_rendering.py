"""Every channel shows an alert's operational facts on its "Run facts" line, and the JSON
channels carry them as ``facts`` objects that read back unchanged."""

from __future__ import annotations

import json
from dataclasses import replace

from evalplat.alerts import AlertMessage, json_file, slack, teams, webhook
from evalplat.alerts.email_html import render_html
from evalplat.alerts.notice import Notice

from .messages import regression

FACT = {
    "kind": "zero_results",
    "sentence": "25 of 30 queries returned nothing (run 9)",
    "figures": {"empty": 25, "answered": 30, "share": 25 / 30, "queries": ["q10", "q11"]},
    "run": 9,
    "side": "candidate",
    "new": True,
    "line": "25 of 30 queries returned nothing (run 9); new in the candidate",
}


def with_fact() -> AlertMessage:
    return replace(regression(), run_facts=(FACT,))


def test_the_facts_line_and_its_place_among_the_facts() -> None:
    message = with_fact()
    labels = [label for label, _ in message.facts()]
    assert labels.index("Delta") < labels.index("Run facts") < labels.index("p-value")
    assert dict(message.facts())["Run facts"] == FACT["line"]
    assert "Run facts" in message.text() and FACT["line"] in message.text()
    assert "Run facts" not in dict(regression().facts())  # a message without facts has no line
    # a fact stored without its line shows its sentence
    bare = replace(regression(), run_facts=({k: v for k, v in FACT.items() if k != "line"},))
    assert dict(bare.facts())["Run facts"] == FACT["sentence"]


def test_the_facts_round_trip_through_the_details() -> None:
    data = with_fact().to_dict()
    assert data["facts"] == [FACT] and "run_facts" not in data
    assert AlertMessage.from_dict(json.loads(json.dumps(data))) == with_fact()
    assert AlertMessage.from_dict({**regression().to_dict(), "facts": None}) == regression()


def test_every_channel_renders_the_facts() -> None:
    notice = Notice.of(with_fact())
    assert webhook.payload(notice)["alerts"][0]["facts"] == [FACT]
    assert FACT["line"] in webhook.payload(notice)["text"]
    assert json_file.record(with_fact())["facts"] == [FACT]
    assert FACT["line"] in json.dumps(slack.payload(notice), ensure_ascii=False)
    assert FACT["line"] in json.dumps(teams.adaptive_card(notice), ensure_ascii=False)
    assert FACT["line"] in json.dumps(teams.message_card(notice), ensure_ascii=False)
    assert FACT["line"] in render_html(notice)
