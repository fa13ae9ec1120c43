"""Raters in real Chromium against the real server: grading by keyboard alone, a reload that
resumes, two raters and their agreement, a revoked link, hostile document text; on SQLite and
PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from evalplat.store import Store
from evalplat.testsets.raters import krippendorff_alpha, weighted_kappa

from .raters import make_task
from .servers import open_invite, rating_server
from .world import HOSTILE_TEXT, HOSTILE_TITLE, UNJUDGED, RateWorld


def doc_on(page: Any) -> str:
    label = page.locator(".document .label").inner_text()
    found = re.search(r"document (\S+)", label)
    assert found, label
    return found.group(1)


def wanted(doc: str, rater: str) -> int:
    """The grade a test rater gives a document: from its number, shifted for ``bo``."""
    number = int(doc.rsplit("-d", 1)[1])
    return (number + (1 if rater == "bo" and number == 5 else 0)) % 3


def grade_all(page: Any, rater: str, count: int) -> list[str]:
    """Grade ``count`` pairs by keyboard alone; the documents in the order shown."""
    seen = []
    for _ in range(count):
        doc = doc_on(page)
        seen.append(doc)
        with page.expect_navigation():
            page.keyboard.press(str(wanted(doc, rater)))
    return seen


def test_a_rater_grades_a_task_by_keyboard_alone(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], browser: Any
) -> None:
    make_task(cli, world, "t")
    with rating_server(world.url) as base:
        page = browser.new_page()
        open_invite(page, invite("t", "ana", base))
        assert page.locator("#position").inner_text() == f"1 / {UNJUDGED}"
        # a note by keyboard: n, type, Enter saves it with the grade given next
        page.keyboard.press("n")
        page.keyboard.type("looks relevant")
        page.keyboard.press("Enter")
        first = doc_on(page)
        with page.expect_navigation():
            page.keyboard.press(str(wanted(first, "ana")))
        # unsure, then back with the arrow key: the screen shows what was saved
        second = doc_on(page)
        with page.expect_navigation():
            page.keyboard.press("u")
        with page.expect_navigation():
            page.keyboard.press("ArrowLeft")
        assert doc_on(page) == second
        assert page.locator("#status").inner_text() == "saved: unsure"
        with page.expect_navigation():
            page.keyboard.press(str(wanted(second, "ana")))  # changed their mind
        seen = [first, second, *grade_all(page, "ana", UNJUDGED - 2)]
        assert page.locator("#done").inner_text() == "All done"
    with Store.open(world.url) as store:
        grades = store.rating_grades("t")
    assert len(grades) == UNJUDGED and {g.rater for g in grades} == {"ana"}
    assert len(set(seen)) == UNJUDGED
    assert all(g.grade == wanted(g.doc_id, "ana") for g in grades)
    assert [g.note for g in grades if g.doc_id == first] == ["looks relevant"]
    assert not any(g.unsure for g in grades)


def test_a_reload_mid_task_resumes_where_the_rater_was(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], browser: Any
) -> None:
    make_task(cli, world, "t")
    with rating_server(world.url) as base:
        context = browser.new_context()
        page = context.new_page()
        open_invite(page, invite("t", "ana", base))
        done = grade_all(page, "ana", 3)
        page.close()  # the tab is closed mid-task
        again = context.new_page()
        again.goto(f"{base}/tasks/t/")
        assert again.locator("#position").inner_text() == f"4 / {UNJUDGED}"
        assert doc_on(again) not in done
        again.reload()
        assert again.locator("#position").inner_text() == f"4 / {UNJUDGED}"
    with Store.open(world.url) as store:
        assert sorted(g.doc_id for g in store.rating_grades("t")) == sorted(done)


def test_two_raters_see_their_agreement(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], browser: Any
) -> None:
    make_task(cli, world, "t", "--raters-per-pair", "2")
    with rating_server(world.url) as base:
        orders = {}
        for rater in ("ana", "bo"):
            page = browser.new_context().new_page()
            open_invite(page, invite("t", rater, base))
            orders[rater] = grade_all(page, rater, UNJUDGED)
            assert page.locator("#done").is_visible()
        assert orders["ana"] != orders["bo"]  # each rater's own order
        assert sorted(orders["ana"]) == sorted(orders["bo"])
        page.goto(f"{base}/tasks/t/progress")
        table = page.locator("#agreement").inner_text()
    docs = sorted(orders["ana"])
    a = [wanted(d, "ana") for d in docs]
    b = [wanted(d, "bo") for d in docs]
    kappa, alpha = weighted_kappa(a, b, (0, 2)), krippendorff_alpha(a, b)
    assert kappa is not None and alpha is not None and kappa < 1
    assert f"ana / bo\t{UNJUDGED}\t{kappa:.3f}\t{alpha:.3f}" in table


def test_a_revoked_link_is_refused(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], browser: Any
) -> None:
    make_task(cli, world, "t")
    with rating_server(world.url) as base:
        page = browser.new_page()
        open_invite(page, invite("t", "ana", base))
        grade_all(page, "ana", 1)
        assert cli("rate", "revoke", "t", "ana", "--db", world.url).exit_code == 0
        response = page.reload()
        assert response.status == 403
        assert "not allowed" in page.locator("h1").inner_text()
        page.keyboard.press("2")  # the refused page grades nothing
    with Store.open(world.url) as store:
        assert len(store.rating_grades("t")) == 1


def test_hostile_document_text_stays_inert(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], browser: Any
) -> None:
    make_task(cli, world, "t")
    with Store.open(world.url) as store:
        pairs = store.rating_pairs("t")
    [hostile] = [p.pair_id for p in pairs if p.doc_id == "q1-d4"]
    with rating_server(world.url) as base:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        open_invite(page, invite("t", "ana", base))
        page.goto(f"{base}/tasks/t/pairs/{hostile}")
        assert page.locator("#title").inner_text() == HOSTILE_TITLE
        assert page.locator("#text").inner_text() == HOSTILE_TEXT
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("main img").count() == 0
        assert page.locator("main script").count() == 0
    assert errors == []
