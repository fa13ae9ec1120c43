"""Only invited raters get in, grades need the anti-forgery header, and a closed task's grades
are a new test set version: over HTTP against the real server, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import httpx

from evalplat.store import Store

from .raters import enter, grading, make_task, press_enter
from .servers import rating_server
from .world import HOSTILE_TEXT, HOSTILE_TITLE, RateWorld


def test_only_a_live_invite_of_this_task_gets_in(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    make_task(cli, world, "first")
    make_task(cli, world, "second")
    with rating_server(world.url) as base:
        ana = invite("first", "ana", base)
        other = invite("second", "ana", base)
        short = invite("first", "bo", base, "--days", "0.00001")
        with httpx.Client() as client:
            assert client.get(f"{base}/tasks/first/").status_code == 403  # no token
            assert client.get(f"{base}/tasks/first/enter/not-a-token").status_code == 403
            token = other.rsplit("/", 1)[1]
            assert client.get(f"{base}/tasks/first/enter/{token}").status_code == 403
            assert client.get(f"{base}/tasks/nosuch/enter/{token}").status_code == 403
            time.sleep(1.0)
            assert client.get(short).status_code == 403  # expired
        with httpx.Client() as client:
            enter(client, ana)
            assert client.get(f"{base}/tasks/first/").status_code == 303
            # the cookie of one task opens nothing of another
            assert client.get(f"{base}/tasks/second/").status_code == 403
            revoked = cli("rate", "revoke", "first", "ana", "--db", world.url)
            assert revoked.exit_code == 0 and "revoked 1" in revoked.stdout
            refused = client.get(f"{base}/tasks/first/")
            assert refused.status_code == 403
            assert "not allowed" in refused.text


def test_a_grade_needs_the_anti_forgery_header_and_json(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    with grading(cli, world, invite) as rater:
        client, url, csrf = rater.client, rater.url, rater.csrf
        assert client.post(url, json={"grade": 1}).status_code == 403
        assert client.post(url, json={"grade": 1}, headers={"X-Evalplat-CSRF": "x" * 64}
                           ).status_code == 403  # fmt: skip
        form = client.post(url, data={"grade": "1"}, headers={"X-Evalplat-CSRF": csrf})
        assert form.status_code == 403
        bad = client.post(url, json={"grade": 7}, headers={"X-Evalplat-CSRF": csrf})
        assert bad.status_code == 400 and "0 to 2" in bad.json()["error"]
        both = client.post(url, json={"grade": 1, "unsure": True},
                           headers={"X-Evalplat-CSRF": csrf})  # fmt: skip
        assert both.status_code == 400 and "not both" in both.json()["error"]
        with Store.open(world.url) as store:
            assert store.rating_grades("t") == []
        ok = client.post(url, json={"grade": 2, "note": "on topic"},
                         headers={"X-Evalplat-CSRF": csrf})  # fmt: skip
        assert ok.status_code == 200 and ok.json()["saved"] is True
    with Store.open(world.url) as store:
        grades = store.rating_grades("t")
    assert [(g.rater, g.grade, g.note) for g in grades] == [("ana", 2, "on topic")]


def test_pages_carry_a_strict_policy_and_escape_document_text(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    make_task(cli, world, "t")
    with rating_server(world.url) as base, httpx.Client() as client:
        enter(client, invite("t", "ana", base))
        with Store.open(world.url) as store:
            pairs = store.rating_pairs("t")
        [hostile] = [p.pair_id for p in pairs if p.doc_id == "q1-d4"]
        page = client.get(f"{base}/tasks/t/pairs/{hostile}")
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert HOSTILE_TITLE not in page.text and HOSTILE_TEXT not in page.text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;Hostile" in page.text
    assert "<script>" not in page.text.replace('<script src="', "")


def test_closing_a_task_adds_a_version_with_each_rater_as_a_source(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    make_task(cli, world, "t", "--raters-per-pair", "2", "--grades", "max")
    with rating_server(world.url) as base:
        for rater, grade in (("ana", 2), ("bo", 1)):
            with httpx.Client() as client:
                grade_url, csrf = enter(client, invite("t", rater, base))
                url = base + httpx.URL(grade_url).path
                posted = client.post(url, json={"grade": grade}, headers={"X-Evalplat-CSRF": csrf})
                assert posted.status_code == 200
    closed = cli("rate", "close", "t", "--json", "--db", world.url)
    assert closed.exit_code == 0, closed.stderr
    with Store.open(world.url) as store:
        info = store.test_set_version("small")
        assert info.version == 2 and info.source is not None
        assert info.source["rating_task"] == "t"
        judgments = store.load_test_set("small").judgments
        assert store.rating_task("t").status == "closed"
    ours = judgments[judgments["source"].isin(["ana", "bo"])]
    assert sorted(ours["source"]) == ["ana", "bo"]
    assert len(judgments) == 12 + 2  # the people's 12 kept, the two raters' added
    again = cli("rate", "close", "t", "--db", world.url)
    assert again.exit_code == 2 and "already closed" in again.stderr


def test_an_invite_link_alone_logs_nobody_in(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    """Login CSRF: a crafted link, or a cross-site form posting it, sets no task cookie."""
    make_task(cli, world, "t")
    with rating_server(world.url) as base:
        link = invite("t", "mallory", base)
        with httpx.Client() as client:
            page = client.get(link)
            assert page.status_code == 200
            assert 'id="enter-task">t<' in page.text and 'id="enter-rater">mallory<' in page.text
            assert 'id="enter" autofocus' in page.text
            assert not any(name.startswith("evalplat_rate_") for name in client.cookies)
            assert client.get(f"{base}/tasks/t/").status_code == 403  # the link let nobody in
            nonce = re.search(r'name="nonce" value="([^"]+)"', page.text)
            assert nonce
            # a cross-site form: the browser says so, or sends no SameSite=Strict nonce cookie
            cross = client.post(link, data={"nonce": nonce.group(1)},
                                headers={"Sec-Fetch-Site": "cross-site"})  # fmt: skip
            assert cross.status_code == 403
        with httpx.Client() as victim:  # the nonce was read elsewhere; this browser lacks it
            stolen = victim.post(link, data={"nonce": nonce.group(1)})
            assert stolen.status_code == 403
            assert victim.post(link, data={"nonce": ""}).status_code == 403
            assert not any(name.startswith("evalplat_rate_") for name in victim.cookies)
            assert victim.get(f"{base}/tasks/t/").status_code == 403
        with httpx.Client() as client:
            client.get(link)
            wrong = client.post(link, data={"nonce": "0" * 64})
            assert wrong.status_code == 403
            assert press_enter(client, link).status_code == 303
            assert client.get(f"{base}/tasks/t/").status_code == 303
            assert "evalplat_enter" not in client.cookies  # the nonce is spent
