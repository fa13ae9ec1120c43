"""A planted engine for sweeps: how good each setting is, known in advance.

Queries ``topic N`` (N = 0..59) each have one relevant document ``dN``. The engine ranks ``dN``
first when the setting "knows" the query, else an irrelevant ``x``; so P@1 is 1 or 0:

- ``skill`` (0..1): knows a query when a hash of the query falls under ``skill``, the same
  queries for every setting with the same skill (the baseline has skill 0.4: P@1 0.483);
- ``luck`` (an integer): knows a query when a hash of (luck, query) falls under 0.45, a coin
  flipped anew for every setting: twenty of them are twenty noisy settings all truly worse than
  the baseline, and the best of them looks better than the baseline by chance alone.

``PLANTED_STOP=SKILL:QUERY`` in the environment makes the setting of that skill raise
``KeyboardInterrupt`` (as Ctrl-C does) when it is sent that query text.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

QUERIES = 60


def _unit(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def search(query: str, depth: int, skill: float = 0.5, luck: int = -1, **_: Any) -> list[Any]:
    if os.environ.get("PLANTED_STOP") == f"{skill}:{query}":
        raise KeyboardInterrupt
    n = query.split()[-1]
    knows = _unit(f"{luck}:{n}") < 0.45 if luck >= 0 else _unit(n) < float(skill)
    return [(f"d{n}" if knows else "x", 1.0)][:depth]


def rows() -> tuple[list[tuple[str, str]], list[tuple[str, str, int]]]:
    """The test set: (query id, text) and (query id, doc id, grade)."""
    queries = [(f"q{n}", f"topic {n}") for n in range(QUERIES)]
    qrels = [(f"q{n}", f"d{n}", 1) for n in range(QUERIES)]
    return queries, qrels
