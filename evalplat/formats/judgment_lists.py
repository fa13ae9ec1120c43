"""What the judgment lists of other tools share: Quepid CSV, RRE ratings JSON, OpenSearch SRW
judgments JSON and learning-to-rank (RankLib) judgment lists.

Each carries query texts next to its ratings, so a reader returns a :class:`ParsedFile` whose
``queries`` frame holds them (``load_testset`` takes them when no queries file is given). A
reader yields :class:`Rating` rows and :class:`QueryText` rows; :func:`judgment_list` checks
them (ids, grades, duplicates) and builds the frames.

Query ids: a file's own ids where it has them (LTR ``qid:N``); else :func:`text_query_id`, a
stable id from the query text, ``q`` and the first 12 hex digits of the SHA-256 of the text
(trimmed), so the same text gets the same id on every import and in every format.

:func:`sniff_judgments` tells these formats apart from the plain ones by content, after the
extension: a CSV whose header is Quepid's, a JSON object with SRW's ``judgmentRatings`` or
RRE's ``queries``/``query_groups``/``topics``, a text file whose lines are ``grade qid:N``.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.formats.text_files import (
    ParsedFile,
    check_id,
    check_text,
    duplicate_key_problem,
    new_frame,
)
from evalplat.inputs.validation import parse_grade, shown

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    import pandas as pd

_INTEGRAL = re.compile(r"[+-]?[0-9]+(?:\.0*)?")
_NEWLINE = re.compile("\n")
_LONG_NUMBER = re.compile("[0-9]{4301,}")


@dataclass(frozen=True)
class Rating:
    """One graded (query, document) pair of a file, on ``line``."""

    line: int
    query_id: str
    doc_id: object
    grade: int


@dataclass(frozen=True)
class QueryText:
    """A query a file names, with its text (it may have no ratings: it still counts)."""

    line: int
    query_id: str
    text: str


def text_query_id(text: str) -> str:
    """The stable id of a query known only by its text: ``q`` + 12 hex digits of its SHA-256."""
    return "q" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def rating_grade(value: object, path: Path, line: int) -> int:
    """A rating as an integer grade: an integer, or a whole number written ``3.0``/``"3.000"``
    (SRW writes ratings so); a fraction or anything else is refused, naming the line."""
    if isinstance(value, float) and not isinstance(value, bool):
        if not math.isfinite(value) or value != int(value):
            raise InputError(f"rating {value!r} is not a whole number", path=path, line=line)
        value = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise InputError("missing rating", path=path, line=line)
        if not _INTEGRAL.fullmatch(text):
            problem = f"rating {shown(text)} is not a whole number (grades are integers)"
            raise InputError(problem, path=path, line=line)
        value = text.split(".", 1)[0]
    elif value is None:
        raise InputError("missing rating", path=path, line=line)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"rating must be a number, found {value!r}", path=path, line=line)
    return parse_grade(value, path=path, line=line)


def judgment_list(path: Path, rows: Iterable[Rating | QueryText]) -> ParsedFile:
    """The judgments and queries of ``rows``: ids checked, one grade per pair, texts agreeing."""
    import pandas as pd

    texts: dict[str, tuple[str, int]] = {}
    queries: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    lines: list[int] = []
    first: dict[tuple[str, str], int] = {}
    for row in rows:
        query_id = check_id(row.query_id, "query id", path, row.line)
        if isinstance(row, QueryText):
            text = check_text(row.text.strip(), "query text", path, row.line)
            known = texts.get(query_id)
            if known is not None and known[0] and text and known[0] != text:
                problem = (
                    f"query {query_id!r} has the text {shown(text)} here and "
                    f"{shown(known[0])} on line {known[1]}"
                )
                raise InputError(problem, path=path, line=row.line)
            if known is None or not known[0]:
                texts[query_id] = (text, row.line)
            continue
        doc_id = check_id(row.doc_id, "doc id", path, row.line)
        pair = (query_id, doc_id)
        if pair in first:
            problem = (
                f"duplicate judgment for query {query_id!r}, doc {doc_id!r} "
                f"(first on line {first[pair]})"
            )
            raise InputError(problem, path=path, line=row.line)
        first[pair] = row.line
        texts.setdefault(query_id, ("", row.line))
        queries.append(query_id)
        docs.append(doc_id)
        grades.append(row.grade)
        lines.append(row.line)
    if not lines:
        raise InputError("no judgments", path=path)
    frame = new_frame(
        {
            "query_id": pd.Series(queries, dtype="str"),
            "doc_id": pd.Series(docs, dtype="str"),
            "grade": pd.Series(grades, dtype="int64"),
            "source": pd.Series([None] * len(lines), dtype=object),
        }
    )
    ids = list(texts)
    query_frame = new_frame(
        {
            "query_id": pd.Series(ids, dtype="str"),
            "text": pd.Series([texts[q][0] for q in ids], dtype="str"),
            "weight": pd.Series([math.nan] * len(ids), dtype="float64"),
            "tags": pd.Series([None] * len(ids), dtype=object),
        }
    )
    return ParsedFile(path, frame, lambda: lines, queries=query_frame)


def texts_by_id(queries: pd.DataFrame, *, unique: bool = True) -> dict[str, str]:
    """Query id -> the text a file names it by (its id when it has no text); ``unique``: the
    format names queries by text alone, so two queries with one text are refused."""
    out: dict[str, str] = {}
    named: dict[str, str] = {}
    for query_id, text in zip(queries["query_id"], queries["text"].fillna(""), strict=True):
        name = str(text).strip() or str(query_id)
        if unique and name in named:
            raise InputError(
                f"queries {named[name]!r} and {query_id!r} have the same text {name[:40]!r}; "
                "this format names queries by their text"
            )
        named[name] = str(query_id)
        out[str(query_id)] = name
    return out


def positioned_json(text: str, path: Path) -> tuple[Any, Callable[[object], int]]:
    """The JSON value of ``text`` and a function giving the line each object in it starts on.

    The standard decoder with the pure-Python scanner, whose object parser is wrapped to note
    where every object begins (by identity: the objects live as long as the value) and to
    refuse an object naming a key twice (the decoder would keep the last value and drop the
    others without a word), naming the key and the line of its second value. Lines are found
    by bisecting the newlines' offsets, so reading a file stays linear in its size."""
    from json.decoder import JSONObject  # type: ignore[attr-defined]
    from json.scanner import py_make_scanner  # type: ignore[attr-defined]

    starts: dict[int, int] = {}
    newlines: list[int] = []

    def line_at(offset: int) -> int:
        if not newlines:
            newlines.extend(match.start() for match in _NEWLINE.finditer(text))
            newlines.append(len(text))  # never empty once computed
        return bisect.bisect_left(newlines, offset) + 1

    def parse_object(
        state: tuple[str, int], strict: bool, scan_once: Any, *args: Any, **kwargs: Any
    ) -> tuple[Any, int]:
        value_starts: list[int] = []

        def scan_value(string: str, index: int) -> Any:
            value_starts.append(index)  # the values of this object's keys, in order
            return scan_once(string, index)

        pairs, end = JSONObject(state, strict, scan_value, None, list, *args[2:], **kwargs)
        value = dict(pairs)
        if len(value) != len(pairs):
            seen: set[str] = set()
            for (key, _), at in zip(pairs, value_starts, strict=True):
                if key in seen:
                    problem = duplicate_key_problem(key)
                    raise InputError(problem, path=path, line=line_at(at))
                seen.add(key)
        starts[id(value)] = state[1]
        return value, end

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        value = decoder.decode(text)
    except json.JSONDecodeError as error:
        problem = f"invalid JSON: {error.msg} (column {error.colno})"
        raise InputError(problem, path=path, line=error.lineno) from None
    except ValueError:  # an integer of more than Python's 4300 digits: no grade or id
        long = _LONG_NUMBER.search(text)
        line = None if long is None else text.count("\n", 0, long.start()) + 1
        problem = "invalid JSON: a number of more than 4300 digits"
        raise InputError(problem, path=path, line=line) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=path) from None

    def line_of(obj: object) -> int:
        start = starts.get(id(obj))
        return 1 if start is None else line_at(start)

    return value, line_of


def json_type_error(what: str, expected: str, found: object, path: Path, line: int) -> InputError:
    from evalplat.formats.text_files import json_type

    return InputError(f"{what} must be {expected}, found {json_type(found)}", path=path, line=line)


def sniff_judgments(path: Path, fmt: str) -> str:
    """``fmt`` (from the extension), or the judgment list format the content shows it to be."""
    if fmt not in ("csv", "trec", "json"):
        return fmt
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16).decode("utf-8", errors="replace").lstrip("\ufeff")
    except OSError:
        return fmt
    if fmt == "csv":
        from evalplat.formats.quepid import is_quepid_header

        first = next((line for line in head.splitlines() if line.strip()), "")
        return "quepid" if is_quepid_header(first) else fmt
    if fmt == "json":
        if '"judgmentRatings"' in head:
            return "srw"
        if any(f'"{key}"' in head for key in ("query_groups", "topics", "queries")):
            return "rre"
        raise InputError(
            "a JSON file of judgments is read as srw (judgmentRatings) or rre (queries, "
            "query_groups or topics); this one has neither, pass --format",
            path=path,
        )
    from evalplat.formats.ltr import looks_like_ltr

    return "ltr" if looks_like_ltr(head) else fmt


def write_judgment_list(
    fmt: str, queries: pd.DataFrame, qrels: pd.DataFrame, path: str | Path, name: str
) -> Path:
    """Write ``qrels`` (one grade per pair) and the queries' texts as another tool's judgment
    list, ``fmt`` one of ``quepid``, ``rre``, ``srw``, ``ltr``; ``name`` names the list (RRE's
    index, SRW's name)."""
    if fmt == "quepid":
        from evalplat.formats.quepid import write_quepid

        return write_quepid(queries, qrels, path)
    if fmt == "rre":
        from evalplat.formats.rre import write_rre

        return write_rre(queries, qrels, path, index=name)
    if fmt == "srw":
        from evalplat.formats.srw import write_srw

        return write_srw(queries, qrels, path, name=name)
    if fmt == "ltr":
        from evalplat.formats.ltr import write_ltr

        return write_ltr(queries, qrels, path)
    raise InputError(f"cannot write a judgment list as {fmt!r} (quepid, rre, srw, ltr)")
