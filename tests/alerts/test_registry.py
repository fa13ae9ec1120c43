"""Building channels from project-file tables, and the message every channel renders."""

from __future__ import annotations

import pytest

from evalplat.alerts import (
    CHANNEL_KINDS,
    AlertMessage,
    build_channel,
    channels_from_tables,
    find_channel,
)
from evalplat.errors import InputError, NotFoundError

from .messages import regression


def test_registry_has_the_six_channel_types() -> None:
    assert list(CHANNEL_KINDS) == ["webhook", "slack", "teams", "email", "junit", "json"]


def test_unknown_type_lists_the_valid_ones() -> None:
    with pytest.raises(InputError) as raised:
        build_channel({"type": "pager", "url": "x"})
    assert str(raised.value) == (
        "unknown alert channel type 'pager'; valid types: webhook, slack, teams, email, junit, json"
    )


def test_unknown_parameter_lists_the_valid_ones() -> None:
    with pytest.raises(InputError) as raised:
        build_channel({"type": "slack", "url": "x", "channel": "#search"})
    assert str(raised.value) == (
        "slack channel: unknown parameter 'channel'; valid ones: type, name, url, timeout, backoff"
    )


def test_missing_required_parameter_and_wrong_type_are_named() -> None:
    with pytest.raises(InputError, match="webhook channel needs url"):
        build_channel({"type": "webhook"})
    with pytest.raises(InputError, match="timeout must be a number, got 'soon'"):
        build_channel({"type": "webhook", "url": "x", "timeout": "soon"})
    with pytest.raises(InputError, match="format must be one of adaptive, messagecard"):
        build_channel({"type": "teams", "url": "x", "format": "html"})
    with pytest.raises(InputError, match="timeout must be a number, got True"):
        build_channel({"type": "webhook", "url": "x", "timeout": True})
    with pytest.raises(InputError, match="headers values must be strings"):
        build_channel({"type": "webhook", "url": "x", "headers": {"X-Retries": 3}})
    with pytest.raises(InputError, match="to must be an address or a non-empty list"):
        build_channel({"type": "email", "host": "h", "from": "a@b", "to": []})


def test_channels_are_named_by_name_key_or_type_and_found_by_either() -> None:
    channels = channels_from_tables(
        [
            {"type": "slack", "url": "a"},
            {"type": "webhook", "url": "b", "name": "ops"},
            {"type": "webhook", "url": "c", "name": "audit"},
        ]
    )
    assert [c.name for c in channels] == ["slack", "ops", "audit"]
    assert find_channel(channels, "audit").params["url"] == "c"
    assert find_channel(channels, "slack").kind == "slack"
    with pytest.raises(InputError, match="several webhook channels; name one of: slack, ops"):
        find_channel(channels, "webhook")
    with pytest.raises(NotFoundError, match="no alert channel 'teams'"):
        find_channel(channels, "teams")


def test_two_channels_with_one_name_are_refused_naming_the_table() -> None:
    with pytest.raises(InputError, match=r"\[\[alerts\]\] #2: a second channel named 'slack'"):
        channels_from_tables([{"type": "slack", "url": "a"}, {"type": "slack", "url": "b"}])


def test_message_text_lists_facts_and_queries_and_leaves_out_unknowns() -> None:
    text = regression().text()
    assert text.splitlines()[:4] == [
        "Regression: nDCG@10 of docs-bm25 on cranfield",
        "",
        "Config                docs-bm25",
        "Test set              cranfield",
    ]
    assert "Delta                 -0.0250 (-6.07%)" in text
    assert "p-value               0.0031 (randomization)" in text
    assert "  q7  0.6500 → 0.3100 (-0.3400)  heat transfer" in text
    bare = AlertMessage(event="test", config="c", test_set="t", metric="AP")
    assert "p-value" not in bare.text() and "None" not in bare.text()


def test_tiny_p_values_are_not_printed_as_zero() -> None:
    message = AlertMessage(event="opened", config="c", test_set="t", metric="AP", p_value=2e-7)
    assert dict(message.facts())["p-value"] == "2.0e-07"


def test_message_round_trips_through_a_dict() -> None:
    message = regression()
    assert AlertMessage.from_dict(message.to_dict()) == message


def test_unknown_event_is_refused() -> None:
    with pytest.raises(
        ValueError, match="alert event must be one of opened, resolved, retired, test"
    ):
        AlertMessage(event="closed", config="c", test_set="t", metric="AP")


def test_message_says_what_changed_and_keeps_it_through_a_dict() -> None:
    from dataclasses import replace

    message = replace(regression(), changes=('operator: "or" → "and"', "test set t v1 → v2"))
    assert dict(message.facts())["What changed"] == 'operator: "or" → "and"; test set t v1 → v2'
    assert 'What changed          operator: "or" → "and"' in message.text()
    assert AlertMessage.from_dict(message.to_dict()) == message
    assert "What changed" not in dict(regression().facts())


def test_every_channel_renders_a_retired_alert_with_its_reason() -> None:
    import json
    from dataclasses import replace

    from evalplat.alerts import junit, slack, teams, webhook
    from evalplat.alerts.email import build_email
    from evalplat.alerts.json_file import record
    from evalplat.alerts.notice import Notice

    reason = "config docs-bm25 is no longer in evalplat.toml"
    retired = replace(regression(), event="retired", note=reason)
    assert retired.title() == "Retired: nDCG@10 of docs-bm25 on cranfield"
    assert dict(retired.facts())["Retired"] == reason
    assert retired.next_step() is None
    night = Notice((retired, replace(regression(), config="other", alert_id=2)))
    assert night.title() == "evalplat: 1 retired, 1 regression opened"
    rendered = {
        "webhook": json.dumps(webhook.payload(night)),
        "slack": json.dumps(slack.payload(night)),
        "teams": json.dumps(teams.adaptive_card(night)) + json.dumps(teams.message_card(night)),
        "email": build_email(night, "a@example.com", ["b@example.com"], "[evalplat]").as_string(),
        "junit": junit.render([retired], "suite").decode(),
        "json": json.dumps(record(retired, "key-1")),
    }
    for kind, text in rendered.items():
        assert "Retired: nDCG@10 of docs-bm25 on cranfield" in text, kind
        assert "no longer in evalplat.toml" in text, kind
    assert 'failures="0"' in rendered["junit"]  # a retirement is no failure


def test_an_event_of_one_run_names_that_run_and_no_baseline() -> None:
    from dataclasses import replace

    target = replace(regression(), kind="target", baseline=None, baseline_run=None)
    assert dict(target.facts())["Run"] == "9"
    assert "?" not in target.text() and "baseline run" not in target.text()
    assert dict(regression().facts())["Runs"] == "baseline run 3, candidate run 9"


def test_a_notice_title_counts_each_wording_once_and_pluralises_it() -> None:
    from dataclasses import replace

    from evalplat.alerts.notice import Notice

    def retired(kind: str) -> AlertMessage:
        return replace(regression(), event="retired", kind=kind)

    night = Notice(
        (
            *(retired("regression") for _ in range(4)),
            replace(regression(), config="b"),
            *(retired("target") for _ in range(3)),
            replace(regression(), config="c"),
            replace(regression(), kind="operational"),
        )
    )
    assert night.title() == "evalplat: 7 retired, 2 regressions opened, 1 run failed"
