"""Several raters, a lead and a model judge in real Chromium: each pair goes to as many raters
as the task asks, the judge's grade shows only after the person graded and is measured against
people, and a lead settles a disagreement that the closed version then holds; on SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from evalplat.store import Store

from .raters import enter, make_task
from .servers import open_invite, rating_server
from .test_browser import doc_on
from .world import UNJUDGED, RateWorld


def judge_grades(cli: Callable[..., Any], world: RateWorld) -> dict[str, int]:
    """A model judge (source ``llm:stub``) grades every unjudged pair: 2 for d3, else 0."""
    with Store.open(world.url) as store:
        pairs = store.unjudged(world.run, 10)
    grades = {d: 2 if d.endswith("-d3") else 0 for d in pairs["doc_id"]}
    path = world.folder / "judge.csv"
    path.write_text("query_id,doc_id,grade,source\n" + "".join(
        f"{q},{d},{grades[d]},llm:stub\n" for q, d in zip(pairs["query_id"], pairs["doc_id"],
                                                          strict=True)))  # fmt: skip
    added = cli("testset", "import", "small", "--qrels", str(path), "--add", "--db", world.url)
    assert added.exit_code == 0, added.stderr
    return grades


def test_the_judge_shows_only_after_the_person_graded_and_is_measured_against_people(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], browser: Any
) -> None:
    model = judge_grades(cli, world)
    make_task(cli, world, "t", "--judge", "stub")
    with rating_server(world.url) as base:
        page = browser.new_page()
        open_invite(page, invite("t", "ana", base))
        for n in range(UNJUDGED):
            doc = doc_on(page)
            assert page.locator("#judge").inner_text() == ""  # never before the person
            page.keyboard.press("2" if n % 2 else "0")
            page.locator("#judge").filter(has_text="the judge said").wait_for()
            assert page.locator("#judge").inner_text().startswith(f"the judge said {model[doc]}")
            with page.expect_navigation():
                page.keyboard.press("j")
        page.goto(f"{base}/tasks/t/progress")
        row = page.locator("#judge-agreement tr").nth(1).inner_text()
    with Store.open(world.url) as store:
        grades = store.rating_grades("t")
    from evalplat.testsets.raters import weighted_kappa

    people = [int(g.grade or 0) for g in grades]
    kappa = weighted_kappa(people, [model[g.doc_id] for g in grades], (0, 2))
    assert kappa is not None
    assert row == f"ana\t{UNJUDGED}\t{kappa:.3f}"


def test_pairs_go_to_as_many_raters_as_asked_and_a_lead_settles_a_disagreement(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], browser: Any
) -> None:
    make_task(cli, world, "t", "--raters-per-pair", "2", "--grades", "mean")
    with Store.open(world.url) as store:
        pairs = store.rating_pairs("t")
    first = pairs[0].pair_id
    with rating_server(world.url) as base:
        for rater, grade in (("ana", 0), ("bo", 2), ("cy", 1)):
            with httpx.Client() as client:
                _, csrf = enter(client, invite("t", rater, base))
                url = f"{base}/tasks/t/pairs/{first}/grade"
                posted = client.post(url, json={"grade": grade}, headers={"X-Evalplat-CSRF": csrf})
                listed = client.get(f"{base}/tasks/t/pairs/{first}")
                if rater == "cy":  # two raters took the pair: it is on nobody else's list
                    assert posted.status_code == 409 and "already has its 2" in posted.text
                    assert listed.status_code == 303
                else:
                    assert (posted.status_code, listed.status_code) == (200, 200), rater
        status = cli("rate", "status", "t", "--db", world.url)
        assert "1 pair graded differently" in status.stdout
        with httpx.Client() as client:
            enter(client, invite("t", "ana-2", base))
            assert client.get(f"{base}/tasks/t/disagreements").status_code == 403  # not a lead
        page = browser.new_page()
        open_invite(page, invite("t", "lee", base, "--role", "lead"))
        page.goto(f"{base}/tasks/t/disagreements")
        row = page.locator("#disagreements tr").nth(1)
        assert "ana: 0" in row.inner_text() and "bo: 2" in row.inner_text()
        row.locator("button[data-grade='1']").click()
        row.locator("button.chosen[data-grade='1']").wait_for()
    closed = cli("rate", "close", "t", "--db", world.url)
    assert closed.exit_code == 0, closed.stderr
    with Store.open(world.url) as store:
        judgments = store.load_test_set("small").judgments
    pair = pairs[0]
    ours = judgments[(judgments["query_id"] == pair.query_id)
                     & (judgments["doc_id"] == pair.doc_id)]  # fmt: skip
    # the raters' grades stay beside the lead's, which settles the pair
    assert sorted(map(tuple, ours[["grade", "source"]].values.tolist())) == [
        (0, "ana"), (1, "lead:lee"), (2, "bo")
    ]  # fmt: skip
    with Store.open(world.url) as store:
        qrels = store.load_test_set("small").qrels
    settled = qrels[(qrels["query_id"] == pair.query_id) & (qrels["doc_id"] == pair.doc_id)]
    assert settled["grade"].tolist() == [1]
    # after the lead settled, both commands measure the raters' agreement alike
    status = json.loads(cli("rate", "status", "t", "--json", "--db", world.url).stdout)
    shown = json.loads(cli("testset", "show", "small", "--json", "--db", world.url).stdout)
    [rated] = [(a["pairs"], a["kappa"]) for a in status["agreement"]
               if (a["rater_a"], a["rater_b"]) == ("ana", "bo")]  # fmt: skip
    [kept] = [(a["pairs"], a["kappa"]) for a in shown["agreement"]
              if (a["source_a"], a["source_b"]) == ("ana", "bo")]  # fmt: skip
    assert rated == kept and rated[0] == 1
    assert not any("lead" in a["source_a"] + a["source_b"] for a in shown["agreement"])
