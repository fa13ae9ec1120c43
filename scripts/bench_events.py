"""Benchmark online scoring at scale: a 10M-event UBI log attached in place and aggregated.

1. **generate** a seeded UBI log as two Parquet files (query records, event records), users of
   the cascade click model of ``evalplat.events.synthetic`` vectorised over searches: two A/B
   arms (attention 1.0 and 0.9), ten hits per search, seven days, until ``--events`` events
   (an ``impression`` event for each hit the user examines, ``click`` and ``purchase``);
2. **attach + aggregate**: a fresh process attaches both files to a new SQLite database
   (``Store.attach_events``: schema and values checked) and computes every online measure per
   config version and UTC day (``Store.online_scores``, DuckDB over the files): the KPIs;
3. **attach + score**: the same, storing the per-session values as online runs
   (``evalplat events score``' path), for comparison;
4. **stored import** at ``--stored-events`` (smaller): ``Store.import_events`` of the same
   model's log as UBI JSON lines, then the KPIs by the SQL engine and by the NumPy kernels.

Each step is one process; the figures are its wall time and its peak resident memory (the
child's ``ru_maxrss`` from ``os.wait4``), and its CPU time (user + system). Run from the
repository root::

    python scripts/bench_events.py [--events 10000000] [--stored-events 200000] [--repeats 3]
        [--steps aggregate,score]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from evalplat.events.synthetic import CascadeModel

ARMS = {"web@1": 1.0, "web@2": 0.9}  # config reference -> attention
HITS = 10
TEXTS = 2000
DAYS = 7
START = 1_772_352_000  # 2026-03-01T08:00:00Z
CHUNK = 400_000  # searches generated at once


def generate(folder: Path, events_wanted: int, seed: int = 7) -> tuple[Path, Path, int, int]:
    """The query and event Parquet files; returns them and the searches and events written."""
    rng = np.random.default_rng(seed)
    model = CascadeModel()
    docs = pa.array([f"d{n}" for n in range(TEXTS * HITS)])
    grades = rng.choice(4, size=(TEXTS, HITS), p=[0.5, 0.25, 0.15, 0.1])
    attraction = np.array([model.attraction.get(g, 0.0) for g in range(4)])
    purchase = np.array([model.purchase.get(g, 0.0) for g in range(4)])
    queries_path, events_path = folder / "ubi_queries.parquet", folder / "ubi_events.parquet"
    qwriter = ewriter = None
    searches = events = 0
    while events < events_wanted:
        n = CHUNK
        ids = np.arange(searches, searches + n)
        session = ids // 3  # three searches a session, on one arm and day
        arm = session % len(ARMS)
        text = rng.integers(0, TEXTS, size=n)
        day = (session // len(ARMS)) % DAYS
        t = START + day * 86400.0 + (session // (len(ARMS) * DAYS)) % 40_000 + (ids % 3) * 90.0
        looks = rng.random(n) < np.array(list(ARMS.values()))[arm]
        going = looks.copy()
        rows: list[tuple[np.ndarray, np.ndarray, str, np.ndarray]] = []
        clock = t.copy()
        for position in range(HITS):
            g = grades[text, position]
            clock = clock + 2.0
            rows.append((np.flatnonzero(going), clock[going] - 1.0, "impression",
                         np.full(going.sum(), position)))  # fmt: skip
            click = going & (rng.random(n) < attraction[g])
            rows.append((np.flatnonzero(click), clock[click], "click",
                         np.full(click.sum(), position)))  # fmt: skip
            bought = click & (rng.random(n) < purchase[g])
            rows.append((np.flatnonzero(bought), clock[bought] + 20.0, "purchase",
                         np.full(bought.sum(), position)))  # fmt: skip
            stop = np.where(click, rng.random(n) < model.stop_after_click,
                            rng.random(n) >= model.patience)  # fmt: skip
            going &= ~stop
        qid = pa.array(np.char.add("q", ids.astype(str)))
        sid = pa.array(np.char.add("s", session.astype(str)))
        flat = docs.take(pa.array((text[:, None] * HITS + np.arange(HITS)).ravel()))
        offsets = pa.array(np.arange(0, (n + 1) * HITS, HITS, dtype=np.int32))
        qtable = pa.table({
            "query_id": qid, "session_id": sid, "client_id": sid,
            "user_query": pa.array(np.char.add("text ", text.astype(str))),
            "timestamp": pa.array((t * 1e6).astype("int64"), pa.int64()).cast(
                pa.timestamp("us", tz="UTC")),
            "query_response_hit_ids": pa.ListArray.from_arrays(offsets, flat),
            "variant": pa.array(np.array(list(ARMS))[arm]),
        })  # fmt: skip
        which = np.concatenate([r[0] for r in rows])
        etable = pa.table({
            "action_name": pa.array(np.concatenate([np.full(len(r[0]), r[2]) for r in rows])),
            "query_id": qid.take(pa.array(which)), "session_id": sid.take(pa.array(which)),
            "timestamp": pa.array((np.concatenate([r[1] for r in rows]) * 1e6).astype("int64"),
                                  pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            "event_attributes": pa.StructArray.from_arrays([
                pa.StructArray.from_arrays(
                    [flat.take(pa.array(text[which] * HITS + np.concatenate(
                        [r[3] for r in rows])))], ["object_id"]),
                pa.StructArray.from_arrays(
                    [pa.array(np.concatenate([r[3] for r in rows]) + 1, pa.int64())],
                    ["ordinal"]),
            ], ["object", "position"]),
        })  # fmt: skip
        if qwriter is None:
            qwriter = pq.ParquetWriter(queries_path, qtable.schema)
            ewriter = pq.ParquetWriter(events_path, etable.schema)
        qwriter.write_table(qtable)
        ewriter.write_table(etable)  # type: ignore[union-attr]
        searches += n
        events += etable.num_rows
    for writer in (qwriter, ewriter):
        if writer is not None:
            writer.close()
    return queries_path, events_path, searches, events


def write_jsonl(folder: Path, queries: Path, events: Path, limit: int) -> Path:
    """The first ``limit`` events and their searches as UBI JSON lines (the import path)."""
    etable = pq.read_table(events).slice(0, limit)
    wanted = set(etable.column("query_id").to_pylist())
    qtable = pq.read_table(queries)
    keep = [i for i, q in enumerate(qtable.column("query_id").to_pylist()) if q in wanted]
    path = folder / "ubi.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in qtable.take(keep).to_pylist():
            handle.write(json.dumps({
                "query_id": row["query_id"], "client_id": row["client_id"],
                "user_query": row["user_query"], "timestamp": row["timestamp"].isoformat(),
                "query_response_hit_ids": row["query_response_hit_ids"],
                "query_attributes": {"session_id": row["session_id"], "variant": row["variant"]},
            }) + "\n")  # fmt: skip
        for row in etable.to_pylist():
            handle.write(json.dumps({
                "action_name": row["action_name"], "query_id": row["query_id"],
                "session_id": row["session_id"], "timestamp": row["timestamp"].isoformat(),
                "event_attributes": row["event_attributes"],
            }) + "\n")  # fmt: skip
    return path


CHILD = """
import sys, time
begin = time.perf_counter()
from pathlib import Path
from evalplat.store import Store
step, url, *files = sys.argv[1:]
store = Store.init(url)
store.add_config("web", "builtin")
store.add_config("web", "builtin", {"operator": "and"})
print(f"init_seconds={time.perf_counter() - begin:.2f}")
started = time.perf_counter()
if step == "import":
    store.import_events([Path(f) for f in files])
    loaded = time.perf_counter()
    for engine in ("sql", "pandas"):
        begun = time.perf_counter()
        scored = store.online_scores(engine=engine)
        print(f"{engine}_seconds={time.perf_counter() - begun:.2f}")
    print(f"import_seconds={loaded - started:.2f}")
else:
    store.attach_events([Path(f) for f in files])
    attached = time.perf_counter()
    if step == "aggregate":
        scored = store.online_scores()
    else:
        scored = [(r.config_version, r) for r in store.score_online()]
    print(f"attach_seconds={attached - started:.2f}")
    print(f"{step}_seconds={time.perf_counter() - attached:.2f}")
print(f"windows={len(scored)}")
"""


def measure(step: str, url: str, files: list[Path]) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS in MiB, the child's output) of one step as a fresh
    process. On a busy machine the CPU time says more than the wall time."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, step, url, *map(str, files)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    output = child.stdout.read() if child.stdout else ""
    if status != 0:
        raise SystemExit(f"{step} failed (status {status})")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, " ".join(output.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--stored-events", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--steps",
        default="aggregate,score",
        help="attach steps to run: aggregate, score (comma-separated)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-events-") as scratch:
        folder = Path(scratch)
        began = time.perf_counter()
        queries, events, n_searches, n_events = generate(folder, args.events)
        size = (queries.stat().st_size + events.stat().st_size) / 2**20
        print(f"log: {n_events:,} events, {n_searches:,} searches, {size:.0f} MiB Parquet "
              f"(generated in {time.perf_counter() - began:.1f} s)")  # fmt: skip
        print(f"{'step':<22} {'wall s':>8} {'cpu s':>7} {'peak MiB':>9}  detail")
        for step in [s for s in args.steps.split(",") if s]:
            for n in range(args.repeats):
                url = f"sqlite:///{folder / f'{step}{n}.db'}"
                wall, cpu, peak, detail = measure(step, url, [queries, events])
                print(f"attach+{step:<15} {wall:>8.2f} {cpu:>7.2f} {peak:>9.0f}  {detail}")
        if args.stored_events:
            log = write_jsonl(folder, queries, events, args.stored_events)
            for n in range(args.repeats):
                url = f"sqlite:///{folder / f'import{n}.db'}"
                wall, cpu, peak, detail = measure("import", url, [log])
                label = f"import {args.stored_events:,}"
                print(f"{label:<22} {wall:>8.2f} {cpu:>7.2f} {peak:>9.0f}  {detail}")


if __name__ == "__main__":
    main()
