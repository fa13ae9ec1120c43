"""Seeded synthetic UBI logs: two arms, one search per session, a click with a given rate."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path


def write_ubi_log(
    path: Path, arms: dict[str, float], *, sessions: int, seed: int, days: int = 1
) -> Path:
    """Each arm (config reference → click-through rate) gets ``sessions`` sessions per day."""
    rnd = random.Random(seed)
    start = datetime(2026, 3, 1, 8, tzinfo=UTC)
    lines = []
    for day in range(days):
        for arm, rate in arms.items():
            for n in range(sessions):
                sid = f"{arm}-{day}-{n}"
                when = start + timedelta(days=day, seconds=7 * n)
                lines.append(json.dumps({
                    "query_id": f"q-{sid}", "client_id": f"c-{sid}", "session_id": sid,
                    "user_query": "wing flutter", "timestamp": when.isoformat(),
                    "query_response_hit_ids": ["d1", "d2", "d3"],
                    "query_attributes": {"variant": arm},
                }))  # fmt: skip
                if rnd.random() < rate:
                    lines.append(json.dumps({
                        "action_name": "click", "query_id": f"q-{sid}", "session_id": sid,
                        "client_id": f"c-{sid}",
                        "timestamp": (when + timedelta(seconds=3)).isoformat(),
                        "event_attributes": {"object": {"object_id": "d1"},
                                             "position": {"ordinal": rnd.randint(1, 3)}},
                    }))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
