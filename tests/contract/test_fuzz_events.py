"""``events import``: a valid log (UBI JSON lines, flat JSON lines, CSV) with one field made
bad is refused naming the file and the line, and nothing is written."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzzkit import BAD_JSON_LINES, FUZZ, HUGE_INT, LONG_ID, encode, refused

SEARCH = {"query_id": "s1", "client_id": "c1", "user_query": "wing",
          "timestamp": "2026-03-01T08:00:00+00:00", "query_response_hit_ids": ["d1", "d2"],
          "query_attributes": {"session_id": "x1", "variant": "web@1"}}  # fmt: skip
EVENT = {"action_name": "click", "query_id": "s1", "session_id": "x1", "client_id": "c1",
         "timestamp": "2026-03-01T08:00:02+00:00",
         "event_attributes": {"object": {"object_id": "d1"},
                              "position": {"ordinal": 1}}}  # fmt: skip
DEEP = '{"query_id": "s2", "query_attributes": ' + "[" * 3000 + "]" * 3000 + "}"
BAD_ID: list[Any] = ["", LONG_ID, "a\x00b", "a\x01", "\ud800", None, [], {}, 1.5, True]
BAD_TIME: list[Any] = ["2026-03-01T08:00:00", "yesterday", "", None, [],
                       "2026-13-01T00:00:00Z", 10**30, -(10**30), float("nan"),
                       "\u0662026-03-01T08:00:00Z", True]  # fmt: skip
# "" as a whole hit list is no hits, as in a flat file; an empty session_id falls back to the
# client id; a null action_name makes a query record: all read, not refused (docs/online.md)
BAD_HITS: list[Any] = [[1.5], [None], ["a\x01"], [LONG_ID], [["d1"]], {"d": 1}, 5, ["\x00"]]
BAD_POSITION: list[Any] = [0, -1, 1.5, "x", 10**30, True, float("inf")]
SEARCH_BAD = {"query_id": BAD_ID, "timestamp": BAD_TIME, "query_response_hit_ids": BAD_HITS,
              "user_query": ["a\x00", "\ud800", 1, []],
              "query_attributes": [[], "x", {"session_id": LONG_ID}, {"variant": 1}]}  # fmt: skip
EVENT_BAD = {"query_id": BAD_ID, "timestamp": BAD_TIME, "action_name": ["", 1, LONG_ID],
             "event_attributes": [[], *({"position": {"ordinal": p}} for p in BAD_POSITION),
                                  *({"object": {"object_id": v}} for v in ("a\x01", LONG_ID))],
             "session_id": [LONG_ID, "a\x01", 1.5]}  # fmt: skip


LINES = [*BAD_JSON_LINES, DEEP, '{"query_id": ' + HUGE_INT + "}"]
UBI_CASES = [
    *((0, key, value) for key, values in SEARCH_BAD.items() for value in values),
    *((1, key, value) for key, values in EVENT_BAD.items() for value in values),
    *((row, "<line>", text) for row in (0, 1) for text in LINES),
]
# Once accepted, or refused with a traceback or without the line: each is tried on its own by
# test_known_gaps, so that it stays refused.
UBI_KNOWN = [
    (0, "query_response_hit_ids", [None]),
    *((row, "<line>", text) for row in (0, 1) for text in LINES
      if text.count("[") > 1000 or HUGE_INT in text or "\udcff" in text),
]  # fmt: skip


def ubi_file(row: int, key: str, value: Any) -> tuple[bytes, int]:
    records = [dict(SEARCH), dict(EVENT)]
    lines = [json.dumps(r) for r in records]
    if key == "<line>":
        lines[row] = value
    else:
        records[row][key] = value
        lines[row] = json.dumps(records[row])
    return encode("\n".join(lines) + "\n"), row + 1


FLAT = [
    {"query_id": "s1", "session_id": "x1", "timestamp": "2026-03-01T08:00:00Z",
     "hit_ids": "d1|d2", "config": "web@1", "action": "", "object_id": "", "position": ""},
    {"query_id": "s1", "session_id": "x1", "timestamp": "1772352002000", "hit_ids": "",
     "config": "", "action": "click", "object_id": "d1", "position": "1"},
]  # fmt: skip
FLAT_BAD = {"query_id": ["", LONG_ID, "a\x01"], "timestamp": ["2026-03-01", "x", "nan",
            HUGE_INT, "99999999999999999999", "\u0661\u0662"], "session_id": ["", LONG_ID],
            "action": [LONG_ID, "a\x01"]}  # fmt: skip
FLAT_CASES = [
    *((row, key, value) for row in (0, 1) for key, values in FLAT_BAD.items() for value in values),
    *((0, "hit_ids", value) for value in ("a\x01", LONG_ID)),
    *((1, "position", value) for value in ("0", "-1", "x", "1.5", HUGE_INT, "\u0661")),
]
FLAT_KNOWN = [(row, "timestamp", "\u0661\u0662") for row in (0, 1)]


def flat_file(row: int, key: str, value: str) -> tuple[bytes, int]:
    rows = [dict(r) for r in FLAT]
    rows[row][key] = value
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(FLAT[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return encode(out.getvalue()), row + 2


def check(cli: Callable[..., Any], db_url: str, folder: Path, kind: str, case: Any) -> None:
    assert cli("config", "add", "web", "--searcher", "builtin", "--db", db_url).exit_code == 0
    content, line = (ubi_file if kind == "ubi.jsonl" else flat_file)(*case)
    path = folder / kind
    path.write_bytes(content)
    refused(f"events import {kind}", cli, db_url, "events", "import", str(path),
            where=[kind, f"line {line}"])  # fmt: skip


def known(cases: list[Any], gaps: list[Any]) -> list[Any]:
    return [case for case in cases if case not in gaps]


@pytest.mark.parametrize("kind", ["ubi.jsonl", "flat.csv"])
@settings(FUZZ, max_examples=25)
@given(data=st.data())
def test_a_bad_log_field_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, kind: str, data: st.DataObject
) -> None:
    cases = known(UBI_CASES, UBI_KNOWN) if kind == "ubi.jsonl" else known(FLAT_CASES, FLAT_KNOWN)
    check(cli, db_url, tmp_path, kind, data.draw(st.sampled_from(cases)))


@pytest.mark.parametrize(
    ("kind", "case"),
    [("ubi.jsonl", case) for case in UBI_KNOWN] + [("flat.csv", case) for case in FLAT_KNOWN],
    ids=lambda value: repr(value)[:40],
)
def test_known_gaps(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, kind: str, case: Any
) -> None:
    check(cli, db_url, tmp_path, kind, case)


# Interleaved searches: the teams, the method and the ranks of one search made bad.
MERGED = {**SEARCH, "query_response_hit_ids": ["d1", "d2", "d3"],
          "query_attributes": {"session_id": "x1", "interleaving": "team_draft",
                               "teams": ["web", "alt", "web"]}}  # fmt: skip
TEAMS_BAD = st.one_of(
    st.lists(st.sampled_from(["web", "alt"]), min_size=1, max_size=6).filter(lambda t: len(t) != 3),
    st.lists(st.sampled_from(["web", "alt", "third"]), min_size=3, max_size=3).filter(
        lambda t: len(set(t)) != 2
    ),
    st.sampled_from([5, {"a": 1}, ["web", None, "alt"], ["web", "", "alt"], ["web", "a\x01", "alt"],
                     ["web", LONG_ID, "alt"], ["web", 1.5, "alt"], ["web", ["alt"], "web"]]),
)  # fmt: skip
METHOD_BAD = st.one_of(
    st.text(max_size=20).filter(lambda m: m not in ("", "team_draft", "balanced")),
    st.sampled_from([1, [], {}, True]),
)
RANKS_BAD = st.sampled_from([
    None, [], "x", "{not json", {"web": [1, None, 2]},
    {"web": [1, None, 2], "alt": [None, None, None]},
    {"web": [1, 2, 3], "alt": [1, 2]}, {"web": [1, 1, 2], "alt": [3, 2, 1]},
    {"web": [0, 2, 3], "alt": [1, 2, 3]}, {"web": [True, 2, 3], "alt": [1, 2, 3]},
    {"web": [1, 2, 3], "alt": [1, 2, 3], "third": [1, 2, 3]},
    {"web": [1.5, 2, 3], "alt": [1, 2, 3]},
])  # fmt: skip
FLAT_TEAMS_BAD = st.sampled_from(["web|alt", "web|web|web", "web||alt", "web|alt|third", "[1.5]",
                                  "web alt web alt", "[\"web\", null, \"alt\"]"])  # fmt: skip


def merged_file(kind: str, data: st.DataObject) -> bytes:
    if kind == "flat.csv":
        row = {"query_id": "s1", "session_id": "x1", "timestamp": "2026-03-01T08:00:00Z",
               "hit_ids": "d1|d2|d3", "teams": "web|alt|web",
               "interleaving": "team_draft"}  # fmt: skip
        key = data.draw(st.sampled_from(["teams", "interleaving"]))
        row[key] = data.draw(FLAT_TEAMS_BAD if key == "teams" else st.sampled_from(
            ["draft", "Team_Draft", "balanced", "x\x01"]))  # fmt: skip
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(row), lineterminator="\n")
        writer.writeheader()
        writer.writerow(row)
        return encode(out.getvalue())
    record = json.loads(json.dumps(MERGED))
    attributes = record["query_attributes"]
    key = data.draw(st.sampled_from(["teams", "interleaving", "ranks", "config"]))
    if key == "teams":
        attributes["teams"] = data.draw(TEAMS_BAD)
    elif key == "interleaving":
        attributes["interleaving"] = data.draw(METHOD_BAD)
    elif key == "ranks":
        attributes["interleaving"] = "balanced"
        ranks = data.draw(RANKS_BAD)
        if ranks is not None:
            attributes["ranks"] = ranks
    else:
        attributes["variant"] = data.draw(st.sampled_from(["third", "web@2"]))
    return encode(json.dumps(record) + "\n")


@pytest.mark.parametrize("kind", ["ubi.jsonl", "flat.csv"])
@settings(FUZZ, max_examples=20)
@given(data=st.data())
def test_a_bad_interleaved_search_is_refused_naming_its_line(
    cli: Callable[..., Any], db_url: str, tmp_path: Path, kind: str, data: st.DataObject
) -> None:
    for name in ("web", "alt"):
        cli("config", "add", name, "--searcher", "builtin", "--db", db_url)
    path = tmp_path / f"merged-{kind}"
    path.write_bytes(merged_file(kind, data))
    line = 2 if kind == "flat.csv" else 1
    refused(f"events import interleaved {kind}", cli, db_url, "events", "import", str(path),
            where=[path.name, f"line {line}"])  # fmt: skip
