"""Bounded before authenticated: every route reads at most the bytes it needs. A body larger
than its route takes is refused with 413 before it is read, whether its length is declared or
it streams in chunks; JSON nesting is bounded. Against ``rate serve`` as a process of its own,
whose peak resident memory is read from /proc; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
import select
import socket
from collections.abc import Callable
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.rating.routes import NOTE_MAX
from evalplat.store import Store

from .raters import enter, grading, make_task
from .servers import rating_process
from .world import RateWorld

GIGABYTE = 1 << 30
MEMORY_LIMIT_MB = 150
CHUNK = b"x" * (1 << 16)


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (``VmHWM``), in MB."""
    with open(f"/proc/{pid}/status") as status:
        found = re.search(r"^VmHWM:\s+(\d+) kB", status.read(), re.MULTILINE)
    assert found
    return int(found.group(1)) / 1024


def stream_post(
    base: str, path: str, total: int, *, chunked: bool, headers: dict[str, str] | None = None
) -> tuple[int, int]:
    """POST a body of ``total`` bytes to ``path``, in 64 KiB pieces, until the server answers
    (or the whole body is sent): (the answer's status, the bytes of body sent)."""
    host, port = httpx.URL(base).host, httpx.URL(base).port
    assert port is not None
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}"
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", framing,
             *(f"{k}: {v}" for k, v in (headers or {}).items())]  # fmt: skip
    sent = 0
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        try:
            while sent < total and not select.select([sock], [], [], 0)[0]:
                piece = b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK) if chunked else CHUNK
                sock.sendall(piece)
                sent += len(CHUNK)
            if chunked and sent >= total:
                sock.sendall(b"0\r\n\r\n")
        except OSError:  # the server closed the connection: its answer was sent before
            pass
        answer = b""
        while b"\r\n" not in answer:
            got = sock.recv(4096)
            assert got, f"no answer after {sent:,} bytes"
            answer += got
    return int(answer.split()[1]), sent


def test_a_gigabyte_posted_to_any_route_is_refused_in_bounded_memory(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    """Strangers first, on a server that has served nothing yet (no token, cookie or task is
    needed to post): it stays under 150 MB. Then a rater, once the pages have loaded what they
    use: their gigabyte adds nothing measurable to the server's peak, which stays under 150 MB
    too (the pages read plain rows; pandas alone would add about 67 MB)."""
    make_task(cli, world, "t")
    with rating_process(world.url) as served, httpx.Client() as client:
        link = invite("t", "ana", served.base)
        enter_path = httpx.URL(link).path
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        strangers = [
            stream_post(served.base, enter_path, GIGABYTE, chunked=True, headers=form),
            stream_post(served.base, enter_path, GIGABYTE, chunked=False, headers=form),
            stream_post(served.base, "/tasks/any/enter/any", GIGABYTE, chunked=True),
            stream_post(served.base, "/tasks/t/pairs/1/grade", GIGABYTE, chunked=False),
            stream_post(served.base, "/tasks/t/progress", GIGABYTE, chunked=False),
        ]
        stranger_peak = peak_rss_mb(served.pid)
        grade_url, csrf = enter(client, link)
        cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
        rater = {"Cookie": cookie, "X-Evalplat-CSRF": csrf, "Content-Type": "application/json"}
        grade_path = httpx.URL(grade_url).path
        before = peak_rss_mb(served.pid)
        raters = [
            stream_post(served.base, grade_path, GIGABYTE, chunked=True, headers=rater),
            stream_post(served.base, grade_path, GIGABYTE, chunked=False, headers=rater),
        ]
        rater_peak = peak_rss_mb(served.pid)
        # the server still serves
        assert client.get(f"{served.base}/tasks/t/progress").status_code == 200
    answers = strangers + raters
    assert [status for status, _ in answers] == [413] * len(answers)
    # refused as soon as the body passed what the route takes, not after a gigabyte (what the
    # client sent is mostly the two sockets' buffers, filled before it saw the answer)
    assert max(sent for _, sent in answers) < 32 * (1 << 20)
    assert stranger_peak < MEMORY_LIMIT_MB, f"the server peaked at {stranger_peak:.0f} MB"
    grown = f"a rater's posts took the server from {before:.0f} to {rater_peak:.0f} MB"
    assert rater_peak - before < 16, grown
    assert rater_peak < MEMORY_LIMIT_MB, grown


def test_a_body_nested_too_deep_or_too_large_is_refused_with_a_message(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    with grading(cli, world, invite) as rater:
        client, url, headers = rater.client, rater.url, rater.headers()
        deep = client.post(url, content=b"[" * 10_000 + b"]" * 10_000, headers=headers)
        assert deep.status_code == 400
        assert "nests arrays and objects 10000 deep" in deep.json()["error"]
        deeper = client.post(url, content=b"[" * 100_000, headers=headers)
        assert deeper.status_code == 413  # more than a grade's bytes: refused before parsing
        assert "larger than" in deeper.json()["error"]
        # the longest note, every character escaped as a surrogate pair: it fits
        longest = json.dumps({"grade": 1, "note": "\U0001f600" * NOTE_MAX}).encode()
        assert len(longest) > 12 * NOTE_MAX
        fits = client.post(url, content=longest, headers=headers)
        assert fits.status_code == 200, fits.text
        not_utf8 = client.post(url, content=b'{"grade": 1, "note": "\xff"}', headers=headers)
        assert not_utf8.status_code == 400 and not_utf8.json()["error"] == "the body must be JSON"


GRADE_KEYS = ["grade", "unsure", "note", "x"]
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(st.characters(codec=None, min_codepoint=0), max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(GRADE_KEYS), children, max_size=4)
    ),
    max_leaves=8,
)
grade_bodies = st.one_of(
    st.fixed_dictionaries(
        {}, optional={"grade": json_values, "unsure": json_values, "note": json_values}
    ).map(lambda body: json.dumps(body).encode()),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=300),
    st.sampled_from([b"[" * 50, b"{" * 9, b'{"grade": 1, "grade": 2}', b'{"note": "\\ud800"}']),
)


def test_any_grade_body_is_saved_as_answered_or_refused_with_a_message(
    cli: Callable[..., Any], world: RateWorld, invite: Callable[..., str]
) -> None:
    with grading(cli, world, invite) as rater:
        client, url, headers = rater.client, rater.url, rater.headers()
        pair_id = int(url.rsplit("/", 2)[1])

        @settings(max_examples=40, derandomize=True, deadline=None, database=None)
        @given(body=grade_bodies)
        def post(body: bytes) -> None:
            answer = client.post(url, content=body, headers=headers)
            assert answer.status_code in (200, 400), (body, answer.status_code, answer.text)
            if answer.status_code == 400:
                problem = answer.json()["error"]
                assert problem and "\n" not in problem
                return
            with Store.open(world.url) as store:
                grades = store.rating_grades("t")
            [mine] = [g for g in grades if g.pair_id == pair_id]
            given_grade = answer.json()["grade"]
            assert mine.grade == given_grade
            assert mine.unsure == answer.json()["unsure"] == (given_grade is None)

        post()
