"""Readers for the files a test set is imported from: queries, judgments and documents.

Formats (``--format`` names) and what each kind of file accepts:

- ``trec``: judgments only, TREC qrels ``qid iter docid grade``;
- ``csv`` and ``tsv``: queries and judgments;
- ``jsonl``: queries, judgments and documents (documents are JSONL only).

Without ``--format`` the extension decides: ``.csv``, ``.tsv``, ``.jsonl``/``.ndjson``; for
judgments ``.txt``, ``.qrels`` or no extension mean TREC qrels; for queries ``.txt`` means TSV.
TREC qrels are read by :func:`evalplat.formats.trec.read_qrels`.

Queries, CSV/TSV. Fields are split on the delimiter (TSV has no quoting; CSV uses standard double
quotes). The first non-blank line is a header when its first field is ``query_id``, ``qid`` or
``id``; a header names the columns, from ``query_id`` (aliases ``qid``, ``id``), ``text`` (alias
``query``), ``weight``, ``tags``, and must have the first two. Without a header every line is
``query_id<TAB>text[<TAB>weight[<TAB>tags]]``. ``weight`` is empty or a finite number > 0;
``tags`` is a comma-separated list (``head,navigational``).

Queries, JSONL: objects with ``id`` or ``query_id``, ``text``, optional ``weight`` (number > 0)
and ``tags`` (list of strings).

Judgments, CSV/TSV: a header is required and names the columns ``query_id``, ``doc_id``,
``grade`` and optionally ``source`` in any order. JSONL: objects with the same keys. A grade is an
integer (negative grades are kept: trec_eval reads them as judged non-relevant).

Documents, JSONL: objects with ``id`` (or ``doc_id``), optional ``title`` and ``text`` (strings,
``null`` means empty); every other key is kept in ``fields`` as a JSON object.

Rules common to all kinds: the file is UTF-8 (a BOM is skipped); blank lines are skipped; ids
are non-empty and contain no whitespace (they must survive the whitespace-separated TREC formats);
a JSON id may be a string or an integer (``7`` reads as ``"7"``); surrounding whitespace of a
CSV/TSV field is dropped; unknown columns or keys are refused rather than silently lost (except
in documents); tags are stored sorted and without repeats, as a JSON list, or ``None`` when there
are none. Every problem is one :class:`~evalplat.errors.InputError` naming the file and line.

Judgments are the large input (millions of lines): CSV/TSV is read by pyarrow and validated in
vectorised kernels; only when that finds a problem does the line-by-line reader (the reference,
which names the line) run. JSONL is one tight loop over ``json.loads``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalplat.errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

Kind = Literal["queries", "judgments", "documents"]
FORMATS = ("trec", "csv", "tsv", "jsonl")
ACCEPTED: dict[Kind, tuple[str, ...]] = {
    "queries": ("tsv", "csv", "jsonl"),
    "judgments": ("trec", "csv", "tsv", "jsonl"),
    "documents": ("jsonl",),
}
_EXTENSIONS: dict[str, str] = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_KIND_EXTENSIONS: dict[Kind, dict[str, str]] = {
    "queries": {".txt": "tsv"},
    "judgments": {".txt": "trec", ".qrels": "trec", "": "trec"},
    "documents": {},
}
_QUERY_HEADER_KEYS = {"query_id": "query_id", "qid": "query_id", "id": "query_id"}
_QUERY_COLUMNS = {**_QUERY_HEADER_KEYS, "text": "text", "query": "text"}
_QUERY_COLUMNS.update(weight="weight", tags="tags")
JUDGMENT_COLUMNS = ("query_id", "doc_id", "grade", "source")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_WHITESPACE = re.compile(r"\s")
# starts with a literal so that the scan is fast; a blank first line is checked apart
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*(?:\n|\Z)")


@dataclass(frozen=True)
class ParsedFile:
    """A file read into ``frame``; ``line_of(row)`` gives the line of a row, for later errors.

    Line numbers are found lazily (only an error needs them), so the fast paths stay fast.
    """

    path: Path
    frame: pd.DataFrame
    _locate: Callable[[], list[int]] = field(repr=False)
    _cache: list[list[int]] = field(default_factory=list, repr=False)

    def line_of(self, row: int) -> int:
        if not self._cache:
            self._cache.append(self._locate())
        return self._cache[0][row]


def detect_format(path: str | Path, kind: Kind, override: str | None = None) -> str:
    """The format name of ``path`` as a ``kind`` file: ``override`` if given, else its extension."""
    path = Path(path)
    if override is not None:
        name = override.strip().lower()
        if name not in FORMATS:
            raise InputError(f"unknown format {override!r} (known: {', '.join(FORMATS)})")
    else:
        suffix = path.suffix.lower()
        found = _KIND_EXTENSIONS[kind].get(suffix) or _EXTENSIONS.get(suffix)
        if found is None:
            raise InputError(
                f"cannot tell the format of {kind} from the extension {suffix or '(none)'!r}; "
                f"pass a format ({', '.join(ACCEPTED[kind])})",
                path=path,
            )
        name = found
    if name not in ACCEPTED[kind]:
        raise InputError(
            f"{kind} cannot be read as {name} (accepted: {', '.join(ACCEPTED[kind])})", path=path
        )
    return name


def read_queries(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """Queries: ``query_id``, ``text`` (str), ``weight`` (float or NaN), ``tags`` (JSON or None)."""
    return parse_queries(path, format).frame


def read_judgments(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """Judgments: ``query_id``, ``doc_id`` (str), ``grade`` (int64), ``source`` (str | None)."""
    return parse_judgments(path, format).frame


def read_documents(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """Documents: ``doc_id``, ``title``, ``text`` (str), ``fields`` (JSON object text)."""
    return parse_documents(path, format).frame


# -- shared helpers -----------------------------------------------------------------------------


def load_text(path: Path) -> str:
    """The file's text: it exists, is UTF-8 (BOM skipped) and is not blank; else InputError."""
    if not path.is_file():
        raise InputError("no such file", path=path)
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        bad = data[error.start]
        raise InputError(f"not valid UTF-8 text (byte 0x{bad:02x})", path=path, line=line) from None
    if not text.strip():
        raise InputError("file is empty", path=path)
    return text


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for the non-blank lines; ``\\r\\n`` endings are accepted."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line.rstrip("\r")


def check_id(value: object, what: str, path: Path, line: int) -> str:
    """A query or doc id: a non-empty string (or JSON integer) without whitespace."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise InputError(
            f"{what} must be a string, found {_json_type(value)}", path=path, line=line
        )
    if not value:
        raise InputError(f"empty {what}", path=path, line=line)
    if _WHITESPACE.search(value):
        raise InputError(f"{what} {value!r} contains whitespace", path=path, line=line)
    return value


def _json_type(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    names.update({list: "a list", dict: "an object", type(None): "null"})
    return names.get(type(value), type(value).__name__)


def _json_objects(text: str, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    decode = json.JSONDecoder().decode
    for number, line in _lines(text):
        try:
            value = decode(line)
        except json.JSONDecodeError as error:
            problem = f"invalid JSON: {error.msg} (column {error.colno})"
            raise InputError(problem, path=path, line=number) from None
        if not isinstance(value, dict):
            problem = f"expected a JSON object, found {_json_type(value)}"
            raise InputError(problem, path=path, line=number)
        yield number, value


def _delimited_rows(text: str, fmt: str, path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line, stripped fields) of the non-blank CSV/TSV records; TSV has no quoting."""
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text), strict=True)
    else:
        reader = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as error:
            problem = f"malformed {fmt.upper()}: {error}"
            raise InputError(problem, path=path, line=reader.line_num) from None
        fields = [value.strip() for value in row]
        if any(fields):
            yield reader.line_num, fields


def _new_frame(columns: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(columns)


# -- queries ------------------------------------------------------------------------------------


def parse_queries(path: str | Path, format: str | None = None) -> ParsedFile:
    """:func:`read_queries` with the line of every row."""
    path = Path(path)
    fmt = detect_format(path, "queries", format)
    text = load_text(path)
    rows = (
        _query_rows_json(text, path) if fmt == "jsonl" else _query_rows_delimited(text, fmt, path)
    )
    ids: list[str] = []
    texts: list[str] = []
    weights: list[float] = []
    tags: list[str | None] = []
    lines: list[int] = []
    first: dict[str, int] = {}
    for number, query_id, query_text, weight, tag_list in rows:
        if query_id in first:
            problem = f"duplicate query id {query_id!r} (first on line {first[query_id]})"
            raise InputError(problem, path=path, line=number)
        first[query_id] = number
        ids.append(query_id)
        texts.append(query_text)
        weights.append(weight)
        tags.append(tags_json(tag_list))
        lines.append(number)
    import pandas as pd

    frame = _new_frame(
        {
            "query_id": pd.Series(ids, dtype="str"),
            "text": pd.Series(texts, dtype="str"),
            "weight": pd.Series(weights, dtype="float64"),
            "tags": pd.Series(tags, dtype=object),
        }
    )
    return ParsedFile(path, frame, lambda: lines)


_QueryRow = tuple[int, str, str, float, list[str]]


def tags_json(tag_list: list[str]) -> str | None:
    """Canonical tags: sorted, without repeats, as compact JSON; ``None`` when there are none."""
    if not tag_list:
        return None
    return json.dumps(sorted(set(tag_list)), ensure_ascii=False, separators=(",", ":"))


def _weight(value: object, path: Path, line: int) -> float:
    if value is None or value == "":
        return math.nan
    number: float
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"weight {value!r} is not a number", path=path, line=line) from None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    else:
        problem = f"weight must be a number, found {_json_type(value)}"
        raise InputError(problem, path=path, line=line)
    if not math.isfinite(number) or number <= 0:
        raise InputError(f"weight must be a number > 0, found {value!r}", path=path, line=line)
    return number


def _query_rows_json(text: str, path: Path) -> Iterator[_QueryRow]:
    for number, obj in _json_objects(text, path):
        unknown = sorted(set(obj) - {"id", "query_id", "text", "weight", "tags"})
        if unknown:
            problem = f"unknown key {unknown[0]!r} (queries have id, text, weight, tags)"
            raise InputError(problem, path=path, line=number)
        if "id" in obj and "query_id" in obj:
            raise InputError("both 'id' and 'query_id' given", path=path, line=number)
        if "id" not in obj and "query_id" not in obj:
            raise InputError("missing key 'id' (or 'query_id')", path=path, line=number)
        query_id = check_id(obj.get("id", obj.get("query_id")), "query id", path, number)
        if "text" not in obj:
            raise InputError("missing key 'text'", path=path, line=number)
        query_text = obj["text"]
        if not isinstance(query_text, str):
            problem = f"text must be a string, found {_json_type(query_text)}"
            raise InputError(problem, path=path, line=number)
        tag_list = obj.get("tags") or []
        if not isinstance(tag_list, list) or not all(isinstance(t, str) and t for t in tag_list):
            raise InputError("tags must be a list of non-empty strings", path=path, line=number)
        raw_weight = obj.get("weight")
        if isinstance(raw_weight, str):  # JSON has numbers; a string is a mistake upstream
            problem = f"weight must be a number, found a string {raw_weight!r}"
            raise InputError(problem, path=path, line=number)
        weight = _weight(raw_weight, path, number)
        yield number, query_id, query_text.strip(), weight, tag_list


def _query_rows_delimited(text: str, fmt: str, path: Path) -> Iterator[_QueryRow]:
    columns: list[str] | None = None
    for number, fields in _delimited_rows(text, fmt, path):
        if columns is None:
            columns = _query_header(fields, path, number)
            if columns:
                continue
        names = columns or ["query_id", "text", "weight", "tags"]
        low, high = (len(names), len(names)) if columns else (2, 4)
        if not low <= len(fields) <= high:
            expected = f"{low}" if low == high else f"{low} to {high}"
            problem = f"expected {expected} fields, found {len(fields)}"
            raise InputError(problem, path=path, line=number)
        row = dict(zip(names, fields, strict=False))
        query_id = check_id(row["query_id"], "query id", path, number)
        tag_list = [t.strip() for t in row.get("tags", "").split(",") if t.strip()]
        weight = _weight(row.get("weight"), path, number)
        yield number, query_id, row["text"], weight, tag_list


def _query_header(fields: list[str], path: Path, line: int) -> list[str]:
    """Column names when ``fields`` is a header line, else an empty list."""
    if fields[0].lower() not in _QUERY_HEADER_KEYS:
        return []
    names: list[str] = []
    for name in fields:
        column = _QUERY_COLUMNS.get(name.lower())
        if column is None:
            problem = f"unknown column {name!r} (queries have query_id, text, weight, tags)"
            raise InputError(problem, path=path, line=line)
        if column in names:
            raise InputError(f"column {column!r} given twice", path=path, line=line)
        names.append(column)
    if "text" not in names:
        raise InputError("the header has no 'text' column", path=path, line=line)
    return names


# -- judgments ----------------------------------------------------------------------------------


def parse_judgments(path: str | Path, format: str | None = None) -> ParsedFile:
    """:func:`read_judgments` with the line of every row."""
    path = Path(path)
    fmt = detect_format(path, "judgments", format)
    if fmt == "trec":
        return _trec_judgments(path)
    text = load_text(path)
    fast = _judgments_fast(text, fmt, path)
    if fast is not None:
        return ParsedFile(path, fast, lambda: _judgments_slow(text, fmt, path)[1])
    frame, lines = _judgments_slow(text, fmt, path)
    return ParsedFile(path, frame, lambda: lines)


def _trec_judgments(path: Path) -> ParsedFile:
    from evalplat.formats.trec import read_qrels

    frame = read_qrels(path)
    frame["source"] = _none_column(len(frame))

    def locate() -> list[int]:
        # read_qrels keeps file order and skips blank and '#' lines: row k is the k-th other line
        text = path.read_bytes().decode("utf-8", errors="replace")
        return [n for n, line in _lines(text) if not line.lstrip().startswith("#")]

    return ParsedFile(path, frame, locate)


def _none_column(length: int) -> pd.Series[Any]:
    import pandas as pd

    return pd.Series([None] * length, dtype=object)


def _judgment_header(fields: list[str], path: Path, line: int) -> list[str]:
    names = [name.lower() for name in fields]
    if not set(names) & set(JUDGMENT_COLUMNS):
        problem = f"expected a header line naming {', '.join(JUDGMENT_COLUMNS[:3])}[, source]"
        raise InputError(problem, path=path, line=line)
    for name in names:
        if name not in JUDGMENT_COLUMNS:
            problem = f"unknown column {name!r} (judgments have {', '.join(JUDGMENT_COLUMNS)})"
            raise InputError(problem, path=path, line=line)
        if names.count(name) > 1:
            raise InputError(f"column {name!r} given twice", path=path, line=line)
    for required in JUDGMENT_COLUMNS[:3]:
        if required not in names:
            raise InputError(f"the header has no {required!r} column", path=path, line=line)
    return names


def _judgment_records(text: str, fmt: str, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if fmt == "jsonl":
        for number, obj in _json_objects(text, path):
            for key in obj:
                if key not in JUDGMENT_COLUMNS:
                    problem = f"unknown key {key!r} (judgments have {', '.join(JUDGMENT_COLUMNS)})"
                    raise InputError(problem, path=path, line=number)
            yield number, obj
        return
    names: list[str] | None = None
    for number, fields in _delimited_rows(text, fmt, path):
        if names is None:
            names = _judgment_header(fields, path, number)
            continue
        if len(fields) != len(names):
            problem = f"expected {len(names)} fields ({', '.join(names)}), found {len(fields)}"
            raise InputError(problem, path=path, line=number)
        yield number, dict(zip(names, fields, strict=True))


def _grade(value: object, path: Path, line: int) -> int:
    grade: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        grade = value
    elif isinstance(value, str) and _INTEGER.fullmatch(value):
        grade = int(value)
    if grade is not None:
        if not -(2**63) <= grade < 2**63:
            raise InputError(f"grade {value!r} is out of range", path=path, line=line)
        return grade
    shown = repr(value) if isinstance(value, str) else _json_type(value)
    raise InputError(f"grade {shown} is not an integer", path=path, line=line)


def _judgments_slow(text: str, fmt: str, path: Path) -> tuple[pd.DataFrame, list[int]]:
    """The reference reader: one record at a time, naming the first bad line."""
    queries: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    sources: list[str | None] = []
    lines: list[int] = []
    first: dict[tuple[str, str], int] = {}
    for number, record in _judgment_records(text, fmt, path):
        for key in JUDGMENT_COLUMNS[:3]:
            if key not in record:
                raise InputError(f"missing key {key!r}", path=path, line=number)
        query_id = check_id(record["query_id"], "query id", path, number)
        doc_id = check_id(record["doc_id"], "doc id", path, number)
        grade = _grade(record["grade"], path, number)
        source = record.get("source")
        if source is not None and not isinstance(source, str):
            problem = f"source must be a string, found {_json_type(source)}"
            raise InputError(problem, path=path, line=number)
        pair = (query_id, doc_id)
        if pair in first:
            problem = (
                f"duplicate judgment for query {query_id!r}, doc {doc_id!r} "
                f"(first on line {first[pair]})"
            )
            raise InputError(problem, path=path, line=number)
        first[pair] = number
        queries.append(query_id)
        docs.append(doc_id)
        grades.append(grade)
        sources.append(source or None)
        lines.append(number)
    if not lines:
        raise InputError("no judgments", path=path)
    import pandas as pd

    frame = _new_frame(
        {
            "query_id": pd.Series(queries, dtype="str"),
            "doc_id": pd.Series(docs, dtype="str"),
            "grade": pd.Series(grades, dtype="int64"),
            "source": pd.Series(sources, dtype=object),
        }
    )
    return frame, lines


def _judgments_fast(text: str, fmt: str, path: Path) -> pd.DataFrame | None:
    """CSV/TSV/JSONL through pyarrow; ``None`` when anything is off (the slow reader says what).

    It accepts only what :func:`_judgments_slow` accepts and returns the same values.
    """
    import pyarrow as pa

    try:
        table = _arrow_json(text) if fmt == "jsonl" else _arrow_delimited(text, fmt, path)
    except pa.ArrowInvalid:
        return None
    if table is None or table.num_rows == 0:
        return None
    return _checked_frame(table)


def _arrow_json(text: str) -> pa.Table | None:
    import pyarrow as pa
    import pyarrow.json as pajson

    schema = pa.schema([(name, pa.string()) for name in JUDGMENT_COLUMNS])
    schema = schema.set(2, pa.field("grade", pa.int64()))
    table = pajson.read_json(
        pa.py_buffer(text.encode("utf-8")),
        read_options=pajson.ReadOptions(block_size=1 << 24),
        parse_options=pajson.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="error"
        ),
    )
    # pyarrow accepts two objects on one line; json.loads (the reference) does not
    return table if table.num_rows == _count_non_blank_lines(text) else None


def _count_non_blank_lines(text: str) -> int:
    body = text[:-1] if text.endswith("\n") else text
    first_blank = not body.split("\n", 1)[0].strip()
    if not first_blank and _BLANK_LINE.search(body) is None:  # the usual case: no Python loop
        return body.count("\n") + 1
    return sum(1 for line in body.split("\n") if line.strip())


def _arrow_delimited(text: str, fmt: str, path: Path) -> pa.Table | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    header = next(_delimited_rows(text.split("\n", 1)[0], fmt, path), None)
    if header is None:
        return None
    try:
        names = _judgment_header(header[1], path, 1)
    except InputError:
        return None
    table = pacsv.read_csv(
        pa.py_buffer(text.encode("utf-8")),
        read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(
            delimiter="," if fmt == "csv" else "\t",
            quote_char='"' if fmt == "csv" else False,
            double_quote=fmt == "csv",
            newlines_in_values=fmt == "csv",
            ignore_empty_lines=True,
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.string()),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
        ),
    )
    columns = {name: pc.utf8_trim_whitespace(table.column(name)) for name in names}
    if not pc.all(pc.match_substring_regex(columns["grade"], r"^[+-]?[0-9]+$")).as_py():
        return None
    try:
        columns["grade"] = pc.cast(columns["grade"], pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # out of the int64 range: the slow reader decides
    if "source" in columns:
        columns["source"] = pc.if_else(
            pc.equal(pc.utf8_length(columns["source"]), 0), None, columns["source"]
        )
    return pa.table(columns)


def _checked_frame(table: pa.Table) -> pd.DataFrame | None:
    """The frame of a parsed judgments table, or ``None`` if any row breaks a rule."""
    import pandas as pd
    import pyarrow.compute as pc

    for name in ("query_id", "doc_id", "grade"):
        if table.column(name).null_count:
            return None
    for name in ("query_id", "doc_id"):
        column = table.column(name)
        if pc.any(pc.equal(pc.utf8_length(column), 0)).as_py():
            return None
        if pc.any(pc.match_substring_regex(column, r"\s")).as_py():
            return None
    pairs = table.select(["query_id", "doc_id"]).group_by(["query_id", "doc_id"]).aggregate([])
    if pairs.num_rows != table.num_rows:
        return None
    sources: pd.Series[Any]
    if "source" in table.column_names and table.column("source").null_count < table.num_rows:
        raw = table.column("source").to_pylist()
        sources = pd.Series([value or None for value in raw], dtype=object)
    else:
        sources = _none_column(table.num_rows)
    return _new_frame(
        {
            "query_id": table.column("query_id").to_pandas().astype("str"),
            "doc_id": table.column("doc_id").to_pandas().astype("str"),
            "grade": table.column("grade").to_pandas().astype("int64"),
            "source": sources,
        }
    )


# -- documents ----------------------------------------------------------------------------------


def parse_documents(path: str | Path, format: str | None = None) -> ParsedFile:
    """:func:`read_documents` with the line of every row."""
    path = Path(path)
    detect_format(path, "documents", format)
    text = load_text(path)
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    extras: list[str] = []
    lines: list[int] = []
    first: dict[str, int] = {}
    for number, obj in _json_objects(text, path):
        if "id" in obj and "doc_id" in obj:
            raise InputError("both 'id' and 'doc_id' given", path=path, line=number)
        if "id" not in obj and "doc_id" not in obj:
            raise InputError("missing key 'id' (or 'doc_id')", path=path, line=number)
        raw_id = obj.pop("id") if "id" in obj else obj.pop("doc_id")
        doc_id = check_id(raw_id, "doc id", path, number)
        if doc_id in first:
            problem = f"duplicate doc id {doc_id!r} (first on line {first[doc_id]})"
            raise InputError(problem, path=path, line=number)
        first[doc_id] = number
        for key, out in (("title", titles), ("text", texts)):
            value = obj.pop(key, None)
            if value is not None and not isinstance(value, str):
                problem = f"{key} must be a string, found {_json_type(value)}"
                raise InputError(problem, path=path, line=number)
            out.append(value or "")
        ids.append(doc_id)
        extras.append(fields_json(obj))
        lines.append(number)
    import pandas as pd

    frame = _new_frame(
        {
            "doc_id": pd.Series(ids, dtype="str"),
            "title": pd.Series(titles, dtype="str"),
            "text": pd.Series(texts, dtype="str"),
            "fields": pd.Series(extras, dtype="str"),
        }
    )
    return ParsedFile(path, frame, lambda: lines)


def fields_json(extra: dict[str, Any]) -> str:
    """Canonical JSON of a document's other fields: sorted keys, compact, UTF-8 kept."""
    return json.dumps(extra, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
