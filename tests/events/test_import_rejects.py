"""``events import --max-invalid N``: up to N bad lines set aside in a rejects file next to the
input and the rest imported; one more refuses the whole import, as without the option."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from evalplat.store import Store

from .logs import cascade_records, table_counts, write_jsonl, write_parquet

SEARCH = {"query_id": "q1", "session_id": "s1", "timestamp": "2026-03-01T10:00:00Z",
          "query_response_hit_ids": ["d1", "d2"], "config": "web"}  # fmt: skip
CLICK = {"action_name": "click", "query_id": "q1", "session_id": "s1",
         "timestamp": "2026-03-01T10:00:05Z",
         "event_attributes": {"position": {"ordinal": 2}}}  # fmt: skip
MESSY = [
    json.dumps(SEARCH),
    json.dumps(SEARCH | {"query_id": "q2", "query_response_hit_ids": ["d1", "d2", "d1"]}),
    json.dumps(CLICK),
    json.dumps(SEARCH | {"query_id": "q3", "timestamp": "2026-03-01 10:00"}),
    json.dumps(SEARCH | {"query_id": "q4"}),
]


def _messy(path: Path) -> Path:
    path.write_text("\n".join(MESSY) + "\n", encoding="utf-8")
    return path


def test_bad_lines_within_the_limit_are_set_aside(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.add_config("web", "builtin")
    log = _messy(tmp_path / "log.jsonl")
    result = cli("events", "import", str(log), "--max-invalid", "2", "--json", "--db", db_url)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    rejects = tmp_path / "log.jsonl.rejects.jsonl"
    assert (summary["searches"], summary["events"], summary["lines"], summary["rejected"]) == (
        2, 1, 3, 2)  # fmt: skip
    assert summary["rejects_files"] == [str(rejects)]
    lines = [json.loads(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    assert [(r["file"], r["line"]) for r in lines] == [(str(log), 2), (str(log), 4)]
    assert "shown twice" in lines[0]["reason"] and "no time zone" in lines[1]["reason"]
    assert table_counts(db_url)["online_query"] == 2
    assert table_counts(db_url)["online_event"] == 1


def test_one_bad_line_too_many_refuses_everything(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.add_config("web", "builtin")
    log = _messy(tmp_path / "log.jsonl")
    before = table_counts(db_url)
    result = cli("events", "import", str(log), "--max-invalid", "1", "--db", db_url)
    assert result.exit_code == 2
    [message] = result.stderr.strip().splitlines()
    assert message.startswith(f"error: {log} line 2: hit id 'd1' is shown twice")
    assert f"more than --max-invalid 1 bad lines, the next at {log} line 4" in message
    assert table_counts(db_url) == before
    assert not (tmp_path / "log.jsonl.rejects.jsonl").exists()
    result = cli("events", "import", str(log), "--db", db_url)  # the default: no bad line
    assert result.exit_code == 2 and "more than" not in result.stderr
    result = cli("events", "import", str(log), "--max-invalid", "-1", "--db", db_url)
    assert (result.exit_code, result.stderr.strip()) == (
        2, "error: --max-invalid must be at least 0, got -1")  # fmt: skip


def test_console_summary_and_a_clean_import_removes_old_rejects(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    cli("init", "--db", url)
    with Store.open(url) as store:
        store.add_config("web", "builtin")
    log = _messy(tmp_path / "log.jsonl")
    result = cli("events", "import", str(log), "--max-invalid", "5", "--db", url)
    assert result.stdout.splitlines() == [
        "imported 2 searches, 1 event (0 duplicates skipped)",
        "lines: 3 read, 2 rejected",
        f"rejected lines written to {tmp_path / 'log.jsonl.rejects.jsonl'}",
    ]
    log.write_text(MESSY[0] + "\n", encoding="utf-8")
    result = cli("events", "import", str(log), "--max-invalid", "5", "--db", url)
    assert result.stdout.splitlines()[1:] == ["lines: 1 read, 0 rejected"]
    assert not (tmp_path / "log.jsonl.rejects.jsonl").exists()


def test_a_symlink_planted_at_the_rejects_path_is_replaced_not_written_through(
    cli: Callable[..., Any], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    cli("init", "--db", url)
    with Store.open(url) as store:
        store.add_config("web", "builtin")
    log = _messy(tmp_path / "log.jsonl")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    rejects = tmp_path / "log.jsonl.rejects.jsonl"
    rejects.symlink_to(victim)
    result = cli("events", "import", str(log), "--max-invalid", "5", "--db", url)
    assert result.exit_code == 0, result.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not rejects.is_symlink()
    assert [json.loads(line)["line"] for line in rejects.read_text().splitlines()] == [2, 4]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".log")) == []


def test_csv_and_parquet_rows_are_set_aside_by_line_and_row(store: Store, tmp_path: Path) -> None:
    store.add_config("web", "builtin")
    flat = tmp_path / "flat.csv"
    flat.write_text("query_id,session_id,timestamp,hit_ids,config\n"
                    "f1,s,2026-03-01T10:00:00Z,d1|d2,web\n"
                    "f2,s,2026-03-01T10:00:00Z,d1|d2|d1,web\n"
                    "f3,s,2026-03-01T\u0661\u0660:00:00Z,d1,web\n", encoding="utf-8")  # fmt: skip
    stamp = pa.timestamp("ms", tz="UTC")
    rows = tmp_path / "rows.parquet"
    pq.write_table(pa.table({
        "query_id": ["p1", "p2", "p3"], "session_id": ["s", None, "s"],
        "timestamp": pa.array([1772359200000, 1772359200000, None], stamp),
        "hit_ids": [["d1"], ["d2"], ["d3"]], "config": ["web", "web", "web"],
    }), rows)  # fmt: skip
    outcome = store.import_events([flat, rows], max_invalid=4)
    assert (outcome.searches, outcome.lines, outcome.rejected) == (2, 2, 4)
    found = [json.loads(line) for p in outcome.rejects_files
             for line in Path(p).read_text(encoding="utf-8").splitlines()]  # fmt: skip
    assert [(Path(r["file"]).name, r["line"]) for r in found] == [
        ("flat.csv", 3), ("flat.csv", 4), ("rows.parquet", 2), ("rows.parquet", 3)]  # fmt: skip
    assert "not ASCII" in found[1]["reason"] and "missing timestamp" in found[3]["reason"]


def test_parquet_import_reads_what_the_jsonl_log_holds(store: Store, tmp_path: Path) -> None:
    store.add_config("web", "builtin")
    store.add_config("web", "builtin", {"operator": "and"})
    records = cascade_records(sessions=20, days=1)
    queries, _ = write_parquet(tmp_path, records)
    from_parquet = store.import_events([queries])
    searches = sum(1 for r in records if "action_name" not in r)
    assert (from_parquet.searches, from_parquet.lines, from_parquet.unknown_configs) == (
        searches, searches, {})  # fmt: skip
    again = store.import_events([write_jsonl(tmp_path / "log.jsonl", records)])
    assert (again.searches, again.duplicates) == (0, searches)
