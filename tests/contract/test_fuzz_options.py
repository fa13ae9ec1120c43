"""Numeric command-line options: a value out of range, not finite or not a number is refused
with one line naming the option, and nothing is written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzzkit import FUZZ, HUGE_INT, TRIED, backend, one_line_naming, refused
from .test_fuzz_events import EVENT, SEARCH

NOT_A_NUMBER = ["x", "", "nan", "inf", "-inf", "1e400", "\u0661", "0x10", HUGE_INT, "1,5"]
WHOLE = [*NOT_A_NUMBER, "1.5", "-1", "0", "9223372036854775808"]
SWEEP = ("sweep", "c", "--testset", "t", "--grid", "operator=or,and")
# (command, option, values it must refuse); RUN, A, B are filled in by the world below.
OPTIONS: list[tuple[tuple[str, ...], str, list[str]]] = [
    (("run", "c", "--testset", "t"), "--depth", [*WHOLE, "100001"]),
    (("run", "c", "--testset", "t"), "--concurrency", [*WHOLE, "1001"]),
    (("run", "c", "--testset", "t"), "--rate-limit", [*NOT_A_NUMBER, "0", "-1"]),
    (("compare", "A", "B"), "--alpha", [*NOT_A_NUMBER, "0", "1", "-0.5", "2"]),
    (("compare", "A", "B"), "--seed", [*NOT_A_NUMBER, "1.5", "-1", "18446744073709551616"]),
    (("leaderboard", "A", "B"), "--alpha", [*NOT_A_NUMBER, "0", "1", "-0.5", "2"]),
    (("leaderboard", "A", "B"), "--seed", [*NOT_A_NUMBER, "1.5", "-1", "18446744073709551616"]),
    (("leaderboard", "A", "B"), "--draws", [*WHOLE, "1000001"]),
    (("compare", "A", "B"), "--target", ["nDCG@10>=inf", "nDCG@10>=nan", "nDCG@10>=x",
                                         "nDCG@10", "nosuch>=1", "nDCG@10>=\u0661"]),
    (("unjudged", "A"), "--k", [*WHOLE, "100001"]),
    (("queries", "c", "--testset", "t"), "--k", WHOLE),
    (("queries", "c", "--testset", "t"), "--good", ["nan", "inf", "x", "1e400", "\u0661"]),
    (("testset", "from-events", "t", "--model", "ctr"), "--min-impressions", WHOLE),
    (("online", "preference", "a", "b"), "--seed",
     [*NOT_A_NUMBER, "1.5", "-1", "4294967296"]),
    (SWEEP, "--folds", [*WHOLE, "1", "3"]),
    (SWEEP, "--max-runs", [*WHOLE, "1", "10001"]),
    (SWEEP, "--seed", [*NOT_A_NUMBER, "1.5", "-1", "4294967296"]),
    (SWEEP, "--depth", [*WHOLE, "100001"]),
    (SWEEP, "--concurrency", [*WHOLE, "1001"]),
    (("testset", "from-events", "t", "--model", "ctr"), "--thresholds",
     ["x", "0.3,0.1", "nan,1", "inf", "-1,0.5", "0.1,,0.2", "\u0661"]),
    (("rate", "task", "x", "-t", "t", "--from-run", "A"), "--k", [*WHOLE, "100001"]),
    (("rate", "task", "x", "-t", "t", "--from-run", "A"), "--raters-per-pair", [*WHOLE, "21"]),
    (("rate", "task", "x", "-t", "t", "--from-run", "A"), "--scale",
     ["\u0660-\u0663", "\u00b2-\u00b3", "3-1", "0-10", "x", "", "-"]),
    (("rate", "task", "x", "-t", "t", "--from-run", "A"), "--judge",
     ["", "j" * 37, "gpt\x1b[2J", "a b", "llm:x"]),
    (("rate", "invite", "x", "ana"), "--days", [*NOT_A_NUMBER, "0", "-1", "367"]),
    (("rate", "invite", "x", "ana"), "--base-url",
     ["https://x.org\nSet-Cookie: a=b", "https://x .org", "ftp://x", "https://x\x00"]),
    # only values refused before the server starts: an accepted port would serve for ever
    (("rate", "serve"), "--port", ["x", "", "nan", "1.5", "-1", "0", "65536", HUGE_INT]),
]  # fmt: skip
CASES = [(args, option, value) for args, option, values in OPTIONS for value in values]


@pytest.fixture
def world(cli: Callable[..., Any], db_url: str, tmp_path: Path) -> dict[str, str]:
    """A test set ``t`` with documents, a builtin config ``c`` and two imported runs."""
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 2\n", encoding="utf-8")
    (tmp_path / "q.tsv").write_text("q1\tone\nq2\ttwo\n", encoding="utf-8")
    (tmp_path / "docs.jsonl").write_text(
        '{"id": "d1", "text": "one"}\n{"id": "d2", "text": "two"}\n', encoding="utf-8"
    )
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 r\nq2 Q0 d2 1 1.0 r\n", encoding="utf-8")
    search = dict(SEARCH, user_query="one", query_attributes={"session_id": "x1", "config": "c"})
    event = dict(EVENT, event_attributes={"object": {"object_id": "d1"},
                                          "position": {"ordinal": 1}})  # fmt: skip
    (tmp_path / "log.jsonl").write_text(f"{json.dumps(search)}\n{json.dumps(event)}\n")
    steps = [
        ("testset", "import", "t", "--qrels", str(tmp_path / "qrels.txt"), "--queries",
         str(tmp_path / "q.tsv"), "--docs", str(tmp_path / "docs.jsonl")),
        ("config", "add", "c", "--searcher", "builtin"),
        ("import-run", str(tmp_path / "run.txt"), "--config", "a", "--testset", "t"),
        ("import-run", str(tmp_path / "run.txt"), "--config", "b", "--testset", "t"),
        ("events", "import", str(tmp_path / "log.jsonl")),
    ]  # fmt: skip
    for step in steps:
        result = cli(*step, "--db", db_url)
        assert result.exit_code == 0, (step, result.stderr)
    return {"A": "a@latest", "B": "b@latest"}


def check(
    cli: Callable[..., Any], db_url: str, world: dict[str, str], case: tuple[Any, str, str]
) -> None:
    args, option, value = case
    command = [world.get(arg, arg) for arg in args]
    refused(f"{args[0]} {option}", cli, db_url, *command, option, value,
            where=[option.lstrip("-")])  # fmt: skip


# Once tracebacks: a --k past the 64-bit range reached the database or numpy.
CRASHES = [(("unjudged", "A"), "--k", "9223372036854775808"),
           (("queries", "c", "--testset", "t"), "--k", "9223372036854775808")]  # fmt: skip


@settings(FUZZ, max_examples=40)
@given(case=st.sampled_from([case for case in CASES if case not in CRASHES]))
def test_a_numeric_option_never_ends_in_a_traceback(
    cli: Callable[..., Any], db_url: str, world: dict[str, str], case: tuple[Any, str, str]
) -> None:
    args, option, value = case
    TRIED[f"{args[0]} {option} [{backend(db_url)}]"] += 1
    result = cli(*[world.get(arg, arg) for arg in args], option, value, "--db", db_url)
    assert result.exit_code in (0, 2), result.stderr
    if result.exit_code == 2 and not result.stderr.lstrip().startswith("Usage"):
        one_line_naming(result)


# Every numeric option goes through check_number and every usage error is one line: nan, inf,
# \u0661 as a number and the like are refused, naming the option.
@settings(FUZZ, max_examples=40)
@given(case=st.sampled_from(CASES))
def test_a_bad_numeric_option_is_refused_naming_it(
    cli: Callable[..., Any], db_url: str, world: dict[str, str], case: tuple[Any, str, str]
) -> None:
    check(cli, db_url, world, case)


@pytest.mark.parametrize("case", CRASHES, ids=lambda case: f"{case[0][0]} {case[1]}")
def test_known_crashes(
    cli: Callable[..., Any], db_url: str, world: dict[str, str], case: tuple[Any, str, str]
) -> None:
    check(cli, db_url, world, case)
