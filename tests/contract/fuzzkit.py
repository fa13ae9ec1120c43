"""The bad-input suite's tools: valid base files, one field made bad, and the one check.

Each property takes a valid file, corrupts exactly one field (or one line) with a value that
field must refuse, runs the real CLI in-process (``catch_exceptions=False``: a traceback fails
the example) and asserts the contract: exit 2, one line on stderr naming the file and the line
(or the option), and the database exactly as before (:func:`tests.contract.dump.dump`).

Hypothesis is derandomized (the same examples on every run, see ``FUZZ``); every example is
counted per reader in ``TRIED``, which the terminal summary prints (``tests/contract/conftest.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from .dump import dump

# Each example is a CLI call and two dumps of the database, on both databases: 15 a property
# (per format) keep the bad-input suite near two minutes of the workers' time.
FUZZ = settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# inputs tried per reader (and database), printed at the end of the run
TRIED: Counter[str] = Counter()

HUGE_INT = "9" * 4301
LONG_ID = "x" * 201

# Values each kind of field must refuse. Ids: whitespace splits TREC fields, so only the
# kinds that cannot be mistaken for another field count of the line are listed per format.
BAD_ID = ["", LONG_ID, "a\x01b", "a\x7fb", "a\x9fb", "d\x00", "\ud800", "a\u00a0b", "a\u2028b"]
BAD_GRADE = ["1.5", "x", "\u0663", "nan", "inf", "-inf", "2147483648", "-2147483649",
             HUGE_INT, "1e3", "", "\x00", "0x1", "1_0", "\ud800"]  # fmt: skip
BAD_SCORE = ["inf", "-inf", "nan", "1e400", "\u0661", "x", "1,5", "\x00", "\ud800", "0x1"]
BAD_WEIGHT = ["0", "-1", "inf", "nan", "1e400", "\u0661", "x", "\x00", HUGE_INT]
BAD_TEXT = ["a\x00b", "\ud800"]
BAD_SOURCE = ["s" * 41, "a\x01", "\x00", "\ud800"]

# JSON values a field must refuse (ids: wrong types, too long, control characters).
J_BAD_ID: list[Any] = [None, True, 1.5, [], {}, "", LONG_ID, "a\x01", "a b", "\ud800", 10**300]
J_BAD_GRADE: list[Any] = [None, True, 1.5, "x", [], {}, 2**31, -(2**31) - 1, 10**40,
                          "\u0663", float("inf"), float("nan")]  # fmt: skip


def encode(text: str) -> bytes:
    """UTF-8, keeping lone surrogates as the invalid bytes a broken file would hold."""
    return text.encode("utf-8", "surrogatepass")


def raw_json(value: Any) -> str:
    """JSON text of a value, ``NaN``/``Infinity`` as Python writes them (they are not JSON)."""
    return json.dumps(value)


@dataclass(frozen=True)
class Field:
    """A column of a delimited base file and what it must refuse."""

    index: int
    bad: Sequence[str]


def corrupt_line(
    draw: st.DrawFn, rows: list[list[str]], fields: Sequence[Field], sep: str, header: str = ""
) -> tuple[bytes, int]:
    """A delimited file with one field of one row made bad; returns (bytes, 1-based line)."""
    row = draw(st.integers(0, len(rows) - 1))
    field = draw(st.sampled_from(list(fields)))
    values = [list(r) for r in rows]
    values[row][field.index] = draw(st.sampled_from(list(field.bad)))
    lines = ([header] if header else []) + [sep.join(v) for v in values]
    return encode("\n".join(lines) + "\n"), row + 1 + (1 if header else 0)


def corrupt_json_line(
    draw: st.DrawFn,
    rows: list[dict[str, Any]],
    bad: dict[str, Sequence[Any]],
    bad_lines: Sequence[str] = (),
) -> tuple[bytes, int]:
    """A JSONL file with one key of one row made bad (or the row made not JSON, or one of
    ``bad_lines``: lines of the reader's own that it must refuse)."""
    row = draw(st.integers(0, len(rows) - 1))
    lines = [json.dumps(r) for r in rows]
    key = draw(st.sampled_from([*bad, "<line>"]))
    if key == "<line>":
        lines[row] = draw(st.sampled_from([*BAD_JSON_LINES, *bad_lines]))
    else:
        changed = dict(rows[row])
        changed[key] = draw(st.sampled_from(list(bad[key])))
        lines[row] = json.dumps(changed)
    return encode("\n".join(lines) + "\n"), row + 1


# Lines that are not a JSON object: deep nesting, a 4301-digit integer, broken UTF-8, a NUL,
# an array, a truncated object.
BAD_JSON_LINES = [
    "[" * 5000 + "]" * 5000,
    '{"a": ' + "[" * 3000 + "]" * 3000 + "}",
    '{"x": ' + HUGE_INT + "}",
    "[1, 2]",
    '{"query_id": "q1"',
    "\x00",
    '"just a string"',
    "\udcff\udcfe",
    "NaN",
]


def one_line_naming(result: Any, *where: str) -> str:
    """The refusal: exit 2, one stderr line naming each of ``where``."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    for part in where:
        assert part in lines[0], (part, lines[0])
    return str(lines[0])


def backend(db_url: str) -> str:
    """``sqlite`` or ``postgresql``, for the count of inputs tried."""
    return db_url.split(":", 1)[0].split("+", 1)[0]


def placed(folder: Path, drawn: tuple[str, bytes, int]) -> tuple[str, list[str]]:
    """Write a drawn bad file ``(name, content, line)`` into ``folder``: its path, and what a
    refusal of it must name (the file and the line)."""
    name, content, line = drawn
    (folder / name).write_bytes(content)
    return str(folder / name), [name, f"line {line}"]


def refused(
    reader: str, cli: Callable[..., Any], db_url: str, *args: str, where: Sequence[str] = ()
) -> str:
    """Run ``evalplat ARGS --db URL``: refused, naming ``where``, nothing written."""
    TRIED[f"{reader} [{backend(db_url)}]"] += 1
    before = dump(db_url)
    result = cli(*args, "--db", db_url)
    line = one_line_naming(result, *where)
    assert dump(db_url) == before, line
    return line
