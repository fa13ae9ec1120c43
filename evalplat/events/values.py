"""The values of a log record: timestamps, ids, hit lists, positions and numbers.

Each check raises ``InputError`` naming the file and line it was given, never another exception:
a log is input, and a value that Python cannot convert (thousands of digits, a date that leaves
the calendar when moved to UTC, digits of another script) is refused like any other bad value.

- A **timestamp** is ISO 8601 with a time zone (``Z`` or an offset) or epoch milliseconds (a
  JSON number or ASCII digits), written in ASCII; from Parquet, a timestamp with a zone. It must
  fall from 1970-01-01 to 9999-12-30 UTC (the day it belongs to must have an end).
- An **id** is text or a JSON integer (``29`` reads as ``"29"``), 1 to 200 characters without
  whitespace or control characters (``evalplat.inputs.validation``).
- A **hit list** keeps every position as logged: each item is an id; ``null``, ``""`` or an
  empty place between separators is refused rather than dropped, since dropping it would move
  every later hit up a position. A hit shown twice in one search is refused.
- A **position** is an integer from 1 (ASCII digits); a **value** a finite number.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.validation import DECIMAL, check_identifier, shown

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, tzinfo=UTC)  # excluded: a day window must have an end
_EPOCH_MS_DIGITS = 20
_HIT_SEPARATOR = re.compile(r"\s*\|\s*|\s+")

Where = Path | str | None


def parse_timestamp(value: Any, path: Where = None, line: int | None = None) -> datetime:
    """ISO 8601 with a zone, or epoch milliseconds (a number), as an aware UTC datetime."""
    if isinstance(value, bool) or value is None or value == "":
        raise InputError("missing timestamp", path=path, line=line)
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InputError(f"timestamp {value.isoformat()} has no time zone", path=path,
                             line=line)  # fmt: skip
        return _in_range(value, value.isoformat(), path, line)
    if isinstance(value, str) and not value.isascii():
        raise InputError(f"timestamp {shown(value)} is not ASCII (digits must be 0-9)",
                         path=path, line=line)  # fmt: skip
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return _epoch_ms(value, path, line)
    if not isinstance(value, str):
        raise InputError(f"timestamp must be text or epoch ms, got {_kind(value)}", path=path,
                         line=line)  # fmt: skip
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InputError(f"timestamp {shown(value)} is not ISO 8601", path=path,
                         line=line) from None  # fmt: skip
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InputError(f"timestamp {shown(value)} has no time zone (add Z or +hh:mm)",
                         path=path, line=line)  # fmt: skip
    return _in_range(moment, value, path, line)


def _epoch_ms(value: int | float | str, path: Where, line: int | None) -> datetime:
    text = shown(str(value)) if isinstance(value, str) else shown(repr(value))
    out_of_range = InputError(f"timestamp {text} is out of range (1970-01-01 to 9999-12-30)",
                              path=path, line=line)  # fmt: skip
    if isinstance(value, str) and len(value) > _EPOCH_MS_DIGITS:
        raise out_of_range  # thousands of digits: out of range, without converting them
    try:
        millis = float(value)
        moment = datetime.fromtimestamp(millis / 1000.0, tz=UTC)
    except (OverflowError, ValueError, OSError):
        raise out_of_range from None
    if not EARLIEST <= moment < LATEST:
        raise out_of_range
    return moment


def _in_range(moment: datetime, text: str, path: Where, line: int | None) -> datetime:
    problem = f"timestamp {shown(text)} is out of range (1970-01-01 to 9999-12-30 UTC)"
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:  # moved to UTC it leaves the calendar (year 1 or 9999)
        raise InputError(problem, path=path, line=line) from None
    if not EARLIEST <= utc < LATEST:
        raise InputError(problem, path=path, line=line)
    return utc


def identifier(value: Any, what: str, path: Where, line: int | None, *, required: bool = False,
               max_length: int = 200) -> str | None:  # fmt: skip
    """An id (text or a JSON integer); None when absent and not ``required``."""
    if value is None or value == "":
        if required:
            raise InputError(f"missing {what}", path=path, line=line)
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{what} must be text, got {_kind(value)}", path=path, line=line)
    return check_identifier(str(value), what, max_length=max_length, path=path, line=line)


def hit_ids(value: Any, path: Where, line: int | None) -> tuple[str, ...]:
    """The hits shown, in order: a list, a JSON list as text, or ids separated by | or spaces."""
    if value is None or value == "":
        return ()
    items = value
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                items = json.loads(text)
            except (ValueError, RecursionError):
                raise InputError("hit ids: not a valid JSON list", path=path, line=line) from None
        else:
            items = _HIT_SEPARATOR.split(text) if text else []
    if not isinstance(items, (list, tuple)):
        raise InputError("hit ids must be a list of ids", path=path, line=line)
    hits: list[str] = []
    for position, item in enumerate(items, start=1):
        if item is None or item == "":
            empty = "null" if item is None else "empty"
            raise InputError(f"hit id at position {position} is {empty} (every position must "
                             "name the hit shown there)", path=path, line=line)  # fmt: skip
        hits.append(str(identifier(item, f"hit id at position {position}", path, line)))
    seen: dict[str, int] = {}
    for position, hit in enumerate(hits, start=1):
        if hit in seen:
            raise InputError(f"hit id {shown(hit)} is shown twice in one search (positions "
                             f"{seen[hit]} and {position})", path=path, line=line)  # fmt: skip
        seen[hit] = position
    return tuple(hits)


def position(value: Any, path: Where, line: int | None) -> int | None:
    """A 1-based position, or None when absent."""
    if value is None or value == "":
        return None
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    if isinstance(value, bool) or not re.fullmatch(r"[0-9]{1,6}", text) or int(text) < 1:
        raise InputError(f"position must be an integer from 1, got {_shown_value(value)}",
                         path=path, line=line)  # fmt: skip
    return int(text)


def number(value: Any, path: Where, line: int | None) -> float | None:
    """A finite number (a JSON number or an ASCII decimal), or None when absent."""
    if value is None or value == "":
        return None
    problem = f"value must be a finite number, got {_shown_value(value)}"
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(problem, path=path, line=line)
    if isinstance(value, str) and not DECIMAL.fullmatch(value.strip()):
        raise InputError(problem, path=path, line=line)
    try:
        result = float(value)
    except (OverflowError, ValueError):
        raise InputError(problem, path=path, line=line) from None
    if not math.isfinite(result):
        raise InputError(problem, path=path, line=line)
    return result


def mapping(value: Any, what: str, path: Where, line: int | None) -> dict[str, Any]:
    """A nested object of a UBI record ({} when absent)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{what} must be an object", path=path, line=line)
    return value


def _shown_value(value: Any) -> str:
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return shown(str(value))
    return _kind(value) if isinstance(value, (list, dict)) else repr(value)


def _kind(value: Any) -> str:
    names = {list: "a list", dict: "an object", float: "a number", bool: "a boolean"}
    return names.get(type(value), type(value).__name__)
