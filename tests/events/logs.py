"""One cascade-model log written three ways: UBI JSON lines, Parquet files, warehouse rows."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from evalplat.events.synthetic import Arm, ubi_records


def cascade_records(sessions: int = 120, days: int = 2, seed: int = 5) -> list[dict[str, Any]]:
    rankings = {"wing": ["d1", "d2", "d3", "d4"], "flow": ["d5", "d1", "d6"], "none": []}
    grades = {"wing": {"d1": 3, "d3": 1}, "flow": {"d6": 2, "d1": 1}}
    arms = [Arm("web@1", rankings, attention=0.9), Arm("web@2", rankings, attention=0.7)]
    return list(ubi_records(arms, grades, sessions=sessions, seed=seed, days=days,
                            max_searches=3))  # fmt: skip


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def searches_and_events(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], ...]:
    """Flat rows: (searches, events) with canonical column names."""
    searches, events = [], []
    for r in records:
        when = datetime.fromisoformat(r["timestamp"])
        if "action_name" in r:
            events.append({"query_id": r["query_id"], "action": r["action_name"],
                           "session_id": r["session_id"], "timestamp": when,
                           "position": r["event_attributes"]["position"]["ordinal"],
                           "value": None})  # fmt: skip
        else:
            searches.append({"query_id": r["query_id"],
                             "session_id": r["query_attributes"]["session_id"],
                             "timestamp": when, "config": r["query_attributes"]["variant"],
                             "hit_ids": r["query_response_hit_ids"],
                             "hits": len(r["query_response_hit_ids"])})  # fmt: skip
    return searches, events


def write_parquet(folder: Path, records: list[dict[str, Any]]) -> tuple[Path, Path]:
    """UBI-named Parquet files: query records (``variant``, ``query_response_hit_ids``) and
    event records (``action_name``, ``event_attributes.position.ordinal``)."""
    searches, events = searches_and_events(records)
    stamp = pa.timestamp("us", tz="UTC")
    queries = pa.table({
        "query_id": [s["query_id"] for s in searches],
        "session_id": [s["session_id"] for s in searches],
        "timestamp": pa.array([s["timestamp"] for s in searches], stamp),
        "variant": [s["config"] for s in searches],
        "query_response_hit_ids": pa.array([s["hit_ids"] for s in searches], pa.list_(pa.string())),
    })  # fmt: skip
    positions = [{"position": {"ordinal": e["position"]}} for e in events]
    table = pa.table({
        "action_name": [e["action"] for e in events],
        "query_id": [e["query_id"] for e in events],
        "timestamp": pa.array([e["timestamp"] for e in events], stamp),
        "event_attributes": pa.array(positions),
    })  # fmt: skip
    q, e = folder / "queries.parquet", folder / "events.parquet"
    pq.write_table(queries, q)
    pq.write_table(table, e)
    return q, e


def table_counts(url: str) -> dict[str, int]:
    """Row counts of every table: what a refused import must leave exactly as it was."""
    from sqlalchemy import func, select

    from evalplat.db.engine import create_db_engine
    from evalplat.db.metadata import METADATA

    engine = create_db_engine(url)
    with engine.connect() as connection:
        counts = {
            t.name: connection.execute(select(func.count()).select_from(t)).scalar_one()
            for t in METADATA.sorted_tables
        }
    engine.dispose()
    return counts
