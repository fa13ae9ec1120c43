"""Logs that Python's parsers choke on, hit lists with holes, digits of other scripts: each is one
line naming the file and line, never a traceback, and the database is left as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalplat.errors import InputError
from evalplat.events.records import read_logs
from evalplat.store import Store

from .logs import table_counts

GOOD = {"query_id": "q0", "session_id": "s", "timestamp": "2026-03-01T10:00:00Z",
        "query_response_hit_ids": ["d1"], "config": "web"}  # fmt: skip
EVENT = {"action_name": "click", "query_id": "q0", "session_id": "s",
         "timestamp": "2026-03-01T10:00:05Z"}  # fmt: skip


def _arabic(digits: str) -> str:
    """The same number in Arabic-Indic digits (U+0660 to U+0669)."""
    return digits.translate({ord(str(d)): 0x660 + d for d in range(10)})


def _line(**changes: Any) -> str:
    return json.dumps({**GOOD, "query_id": "q1", **changes}, ensure_ascii=False)


HOSTILE = {
    "an integer of 5000 digits": ('{"query_id": "q1", "n": ' + "7" * 5000 + "}",
                                  "more than 4300 digits"),
    "100k-deep nesting": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "100k-deep value": ('{"query_id": "q1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
                        "nested too deeply"),
    "year 1 moved to UTC": (_line(timestamp="0001-01-01T00:30:00+01:00"), "out of range"),
    "year 9999 moved to UTC": (_line(timestamp="9999-12-31T23:00:00-05:00"), "out of range"),
    "epoch ms of 40 digits": (_line(timestamp="9" * 40), "out of range"),
    "epoch ms as a huge number": (_line(timestamp=10**300), "out of range"),
    "Arabic-Indic date": (_line(timestamp=_arabic("2026-03-01") + "T10:00:00Z"), "not ASCII"),
    "Arabic-Indic epoch ms": (_line(timestamp=_arabic("1772359205000")), "not ASCII"),
    "fullwidth digits": (_line(timestamp="\uff12\uff10\uff12\uff16-03-01T10:00:00Z"), "not ASCII"),
    "a null hit": (_line(query_response_hit_ids=["184", 0, None, "", 29]),
                   "hit id at position 3 is null"),
    "an empty hit": (_line(query_response_hit_ids=["184", "", 29]), "position 2 is empty"),
    "a boolean hit": (_line(query_response_hit_ids=["184", True]), "position 2 must be text"),
    "a hit shown twice": (_line(query_response_hit_ids=["a", "b", "a"]), "positions 1 and 3"),
    "a huge value": (json.dumps({**EVENT, "event_attributes": {"value": 10**400}}),
                     "value must be a finite number"),
    "Arabic-Indic value": (json.dumps({**EVENT, "event_attributes": {"value": "\u0664"}}),
                           "value must be a finite number"),
    "a config with a control character": (_line(config="w\u0085eb"), "control character"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_lines_are_one_error_naming_file_and_line(tmp_path: Path, case: str) -> None:
    text, problem = HOSTILE[case]
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + text + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=problem) as raised:
        read_logs([path])
    assert str(raised.value).startswith(f"{path} line 2: ")
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 400


def test_hit_positions_are_kept_as_logged(tmp_path: Path) -> None:
    """An integer id is its digits, 0 included (as 29 is): no position is dropped."""
    path = tmp_path / "log.jsonl"
    path.write_text(_line(query_response_hit_ids=["184", 0, "7", 29]) + "\n", encoding="utf-8")
    assert read_logs([path]).searches["q1"].hit_ids == ("184", "0", "7", "29")


def test_flat_hit_lists_refuse_an_empty_place(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    header = "query_id,session_id,timestamp,hit_ids\n"
    path.write_text(header + 'q1,s,2026-03-01T10:00:00Z,"[""d1"", 0, ""d3""]"\n'
                    "q2,s,2026-03-01T10:00:00Z,d1 | d2  d3\n", encoding="utf-8")  # fmt: skip
    log = read_logs([path])
    assert log.searches["q1"].hit_ids == ("d1", "0", "d3")
    assert log.searches["q2"].hit_ids == ("d1", "d2", "d3")
    path.write_text(header + "q1,s,2026-03-01T10:00:00Z,d1||d3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: hit id at position 2 is empty"):
        read_logs([path])


def test_a_csv_field_over_the_parser_limit(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("query_id,session_id,timestamp,user_query\n"
                    "q1,s,2026-03-01T10:00:00Z,wing\n"
                    f"q2,s,2026-03-01T10:00:00Z,{'a' * 140_000}\n", encoding="utf-8")  # fmt: skip
    with pytest.raises(InputError, match=f"^{path} line 3: malformed CSV: field larger"):
        read_logs([path])


def test_cli_refusals_leave_the_database_as_it_was(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.add_config("web", "builtin")
        store.import_events([_write(tmp_path / "first.jsonl", json.dumps(GOOD))])
    before = table_counts(db_url)
    for case in ("an integer of 5000 digits", "100k-deep nesting", "year 1 moved to UTC",
                 "a null hit", "Arabic-Indic epoch ms"):  # fmt: skip
        path = _write(tmp_path / "log.jsonl", _line(query_id="q9"), HOSTILE[case][0])
        result = cli("events", "import", str(path), "--db", db_url)
        assert result.exit_code == 2, case
        [message] = result.stderr.strip().splitlines()
        assert message.startswith(f"error: {path} line 2: "), message
        assert table_counts(db_url) == before, case


def test_config_references_name_their_option_or_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.add_config("bm25", "builtin")
    before = table_counts(db_url)
    plain = _write(tmp_path / "a.jsonl", json.dumps({**GOOD, "config": None}))
    result = cli("events", "import", str(plain), "--config", "bm25@abc", "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --config: invalid config reference 'bm25@abc'")
    result = cli("events", "import", str(plain), "--config", "nope", "--db", db_url)
    assert (result.exit_code, result.stderr[:31]) == (2, "error: --config: no config name")
    named = _write(tmp_path / "b.jsonl", json.dumps(GOOD | {"config": "bm25"}),
                   json.dumps(GOOD | {"query_id": "q2", "config": "bm25@abc"}))  # fmt: skip
    result = cli("events", "import", str(named), "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {named} line 2: config: invalid config reference")
    result = cli("events", "score", "bm25@abc", "--db", db_url)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: CONFIG invalid config reference 'bm25@abc'")
    assert table_counts(db_url) == before


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
