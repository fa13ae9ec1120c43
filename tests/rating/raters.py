"""What a test does as a rater of the small world: make a task, open an invite, and grade
from the first pair on, over HTTP against the real server."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from .servers import rating_server
from .world import UNJUDGED, RateWorld


def make_task(cli: Callable[..., Any], world: RateWorld, name: str, *options: str) -> None:
    result = cli("rate", "task", name, "--testset", "small", "--from-run", str(world.run),
                 *options, "--db", world.url)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert f"{UNJUDGED} pairs" in result.stdout


def press_enter(client: httpx.Client, link: str) -> httpx.Response:
    """Open an invite link (a page, no cookie for the task yet) and post its form back."""
    page = client.get(link)
    assert page.status_code == 200, page.text
    nonce = re.search(r'name="nonce" value="([^"]+)"', page.text)
    assert nonce
    return client.post(link, data={"nonce": nonce.group(1)})


def enter(client: httpx.Client, link: str) -> tuple[str, str]:
    """Follow an invite link and press its button, on to the first pair: (its grade URL, the
    anti-forgery value)."""
    entered = press_enter(client, link)
    assert entered.status_code == 303, entered.text
    page = client.get(entered.headers["location"], follow_redirects=True)
    assert page.status_code == 200
    grade_url = re.search(r'data-grade-url="([^"]+)"', page.text)
    csrf = re.search(r'data-csrf="([^"]+)"', page.text)
    assert grade_url and csrf
    return grade_url.group(1), csrf.group(1)


@dataclass(frozen=True)
class Grading:
    client: httpx.Client
    url: str  # the first pair's grade URL
    csrf: str  # the anti-forgery value its page gave

    def headers(self) -> dict[str, str]:
        """What a rater's browser sends with a grade."""
        return {"X-Evalplat-CSRF": self.csrf, "Content-Type": "application/json"}


@contextmanager
def grading(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str], rater: str = "ana"
) -> Iterator[Grading]:
    """Task ``t`` served, ``rater`` in through an invite, at their first pair."""
    make_task(cli, world, "t")
    with rating_server(world.url) as base, httpx.Client() as client:
        grade_url, csrf = enter(client, invite("t", rater, base))
        yield Grading(client, base + httpx.URL(grade_url).path, csrf)
