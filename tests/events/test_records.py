"""Reading UBI and flat logs: canonical records, and one clear line for every bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalplat.cli import app
from evalplat.errors import InputError
from evalplat.events.records import parse_map, read_logs

UBI_QUERY = {"query_id": "q1", "client_id": "c1", "user_query": "jet", "timestamp":
             "2026-03-01T10:00:00+02:00", "query_response_hit_ids": ["d1", "d2"],
             "query_attributes": {"variant": "web@2", "session_id": "s1"}}  # fmt: skip
UBI_EVENT = {"action_name": "Click", "query_id": "q1", "session_id": "s1", "client_id": "c1",
             "timestamp": "2026-03-01T08:00:05Z", "event_attributes": {
                 "object": {"object_id": "d2"}, "position": {"ordinal": 2}}}  # fmt: skip


def _write(path: Path, *records: object) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_ubi_records_become_searches_and_events(tmp_path: Path) -> None:
    log = read_logs([_write(tmp_path / "ubi.jsonl", UBI_QUERY, UBI_EVENT, UBI_EVENT)])
    [search] = log.searches.values()
    assert (search.session_id, search.config, search.hit_ids) == ("s1", "web@2", ("d1", "d2"))
    assert search.timestamp == datetime(2026, 3, 1, 8, tzinfo=UTC)
    [event] = log.events.values()
    assert (event.action, event.object_id, event.position) == ("click", "d2", 2)
    assert len(event.event_id) == 64 and log.duplicates == 1  # content hash: same event twice


def test_flat_csv_through_a_column_map(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(
        "sid,qid,when,shown,arm,kind,doc,pos,stars\n"
        "s1,q1,2026-03-01T10:00:00Z,d1|d2 d3,web,,,,\n"
        "s1,q1,1772359205000,,,rating,d1,1,4.5\n",
        encoding="utf-8",
    )
    mapping = parse_map("session_id=sid,query_id=qid,timestamp=when,hit_ids=shown,config=arm,"
                        "action=kind,object_id=doc,position=pos,value=stars")  # fmt: skip
    log = read_logs([path], mapping=mapping)
    assert log.searches["q1"].hit_ids == ("d1", "d2", "d3")
    [event] = log.events.values()
    assert (event.action, event.value, event.position, event.session_id) == ("rating", 4.5, 1, "s1")


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({**UBI_QUERY, "timestamp": "2026-03-01T10:00:00"}, "has no time zone"),
        ({**UBI_QUERY, "timestamp": "yesterday"}, "is not ISO 8601"),
        ({**UBI_QUERY, "query_id": ""}, "missing query_id"),
        ({**UBI_QUERY, "query_response_hit_ids": ["d1", "d1"]}, "shown twice"),
        ({k: v for k, v in UBI_QUERY.items() if k != "client_id"} | {"query_attributes": {}},
         "neither a session_id nor a client_id"),
        ({**UBI_EVENT, "event_attributes": {"position": {"ordinal": 0}}}, "integer from 1"),
        ({**UBI_EVENT, "action_name": "two words"}, "action must be a word"),
        ({**UBI_EVENT, "event_attributes": "x"}, "must be an object"),
    ],
)  # fmt: skip
def test_bad_records_name_file_and_line(tmp_path: Path, record: dict, problem: str) -> None:
    path = _write(tmp_path / "log.jsonl", UBI_QUERY, record)
    with pytest.raises(InputError, match=problem) as raised:
        read_logs([path])
    assert str(raised.value).startswith(f"{path} line 2: ")


def test_map_names_only_known_columns() -> None:
    with pytest.raises(InputError, match="unknown column 'sess'"):
        parse_map("sess=sid")


def test_cli_import_of_a_bad_log_exits_2_with_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'e.db'}"
    CliRunner().invoke(app, ["init", "--db", url], catch_exceptions=False)
    path = tmp_path / "log.jsonl"
    path.write_text('{"query_id": "q", "session_id": "s", "timestamp": "2026-03-01"}\nnot json\n')
    result = CliRunner().invoke(app, ["events", "import", str(path), "--db", url])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {path} line 1: timestamp '2026-03-01' has no time zone (add Z or +hh:mm)"
    ]
