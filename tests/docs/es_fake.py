"""A small Elasticsearch-compatible search server on 127.0.0.1, for the pages that run commands
against an engine (docs/adoption.md).

It holds a product catalogue (``CATALOGUE``) and answers ``POST /INDEX/_search`` with the body
the ``elasticsearch`` preset sends: a ``multi_match`` of the query over boosted ``fields``
(``title^2``), scored by the boosted sum of the idf of each query word a field contains, ties by
id, ``size`` hits as ``{"hits": {"hits": [{"_id", "_score"}]}}``. ``broken = True`` plays an
engine change that hurts: each answer's top 10 comes back in reverse order. ``grade`` rates a
product for a query the way a rater of this catalogue would (0-3).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..alerts.servers import serving

_KINDS = {
    "running shoes": ["trail", "road", "waterproof", "lightweight"],
    "rain jacket": ["waterproof", "packable", "hooded", "insulated"],
    "wool socks": ["hiking", "running", "merino", "thick"],
    "hiking boots": ["waterproof", "leather", "lightweight", "winter"],
    "yoga mat": ["thick", "travel", "cork", "non-slip"],
    "water bottle": ["insulated", "steel", "filter", "collapsible"],
    "sleeping bag": ["down", "winter", "lightweight", "synthetic"],
    "camping tent": ["two-person", "ultralight", "family", "winter"],
}


# (id, title, description): ten products of each kind (each feature alone, and each pair of
# them), whose description names one more feature; and a gift set for each kind, whose
# description only mentions it (a rater grades them lower)
def _catalogue() -> list[tuple[str, str, str]]:
    products = []
    for kind, features in _KINDS.items():
        combos = [[f] for f in features] + [
            [a, b] for i, a in enumerate(features) for b in features[i + 1 :]
        ]
        for combo in combos:
            extra = next(f for f in features[::-1] if f not in combo)
            title = f"{' '.join(combo)} {kind}"
            products.append((title, f"{kind} for the trail, and {extra} too"))
    products += [(f"{kind.split()[0]} gift set", f"goes well with {kind}") for kind in _KINDS]
    return [(f"p{n:03d}", title, text) for n, (title, text) in enumerate(products, start=1)]


CATALOGUE = _catalogue()
QUERIES = [
    "waterproof running shoes",
    "lightweight hiking boots",
    "insulated water bottle",
    "winter sleeping bag",
    "thick yoga mat",
    "merino wool socks",
    "packable rain jacket",
    "ultralight camping tent",
    "trail running shoes",
    "waterproof rain jacket",
    "winter camping tent",
    "steel water bottle",
]


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9-]+", text.lower())


def grade(query: str, doc_id: str) -> int:
    """3: the title has every word; 2: title and description have them all; 1: the title has
    some; 0: none."""
    title, description = next((t, d) for i, t, d in CATALOGUE if i == doc_id)
    wanted, in_title = set(words(query)), set(words(title))
    if wanted <= in_title:
        return 3
    if wanted <= in_title | set(words(description)):
        return 2
    return 1 if wanted & in_title else 0


def search(query: str, fields: list[str], size: int) -> list[tuple[str, float]]:
    boosts = {}
    for field in fields or ["title", "description"]:
        name, _, boost = field.partition("^")
        boosts[name] = float(boost or 1)
    docs = [
        {"title": set(words(t)), "description": set(words(d)), "id": i} for i, t, d in CATALOGUE
    ]
    scored = []
    for doc in docs:
        score = 0.0
        for name, boost in boosts.items():
            for word in set(words(query)):
                if word in doc[name]:
                    df = sum(1 for other in docs if word in other[name])
                    score += boost * math.log(1 + len(docs) / df)
        if score > 0:
            scored.append((str(doc["id"]), round(score, 6)))
    scored.sort(key=lambda hit: (-hit[1], hit[0]))
    return scored[:size]


class _Handler(BaseHTTPRequestHandler):
    server: FakeElasticsearch

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self.path.endswith("/_search"):
            return self._send(404, {"error": "no such index"})
        match = body["query"]["multi_match"]
        hits = search(match["query"], match.get("fields", []), int(body.get("size", 10)))
        if self.server.broken:
            top = [doc for doc, _ in hits[:10]][::-1]
            hits = [(doc, score) for doc, (_, score) in zip(top, hits, strict=False)] + hits[10:]
        with self.server.lock:
            self.server.searches += 1
        self._send(200, {"took": 1, "hits": {"hits": [{"_id": d, "_score": s} for d, s in hits]}})

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeElasticsearch(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.broken = False
        self.searches = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def fake_elasticsearch() -> Iterator[FakeElasticsearch]:
    server = FakeElasticsearch()
    with serving(server, 0.05):
        yield server
