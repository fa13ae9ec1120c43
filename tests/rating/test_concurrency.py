"""Grades posted at once, over HTTP against the real server, on SQLite and PostgreSQL: every
grade answered "saved" is in the version the task closes into, and the raters per pair and one
grade per rater and pair hold, the posts the task cannot take answered 409 with a message.

Each test records what the server answered (a history) and checks it against the database
afterwards. ``EVALPLAT_RATING_REPETITIONS`` repeats the closing test (3 by default).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalplat.store import Store
from evalplat.store.rating import RatingConflictError

from .raters import enter
from .servers import rating_server
from .world import QUERIES, RateWorld

REPETITIONS = int(os.environ.get("EVALPLAT_RATING_REPETITIONS", "3"))
DOCS_PER_QUERY = 15  # 60 pairs


def pair_task(cli: Callable[..., Any], world: RateWorld, name: str, *options: str) -> list[int]:
    """A task of 60 pairs (the documents need not exist to be graded); its pair ids."""
    pairs = world.folder / f"{name}.csv"
    pairs.write_text(
        "query_id,doc_id\n"
        + "".join(f"q{q},x{q}-{i}\n" for q in range(1, QUERIES + 1) for i in range(DOCS_PER_QUERY))
    )
    made = cli("rate", "task", name, "-t", "small", "--pairs", str(pairs), *options,
               "--db", world.url)  # fmt: skip
    assert made.exit_code == 0, made.stderr
    with Store.open(world.url) as store:
        return [p.pair_id for p in store.rating_pairs(name)]


def rater_client(base: str, link: str) -> tuple[httpx.Client, str, str]:
    """A rater's client past the enter page: (client, a grade URL of theirs, csrf value)."""
    client = httpx.Client(timeout=60)
    grade_url, csrf = enter(client, link)
    return client, base + httpx.URL(grade_url).path, csrf


def grade_url_of(url: str, pair_id: int) -> str:
    return url.rsplit("/pairs/", 1)[0] + f"/pairs/{pair_id}/grade"


@pytest.mark.parametrize("repetition", range(REPETITIONS))
def test_a_grade_answered_saved_is_in_the_version_the_task_closes_into(
    cli: Callable[..., Any],
    world: RateWorld,
    invite: Callable[..., str],
    tmp_path: Path,
    repetition: int,
) -> None:
    pair_ids = pair_task(cli, world, "t", "--raters-per-pair", "4", "--scale", "0-3")
    raters = ["ana", "bo", "cy", "di"]
    saved: dict[tuple[str, int], int] = {}  # (rater, pair) -> the last grade answered saved
    refused: list[tuple[int, str]] = []
    enough = threading.Event()
    lock = threading.Lock()

    def rate(rater: str, client: httpx.Client, url: str, csrf: str, offset: int) -> None:
        step = 0
        while True:
            pair_id = pair_ids[(offset + step) % len(pair_ids)]
            grade = (step + offset) % 4
            answer = client.post(grade_url_of(url, pair_id), json={"grade": grade},
                                 headers={"X-Evalplat-CSRF": csrf})  # fmt: skip
            step += 1
            with lock:
                if answer.status_code == 200 and answer.json()["saved"] is True:
                    saved[(rater, pair_id)] = grade
                    if len(saved) >= 20:
                        enough.set()
                    continue
                refused.append((answer.status_code, answer.text))
                return

    with rating_server(world.url) as base:
        clients = [rater_client(base, invite("t", rater, base)) for rater in raters]
        threads = [
            threading.Thread(target=rate, args=(rater, *clients[i], 17 * i + repetition))
            for i, rater in enumerate(raters)
        ]
        for thread in threads:
            thread.start()
        assert enough.wait(60)
        closed = cli("rate", "close", "t", "--db", world.url)
        for thread in threads:
            thread.join(60)
        for client, _, _ in clients:
            client.close()
    assert closed.exit_code == 0, closed.stderr
    with Store.open(world.url) as store:
        judgments = store.load_test_set("small").judgments
        pairs = {p.pair_id: (p.query_id, p.doc_id) for p in store.rating_pairs("t")}
        assert store.rating_task("t").status == "closed"
    stored = {
        (s, q, d): int(g)
        for q, d, g, s in judgments[["query_id", "doc_id", "grade", "source"]].itertuples(
            index=False
        )
    }
    missing = [
        (rater, pair_id, grade)
        for (rater, pair_id), grade in saved.items()
        if stored.get((rater, *pairs[pair_id])) != grade
    ]
    assert missing == [], f"{len(missing)} of {len(saved)} saved grades are not in the version"
    assert len(stored) == 12 + len(saved)
    # every rater went on until the task refused them, with a message and not as a stranger
    assert len(refused) == len(raters)
    for status, text in refused:
        assert status == 409, text
        assert "takes no more grades" in text


def test_raters_per_pair_and_one_grade_per_rater_hold_under_concurrent_posts(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    pair_ids = pair_task(cli, world, "t")
    raters = [f"r{i}" for i in range(8)]
    answers: list[tuple[str, int, int, str]] = []
    lock = threading.Lock()
    start = threading.Barrier(len(raters) + 2)

    def rate(rater: str, client: httpx.Client, url: str, csrf: str, ids: list[int]) -> None:
        start.wait(60)
        for pair_id in ids:
            answer = client.post(grade_url_of(url, pair_id), json={"grade": 1},
                                 headers={"X-Evalplat-CSRF": csrf})  # fmt: skip
            with lock:
                answers.append((rater, pair_id, answer.status_code, answer.text))

    with rating_server(world.url) as base:
        clients = [rater_client(base, invite("t", rater, base)) for rater in raters]
        threads = [
            threading.Thread(target=rate, args=(rater, *clients[i], pair_ids))
            for i, rater in enumerate(raters)
        ]
        # one rater's two tabs post the same new pairs at once
        twin = (raters[0], *clients[0], list(reversed(pair_ids)))
        threads += [threading.Thread(target=rate, args=twin)]
        for thread in threads:
            thread.start()
        start.wait(60)
        for thread in threads:
            thread.join(120)
        for client, _, _ in clients:
            client.close()
    assert len(answers) == (len(raters) + 1) * len(pair_ids)
    statuses = {status for _, _, status, _ in answers}
    assert statuses <= {200, 409}, [a for a in answers if a[2] not in (200, 409)][:3]
    for _, pair_id, status, text in answers:
        if status == 409:
            assert f"pair {pair_id} already has its 1 rater:" in text
    with Store.open(world.url) as store:
        grades = store.rating_grades("t")
    assert len(grades) == len(pair_ids)  # one rater per pair, one grade of theirs
    assert len({g.pair_id for g in grades}) == len(grades)
    saved = {(rater, pair_id) for rater, pair_id, status, _ in answers if status == 200}
    assert {(g.rater, g.pair_id) for g in grades} == saved


def test_a_close_left_midway_takes_no_more_grades_and_finishes_when_run_again(
    cli: Callable[..., Any], world: RateWorld
) -> None:
    first, second = pair_task(cli, world, "t")[:2]
    with Store.open(world.url) as store:
        store.record_rating_grade("t", first, "ana", 2, False, None)
        # the grades read and the task marked closing, then the close stopped
        read = store.take_rating_grades("t", lambda pairs, grades, leads: len(grades))
        assert read == 1
        with pytest.raises(RatingConflictError, match="'t' is closing: it takes no more grades"):
            store.record_rating_grade("t", second, "ana", 1, False, None)
        with pytest.raises(RatingConflictError, match="is closing"):
            store.settle_rating_pair("t", first, 1, "lee")
    assert "task t (closing)" in cli("rate", "status", "t", "--db", world.url).stdout
    closed = cli("rate", "close", "t", "--db", world.url)
    assert closed.exit_code == 0, closed.stderr
    assert closed.stdout == "closed t: small@2, 13 judgments\n"
    again = cli("rate", "close", "t", "--db", world.url)
    assert again.exit_code == 2 and "already closed (version 2)" in again.stderr
    with Store.open(world.url) as store:
        assert len(store.rating_grades("t")) == 1
        with pytest.raises(RatingConflictError, match="is closed"):
            store.record_rating_grade("t", second, "ana", 1, False, None)
