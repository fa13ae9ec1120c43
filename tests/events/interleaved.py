"""Seeded interleaved UBI logs: two configs' hits merged per search, clicks leaning one way."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


def interleaved_records(
    candidate: str,
    baseline: str,
    *,
    sessions: int,
    lean: float,
    seed: int,
    day: datetime | None = None,
    method: str = "team_draft",
    prefix: str = "i",
) -> list[dict[str, Any]]:
    """UBI records of ``sessions`` sessions of one or two searches, each showing four hits
    drafted from both configs; a search gets a click with probability 0.7, on one of the
    candidate's hits with probability ``lean`` (0.5: an A/A log)."""
    rnd = random.Random(seed)
    start = day or datetime(2026, 3, 1, 8, tzinfo=UTC)
    records: list[dict[str, Any]] = []
    for n in range(sessions):
        sid = f"{prefix}-{start.date().isoformat()}-{n}"
        for k in range(rnd.choice((1, 2))):
            qid = f"{sid}-{k}"
            when = start + timedelta(seconds=11 * n + 5 * k)
            first, second = (candidate, baseline) if rnd.random() < 0.5 else (baseline, candidate)
            teams = [first, second, second, first]
            hits = [f"d{rnd.randint(1, 50)}-{i}" for i in range(4)]
            attributes: dict[str, Any] = {"session_id": sid, "interleaving": method,
                                          "teams": teams}  # fmt: skip
            if method == "balanced":
                attributes["ranks"] = {first: [1, None, None, 2], second: [None, 1, 2, None]}
            records.append({"query_id": qid, "client_id": f"c-{sid}", "user_query": "wing",
                            "timestamp": when.isoformat(), "query_response_hit_ids": hits,
                            "query_attributes": attributes})  # fmt: skip
            if rnd.random() >= 0.7:
                continue
            side = candidate if rnd.random() < lean else baseline
            position = rnd.choice([i for i, t in enumerate(teams, start=1) if t == side])
            records.append({"action_name": "click", "query_id": qid, "session_id": sid,
                            "client_id": f"c-{sid}",
                            "timestamp": (when + timedelta(seconds=2)).isoformat(),
                            "event_attributes": {"object": {"object_id": hits[position - 1]},
                                                 "position": {"ordinal": position}}})  # fmt: skip
    return records


def write_interleaved_log(path: Path, candidate: str, baseline: str, **options: Any) -> Path:
    records = interleaved_records(candidate, baseline, **options)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
