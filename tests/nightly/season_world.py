"""The world of the season test: one project's files, its engines, receivers and a busy machine.

Test sets (small in queries, so that many nights stay fast):

- ``topics``: ``TOPICS`` queries ``topic N`` (N from 2, so that no query is a bare grade digit
  of the documents' text), tagged ``head`` (the first 10) or ``tail`` (the other 20). Each query
  has one relevant document ``dN`` and two judged non-relevant ones, ``n1`` and ``n2``. The
  documents ``xN`` match query N for the ``builtin`` searcher but nobody judged them: they are
  what ``--add`` and the judge grade. The documents ``yN`` (no word of any query, so the
  ``builtin`` searcher never finds them) are what the ``fresh`` config's engine returns and
  the raters of ``evalplat rate`` grade. Every document's text carries ``GRADE=g`` for the
  judge.
- ``catalog``: ``ITEMS`` queries ``item N``, untagged, judged like ``topics`` (its documents
  are there for the judge only).

Engines: ``engine:search`` (a ``python`` searcher whose quality its ``mode`` param chooses, with
an optional per-query ``delay``: ``prod`` sleeps 2 ms, so that ``cand``, compared with it, is
credibly faster on paired timings; from night 6 a latency gate times 200 pairs of every
baseline a night, and 10 ms made the season about 50 s longer), the ``builtin`` searcher over
``topics``' documents, and an ``http`` searcher against :class:`SearchServer` on 127.0.0.1,
which answers 500 while its ``failing`` flag is set.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from evalplat.events.synthetic import Arm, write_ubi_log

from ..alerts.servers import serving
from ..events.interleaved import write_interleaved_log

TOPICS = range(2, 32)  # 30 queries: 2-11 head, 12-31 tail
ITEMS = range(1, 21)  # 20 catalogue queries
HEAD = set(range(2, 12))
REPORTS_URL = "https://reports.example.test/search"  # [reports] base_url: alert links under it

ENGINE = """
import time


def search(query, depth, mode="good", delay=0.0, **params):
    if delay:
        time.sleep(delay)
    n = query.split()[-1]
    if mode == "bad":
        return [("n1", 2.0), ("n2", 1.0)]
    if mode == "empty":
        return []
    if mode == "fresh":
        return [("d" + n, 3.0), ("y" + n, 2.0), ("n1", 1.0), ("n2", 0.5)]
    return [("d" + n, 3.0), ("n1", 2.0), ("n2", 1.0)]
"""


# ── the search server the http config talks to ──────────────────────────────────────────────


class SearchServer(ThreadingHTTPServer):
    """``GET /search?q=TEXT&n=DEPTH`` → ``{"results": [{"id", "score"}]}``, the ``good`` ranking;
    500 for every request while ``failing`` is set."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SearchHandler)
        self.failing = False
        self.requests = 0

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/search"


class _SearchHandler(BaseHTTPRequestHandler):
    server: SearchServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requests += 1
        if self.server.failing:
            body = b'{"error": "index unavailable"}'
            self.send_response(500)
        else:
            text = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
            n = text.split()[-1] if text.split() else "0"
            hits = [
                {"id": f"d{n}", "score": 3.0},
                {"id": "n1", "score": 2.0},
                {"id": "n2", "score": 1.0},
            ]
            body = json.dumps({"results": hits}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def search_server() -> Iterator[SearchServer]:
    server = SearchServer()
    with serving(server):
        yield server


# ── a busy machine ───────────────────────────────────────────────────────────────────────────


@contextmanager
def busy_core() -> Iterator[subprocess.Popen[bytes]]:
    """A child process that keeps one core busy until the block ends."""
    child = subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
    try:
        yield child
    finally:
        child.terminate()
        child.wait(timeout=10)


# ── the project's files ──────────────────────────────────────────────────────────────────────


def write_testsets(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "engine.py").write_text(ENGINE, encoding="utf-8")
    (folder / "topics.tsv").write_text(
        "id\ttext\ttags\n"
        + "".join(f"{n}\ttopic {n}\t{'head' if n in HEAD else 'tail'}\n" for n in TOPICS),
        encoding="utf-8",
    )
    (folder / "topics-qrels.txt").write_text(
        "".join(f"{n} 0 d{n} 1\n{n} 0 n1 0\n{n} 0 n2 0\n" for n in TOPICS), encoding="utf-8"
    )
    docs = [("n1", 0, "miscellaneous notes"), ("n2", 0, "other notes")]
    for n in TOPICS:
        docs += [(f"d{n}", 1, f"topic {n} topic {n} manual"), (f"x{n}", 0, f"topic {n} appendix")]
        docs.append((f"y{n}", 0, "unrelated leaflet"))
    (folder / "topics-docs.jsonl").write_text(
        "".join(
            json.dumps({"id": d, "title": d, "text": f"document {d} GRADE={g} {text}"}) + "\n"
            for d, g, text in docs
        ),
        encoding="utf-8",
    )
    (folder / "catalog.tsv").write_text(
        "".join(f"c{n}\titem {n}\n" for n in ITEMS), encoding="utf-8"
    )
    (folder / "catalog-docs.jsonl").write_text(
        "".join(
            json.dumps({"id": d, "title": d, "text": f"document {d} GRADE={g} item"}) + "\n"
            for d, g in [("n1", 0), ("n2", 0), *((f"d{n}", 1) for n in ITEMS)]
        ),
        encoding="utf-8",
    )
    (folder / "catalog-qrels.txt").write_text(
        "".join(f"c{n} 0 d{n} 1\nc{n} 0 n1 0\nc{n} 0 n2 0\n" for n in ITEMS), encoding="utf-8"
    )


@dataclass
class Plan:
    """What evalplat.toml says on one night; the scenario edits it night by night."""

    modes: dict[str, str] = field(
        default_factory=lambda: {"prod": "good", "cand": "good", "exp": "good"}
    )
    remote: bool = True  # the http config
    lexical: bool = True  # the builtin config
    judge: bool = False  # [nightly] judge
    more_gates: bool = False  # RR@10, a tail segment gate and a latency gate
    target: bool = True  # lexical's P@5 target
    segment: str = "tail"  # the segment gate's tag
    interleaving: bool = False  # lexical's interleaved experiment against prod, gated
    fresh: bool = False  # the config ``fresh`` (new documents yN) and a P@5 target of it
    sweep: bool = False  # a weekly [[sweeps]] entry over lexical's operator on topics


def project_text(folder: Path, plan: Plan, *, search_url: str, hook: str, judge_url: str) -> str:
    python = "".join(
        f"""
[[configs]]
name = "{name}"
searcher = "python"
testsets = ["topics"]
concurrency = 2
{'compare_to = "prod"' if name == "cand" else ""}
[configs.params]
function = "engine:search"
path = "{folder}"
mode = "{mode}"
{"delay = 0.002" if name == "prod" else ""}
"""
        for name, mode in plan.modes.items()
    )
    lexical = """
[[configs]]
name = "lexical"
searcher = "builtin"
testsets = ["topics"]
[configs.params]
operator = "and"
"""
    remote = f"""
[[configs]]
name = "remote"
searcher = "http"
testsets = ["catalog"]
concurrency = 2
[configs.params]
url = "{search_url}"
query_params = {{ q = "{{{{ query }}}}", n = "{{{{ depth }}}}" }}
results_path = "results"
retries = 0
timeout = 5
"""
    gates = f"""
[[gates]]
metric = "RR@10"
max_drop = 0.01

[[gates]]
metric = "nDCG@10"
max_drop = 0.01
segment = "{plan.segment}"

[[gates]]
metric = "Latency(p=95)"
"""
    judge = '\n[nightly]\njudge = "stub"\n'
    preference = '\n[[gates]]\nmetric = "online:Preference"\nmax_drop = 0.02\n'
    experiment = '\n[[online.interleaving]]\ncandidate = "lexical"\nbaseline = "prod"\n'
    # lexical finds dN and xN for query N: P@5 is 0.2 judged, 0.4 if xN were relevant
    target = '\n[[targets]]\nmetric = "P@5"\nmin = 0.25\nconfig = "lexical"\n'
    # fresh finds dN and yN: P@5 is 0.2 judged, 0.4 if yN were relevant
    fresh = f"""
[[configs]]
name = "fresh"
searcher = "python"
testsets = ["topics"]
[configs.params]
function = "engine:search"
path = "{folder}"
mode = "fresh"
"""
    fresh_target = '\n[[targets]]\nmetric = "P@5"\nmin = 0.25\nconfig = "fresh"\n'
    sweep = (
        '\n[[sweeps]]\nconfig = "lexical"\ntestset = "topics"\n'
        'grid = { operator = ["or", "and"] }\nfolds = 2\nevery = "week"\n'
    )
    return f"""
[[testsets]]
name = "topics"
qrels = "topics-qrels.txt"
queries = "topics.tsv"
docs = "topics-docs.jsonl"

[[testsets]]
name = "catalog"
qrels = "catalog-qrels.txt"
queries = "catalog.tsv"
docs = "catalog-docs.jsonl"
{python}{lexical if plan.lexical else ""}{remote if plan.remote else ""}{fresh * plan.fresh}
[metrics]
names = ["nDCG@10", "P@5"]

[[gates]]
metric = "nDCG@10"
max_drop = 0.01

[[gates]]
metric = "online:CTR"
max_relative_drop = 0.05
{preference if plan.interleaving else ""}{gates if plan.more_gates else ""}\
{target if plan.target else ""}{fresh_target if plan.fresh else ""}{sweep if plan.sweep else ""}
[online]
baseline = "prod"
metrics = ["online:CTR"]
retire_after_days = 2
open_days = 1  # the planted online days open and resolve one day each (the day rule:
open_window = 1  # tests/nightly/test_night_online.py, test_night_interleaved.py)
resolve_days = 1
{experiment if plan.interleaving else ""}
[[judges]]
name = "stub"
url = "{judge_url}"
model = "stub-model"
concurrency = 2
timeout = 5
{judge if plan.judge else ""}
[[alerts]]
type = "webhook"
url = "{hook}"
backoff = 0.05  # a receiver that is down is retried without waiting seconds

[[alerts]]
type = "json"
path = "alerts.jsonl"

[reports]
dir = "site"
base_url = "{REPORTS_URL}"
"""


# ── interaction logs ─────────────────────────────────────────────────────────────────────────

GRADES = {
    "wing flutter": {"d1": 3, "d2": 1, "d3": 0, "d4": 2},
    "jet noise": {"d5": 2, "d6": 0, "d7": 3},
    "boundary layer": {"d8": 1, "d9": 0, "d10": 2, "d11": 0},
}


def ubi_log(path: Path, day: int, attention: dict[str, float], seed: int) -> Path:
    """One day (2026-03-DAY) of UBI events for the arms named in ``attention``."""
    rankings = {text: sorted(docs) for text, docs in GRADES.items()}
    arms = [Arm(config, rankings, attention=a) for config, a in attention.items()]
    log = write_ubi_log(
        path, arms, GRADES, sessions=1000, seed=seed, start=datetime(2026, 3, day, 8, tzinfo=UTC)
    )
    return log.path


def interleaved_log(path: Path, day: int, lean: float, seed: int) -> Path:
    """One day (2026-03-DAY) of interleaved searches, ``lexical``'s hits merged with ``prod``'s:
    600 sessions, a click on one of lexical's hits with probability ``lean`` (0.5: A/A)."""
    start = datetime(2026, 3, day, 8, tzinfo=UTC)
    return write_interleaved_log(path, "lexical", "prod", sessions=600, lean=lean, seed=seed,
                                 day=start, prefix="season")  # fmt: skip


# ── the index page ───────────────────────────────────────────────────────────────────────────


@dataclass
class IndexPage:
    rows: list[dict[str, str]] = field(default_factory=list)  # config rows: their data-* attrs
    row_links: list[list[str]] = field(default_factory=list)  # hrefs inside each config row
    alerts: list[dict[str, str]] = field(default_factory=list)  # alert rows: data-* attrs
    alert_links: dict[str, list[str]] = field(default_factory=dict)  # alert id → alert-link hrefs
    hrefs: list[str] = field(default_factory=list)  # every href on the page


class _IndexParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.page = IndexPage()
        self.row: dict[str, str] | None = None
        self.kind = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "tr":
            self.row, self.kind = None, ""
            if "data-alert-id" in values:
                self.row, self.kind = values, "alert"
                self.page.alerts.append(values)
                self.page.alert_links[values["data-alert-id"]] = []
            elif "data-config" in values and "data-verdict" in values:
                self.row, self.kind = values, "config"
                self.page.rows.append(values)
                self.page.row_links.append([])
        elif tag == "a" and "href" in values:
            self.page.hrefs.append(values["href"])
            if self.kind == "config":
                self.page.row_links[-1].append(values["href"])
            elif self.kind == "alert" and "alert-link" in values.get("class", "").split():
                assert self.row is not None
                self.page.alert_links[self.row["data-alert-id"]].append(values["href"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self.row, self.kind = None, ""


def read_index(path: Path) -> IndexPage:
    parser = _IndexParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.page


# ── rating in the app ────────────────────────────────────────────────────────────────────────


def rate_in_the_app(cli: Any, db_url: str, task: str, raters: dict[str, int]) -> None:
    """The team rates ``task`` through the app, served by a real uvicorn on 127.0.0.1: one
    invite per rater; each opens the link, posts its enter button (nonce), then grades every
    pair on their list with ``raters[name]`` (JSON, the cookie, the anti-forgery header)."""
    import re

    import httpx

    from ..rating.servers import rating_server

    def found(pattern: str, text: str) -> str:
        match = re.search(pattern, text)
        assert match, f"rating {task}: {pattern} not on the page"
        return match.group(1)

    with rating_server(db_url) as base:
        for rater, grade in raters.items():
            made = cli("rate", "invite", task, rater, "--base-url", base, "--db", db_url)
            assert made.exit_code == 0, made.stderr
            link = made.stdout.strip()
            with httpx.Client() as client:
                nonce = found(r'name="nonce" value="([^"]+)"', client.get(link).text)
                page = client.post(link, data={"nonce": nonce}, follow_redirects=True)
                while 'id="done"' not in page.text:
                    grade_url = found(r'data-grade-url="([^"]+)"', page.text)
                    csrf = found(r'data-csrf="([^"]+)"', page.text)
                    posted = client.post(
                        base + httpx.URL(grade_url).path, json={"grade": grade},
                        headers={"X-Evalplat-CSRF": csrf},
                    )  # fmt: skip
                    assert posted.status_code == 200, posted.text
                    page = client.get(f"{base}/tasks/{task}/", follow_redirects=True)
                assert page.status_code == 200
