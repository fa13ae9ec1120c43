"""Benchmark the rating screen on a 500-pair task: the first screen and a grade's round trip.

A test set of 50 queries with 10 documents each (a title and about 200 words of text), a task
of its 500 pairs (``--pairs`` CSV), one rater. The app runs in a real uvicorn on 127.0.0.1.

- **server**: with an HTTP client, the invite link followed to the first pair page (the enter
  page, its button's post, redirect, page; ten new raters), and a grade posted (JSON with the
  anti-forgery header) followed by the next pair's page, as the browser does after a key
  press; medians and 95th percentiles of ``--grades`` grades;
- **chromium**: headless Chromium (``/usr/bin/chromium``) opening the invite link, Enter on
  its focused button, until the first pair's ``load`` (ten new raters: the first screen of
  each); then a digit key pressed on each screen until the next screen's ``load``.

The yardstick is 0.1 s: a response within it feels instantaneous (Nielsen, *Usability
Engineering*, 1993, ch. 5: the three response-time limits). Run from the repository root::

    python scripts/bench_rating.py [--grades 100] [--db sqlite|postgres URL]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalplat.cli import app

YARDSTICK_MS = 100.0
FIRST_SCREENS = 10
QUERIES, PER_QUERY = 50, 10
WORDS = [
    "lift",
    "drag",
    "wing",
    "boundary",
    "layer",
    "flow",
    "pressure",
    "shock",
    "velocity",
    "surface",
]


def build(folder: Path, url: str) -> str:
    from typer.testing import CliRunner

    docs, qrels, pairs = [], [], ["query_id,doc_id"]
    for q in range(1, QUERIES + 1):
        qrels.append(f"q{q} 0 seed{q} 1")
        docs.append(json.dumps({"id": f"seed{q}", "title": "seed", "text": "seed"}))
        for i in range(PER_QUERY):
            doc = f"q{q}-d{i}"
            text = " ".join(WORDS[(q * i + n) % len(WORDS)] for n in range(200))
            docs.append(json.dumps({"id": doc, "title": f"On {WORDS[i]} {q}", "text": text}))
            pairs.append(f"q{q},{doc}")
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (folder / "queries.tsv").write_text("".join(f"q{q}\tquestion {q}\n" for q in range(1, 51)))
    (folder / "docs.jsonl").write_text("\n".join(docs) + "\n")
    (folder / "pairs.csv").write_text("\n".join(pairs) + "\n")
    runner = CliRunner()
    for args in (
        ["init"],
        ["testset", "import", "bench", "--qrels", str(folder / "qrels.txt"), "--queries",
         str(folder / "queries.tsv"), "--docs", str(folder / "docs.jsonl")],
        ["rate", "task", "bench", "-t", "bench", "--pairs", str(folder / "pairs.csv"),
         "--scale", "0-3"],
    ):  # fmt: skip
        result = runner.invoke(app, [*args, "--db", url])
        if result.exit_code != 0:
            raise SystemExit(f"{args}: {result.output}")
    return ""


def invite(url: str, base: str, rater: str) -> str:
    from typer.testing import CliRunner

    result = CliRunner().invoke(
        app, ["rate", "invite", "bench", rater, "--base-url", base, "--db", url]
    )
    return result.stdout.strip().splitlines()[0]


def figures(name: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    median = statistics.median(ms)
    verdict = "within" if p95 <= YARDSTICK_MS else "OVER"
    return (
        f"{name:<34} median {median:7.1f} ms   p95 {p95:7.1f} ms   yardstick "
        f"{YARDSTICK_MS:.0f} ms ({verdict})"
    )


def enter_task(client: Any, link: str) -> Any:
    """The invite's page, then its button's post (the nonce), on to the first pair."""
    import re

    page = client.get(link)
    nonce = re.search(r'name="nonce" value="([^"]+)"', page.text)
    if nonce is None:
        raise SystemExit(f"no enter page at {link}")
    return client.post(link, data={"nonce": nonce.group(1)}, follow_redirects=True)


def server_side(url: str, base: str, grades: int) -> list[str]:
    import re

    import httpx

    first = []
    for n in range(FIRST_SCREENS):  # each a new rater: enter, redirect, the first pair
        with httpx.Client() as fresh:
            link = invite(url, base, f"first-{n}")
            started = time.perf_counter()
            enter_task(fresh, link)
            first.append(time.perf_counter() - started)
    with httpx.Client() as client:
        page = enter_task(client, invite(url, base, "http-rater"))
        trips = []
        for n in range(grades):
            grade_url = re.search(r'data-grade-url="([^"]+)"', page.text)
            csrf = re.search(r'data-csrf="([^"]+)"', page.text)
            nxt = re.search(r'data-next-url="([^"]+)"', page.text)
            if not (grade_url and csrf and nxt):
                raise SystemExit(f"no pair page at grade {n}")
            started = time.perf_counter()
            posted = client.post(
                base + httpx.URL(grade_url.group(1)).path, json={"grade": n % 4},
                headers={"X-Evalplat-CSRF": csrf.group(1)},
            )  # fmt: skip
            page = client.get(base + httpx.URL(nxt.group(1)).path, follow_redirects=True)
            trips.append(time.perf_counter() - started)
            if posted.status_code != 200:
                raise SystemExit(f"grade refused: {posted.text}")
    return [figures("server: first screen", first), figures("server: grade + next screen", trips)]


def in_chromium(url: str, base: str, grades: int) -> list[str]:
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        first = []
        for n in range(FIRST_SCREENS):
            page = browser.new_context().new_page()
            link = invite(url, base, f"browser-first-{n}")
            started = time.perf_counter()
            page.goto(link, wait_until="load")
            with page.expect_navigation(wait_until="load"):
                page.keyboard.press("Enter")
            first.append(time.perf_counter() - started)
        trips = []
        for n in range(grades):
            started = time.perf_counter()
            with page.expect_navigation(wait_until="load"):
                page.keyboard.press(str(n % 4))
            trips.append(time.perf_counter() - started)
        browser.close()
    return [
        figures("chromium: first screen", first),
        figures("chromium: key to next screen", trips),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=100)
    parser.add_argument("--db", default="sqlite", help="sqlite (a scratch file) or a URL")
    options = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from rating.servers import rating_server  # the tests' in-thread uvicorn

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        url = f"sqlite:///{folder / 'bench.db'}" if options.db == "sqlite" else options.db
        build(folder, url)
        kind = url.split(":")[0]
        print(f"task of {QUERIES * PER_QUERY} pairs, {options.grades} grades, database {kind}")
        with rating_server(url) as base:
            for line in [*server_side(url, base, options.grades),
                         *in_chromium(url, base, options.grades)]:  # fmt: skip
                print(line)


if __name__ == "__main__":
    main()
