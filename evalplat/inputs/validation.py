"""The input contract: what evalplat accepts as an id, a name, a grade, a score or free text.

Every reader, the store and the CLI check values here, before anything is written, so that
SQLite and PostgreSQL accept exactly the same inputs and a refusal is one ``InputError`` that
names the file and line (exit 2), never a database error. The limits follow the schema's
column types (``evalplat/db/``), which are declared the same on both databases:

========================  ==============================================================
value                     rule
========================  ==============================================================
query id, doc id          1 to 200 characters, no whitespace, no control characters
test set / config name    1 to 200 characters, no control characters, no ``@``
rating task name          1 to 200 ASCII letters, digits, ``.``, ``_``, ``-``; the first a
                          letter or digit (it is part of URLs and a cookie's path as it is)
config label              at most 200 characters, no control characters
judgment source           at most 40 characters, no control characters
query tag                 at most 200 characters, no control characters
metric name               at most 80 characters (canonical form)
grade                     ASCII digits with an optional sign, -2^31 to 2^31 - 1
score                     an ASCII decimal number, finite (no NaN, no infinity)
run / alert id            1 to 2^31 - 1
``--depth``               1 to 100,000 results per query
``--concurrency``         1 to 1,000 queries at once
``--rate-limit``          0.001 to any finite number of requests per second
free text                 any Unicode except NUL (query text, documents, tags, errors)
========================  ==============================================================

Control characters are Unicode category ``Cc``: U+0000 to U+001F and U+007F to U+009F. Lengths
count characters, as PostgreSQL's ``VARCHAR(n)`` does.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from evalplat.errors import InputError

ID_MAX_LENGTH = 200
NAME_MAX_LENGTH = 200
LABEL_MAX_LENGTH = 200
SOURCE_MAX_LENGTH = 40
METRIC_MAX_LENGTH = 80
GRADE_MIN = -(2**31)
GRADE_MAX = 2**31 - 1
ROW_ID_MAX = 2**31 - 1
DEPTH_MAX = 100_000
CONCURRENCY_MAX = 1_000
RATE_LIMIT_MIN = 0.001  # requests per second: a wait of 1,000 s between two, at most
SEED_MAX = 2**32 - 1  # numpy's random generators take seeds from 0 to 2**32 - 1

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# the same class in RE2 syntax, for pyarrow's vectorised kernels
ARROW_CONTROL = r"[\x00-\x1f\x7f-\x9f]"
# the class's ASCII part as bytes, for ``bytes.translate`` (no regular expression walk)
_ASCII_CONTROL = bytes([*range(0x20), 0x7F])
_INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
URL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# a JSON string (its escapes included), whose brackets are text, not nesting
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")

Where = tuple[str | Path | None, int | None]


def _fail(problem: str, path: str | Path | None, line: int | None) -> InputError:
    return InputError(problem, path=path, line=line)


def shown(value: str, limit: int = 40) -> str:
    """``repr`` of a value cut to ``limit`` characters, for messages about long values."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."


def check_identifier(
    value: str,
    what: str,
    *,
    max_length: int = ID_MAX_LENGTH,
    path: str | Path | None = None,
    line: int | None = None,
) -> str:
    """A query or doc id: non-empty, short enough, no whitespace or control characters."""
    if not value:
        raise _fail(f"empty {what}", path, line)
    if len(value) > max_length:
        problem = f"{what} {shown(value)} is {len(value)} characters long (at most {max_length})"
        raise _fail(problem, path, line)
    if CONTROL.search(value):
        raise _fail(f"{what} {shown(value)} contains a control character", path, line)
    if any(ch.isspace() for ch in value):
        raise _fail(f"{what} {shown(value)} contains whitespace", path, line)
    check_free_text(value, what, path=path, line=line)
    return value


def result_id_problem(value: object) -> str | None:
    """Why a doc id returned by a search engine cannot be stored, or None when it can.

    Engines are not held to the file formats' no-whitespace rule, only to what the column
    holds: 1 to 200 characters, no control characters, valid text.
    """
    if not isinstance(value, str) or not value:
        return f"{value!r} is not a non-empty string"
    if len(value) > ID_MAX_LENGTH:
        return f"{shown(value)} is {len(value)} characters long (at most {ID_MAX_LENGTH})"
    if CONTROL.search(value):
        return f"{shown(value)} contains a control character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return f"{shown(value)} is not valid text"
    return None


def result_ids_usable(values: list[Any]) -> bool:
    """Whether every doc id of one ranking can be stored (``result_id_problem`` finds nothing)
    and none repeats: the same rules checked over the whole ranking at once, at C speed. When
    False, ``result_id_problem`` on each id tells which one and why."""
    try:
        joined = " ".join(values)  # a space is not a control character
    except TypeError:
        return False
    if not values:
        return True
    if joined.isascii():  # the common ids: no surrogates, and the controls are bytes to drop
        raw = joined.encode("ascii")
        clean = len(raw.translate(None, _ASCII_CONTROL)) == len(raw)
    else:
        try:
            joined.encode("utf-8")
        except UnicodeEncodeError:
            return False
        clean = CONTROL.search(joined) is None
    distinct = set(values)
    return (
        clean
        and len(distinct) == len(values)
        and "" not in distinct
        and max(map(len, values)) <= ID_MAX_LENGTH
    )


def check_name(
    value: str,
    what: str,
    *,
    max_length: int = NAME_MAX_LENGTH,
    path: str | Path | None = None,
    line: int | None = None,
) -> str:
    """A name or label shown in tables: at most ``max_length`` characters, no control ones."""
    if len(value) > max_length:
        problem = f"{what} {shown(value)} is {len(value)} characters long (at most {max_length})"
        raise _fail(problem, path, line)
    if CONTROL.search(value):
        raise _fail(f"{what} {shown(value)} contains a control character", path, line)
    check_free_text(value, what, path=path, line=line)
    return value


def check_url_name(value: str, what: str) -> str:
    """A name that is part of URLs and a cookie's path as it is written (a rating task's): no
    character a URL or a cookie would need to encode, and never ``.`` or ``..``."""
    check_name(value, what)
    if not URL_NAME.fullmatch(value):
        raise InputError(
            f"{what} {shown(value)} may hold only ASCII letters, digits, '.', '_' and '-', "
            "starting with a letter or digit (it is part of the task's URLs)"
        )
    return value


def check_free_text(
    value: str, what: str, *, path: str | Path | None = None, line: int | None = None
) -> str:
    """Free text may hold any Unicode except NUL (and lone surrogates, which are not text)."""
    if "\x00" in value:
        raise _fail(f"{what} contains a NUL character", path, line)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(f"{what} contains a lone surrogate (\\ud800-\\udfff)", path, line) from None
    return value


def check_json_text(value: Any, what: str, *, path: str | Path | None = None) -> Any:
    """Every string (keys too) inside a JSON value is free text: no NUL, no lone surrogate."""
    if isinstance(value, str):
        check_free_text(value, what, path=path)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_free_text(str(key), what, path=path)
            check_json_text(item, what, path=path)
    elif isinstance(value, list | tuple):
        for item in value:
            check_json_text(item, what, path=path)
    elif isinstance(value, float) and not math.isfinite(value):
        raise _fail(f"{what} holds {value}, which is not a finite number", path, None)
    return value


def check_json_depth(text: str, what: str, maximum: int) -> str:
    """JSON ``text`` whose arrays and objects nest at most ``maximum`` deep, counted before it
    is parsed: Python's parser recurses once per level, and a body of nothing but ``[`` would
    otherwise end in ``RecursionError``."""
    depth = deepest = 0
    for char in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    if deepest > maximum:
        raise InputError(f"{what} nests arrays and objects {deepest} deep (at most {maximum})")
    return text


def parse_grade(value: object, *, path: str | Path | None = None, line: int | None = None) -> int:
    """A grade from text (ASCII digits, optional sign) or a JSON integer, in the 32-bit range."""
    grade: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        grade = value
    elif isinstance(value, str) and _INTEGER.fullmatch(value) and len(value) <= 20:
        grade = int(value)
    elif isinstance(value, str) and _INTEGER.fullmatch(value):
        grade = GRADE_MAX + 1  # thousands of digits: out of range, without converting them
    if grade is None:
        text = shown(value) if isinstance(value, str) else type(value).__name__
        raise _fail(f"grade {text} is not an integer (ASCII digits)", path, line)
    if not GRADE_MIN <= grade <= GRADE_MAX:
        text = shown(value) if isinstance(value, str) else shown(str(value))
        problem = f"grade {text} is out of range ({GRADE_MIN} to {GRADE_MAX})"
        raise _fail(problem, path, line)
    return grade


def parse_score(value: str, *, path: str | Path | None = None, line: int | None = None) -> float:
    """A score written as an ASCII decimal number; NaN and infinities are refused."""
    try:
        number = float(value)
    except ValueError:
        raise _fail(f"score {shown(value)} is not a number", path, line) from None
    if math.isfinite(number) and not DECIMAL.fullmatch(value):
        raise _fail(f"score {shown(value)} is not a number (ASCII digits)", path, line)
    return check_score(number, path=path, line=line, text=value)


def check_score(
    value: float,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    text: str | None = None,
) -> float:
    if not math.isfinite(value):
        raise _fail(f"score {text or value} is not a finite number", path, line)
    return value


def check_row_id(value: int, what: str) -> int:
    """A stored row's id (a run, an alert): 1 to 2^31 - 1, the range of the id columns."""
    if not 1 <= value <= ROW_ID_MAX:
        raise InputError(f"{what} {shown(str(value))} is out of range (1 to {ROW_ID_MAX})")
    return value


def check_depth(value: int) -> int:
    """Results asked per query: 1 to ``DEPTH_MAX``."""
    if not 1 <= value <= DEPTH_MAX:
        raise InputError(f"depth must be from 1 to {DEPTH_MAX:,}, got {shown(str(value))}")
    return value


def check_source(value: str, *, path: str | Path | None = None, line: int | None = None) -> str:
    """A judgment's source (``human``, ``llm``, ``click``...): a short name."""
    return check_name(value, "judgment source", max_length=SOURCE_MAX_LENGTH, path=path, line=line)


def check_number(
    value: float,
    what: str,
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    path: str | Path | None = None,
    line: int | None = None,
) -> float:
    """A numeric option or setting: finite and in range, or one ``InputError`` naming ``what``.

    ``minimum`` and ``maximum`` are inclusive, ``above`` is exclusive (``timeout`` must be more
    than 0). NaN fails every comparison, so finiteness is checked first and stated as such. An
    integer is compared as it is: one of hundreds of digits (a CLI option, a TOML value) has no
    float.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(f"{what} must be a finite number, got {shown(str(value))}", path, line)
    text = str(value) if isinstance(value, int) else f"{value:g}"
    got = text if len(text) <= 40 else text[:40] + "..."
    if minimum is not None and value < minimum:
        raise _fail(f"{what} must be at least {minimum:g}, got {got}", path, line)
    if above is not None and value <= above:
        raise _fail(f"{what} must be more than {above:g}, got {got}", path, line)
    if maximum is not None and value > maximum:
        raise _fail(f"{what} must be at most {maximum:g}, got {got}", path, line)
    return value
