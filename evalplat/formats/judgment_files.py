"""Reading judgment files (TREC qrels, CSV, TSV, JSONL) into ``query_id, doc_id, grade, source``.

Judgments are the large input (millions of lines): CSV/TSV and JSONL are read by pyarrow and
validated in vectorised kernels (``_judgments_fast``); only when that finds a problem does the
line-by-line reader (``_judgments_slow``, the reference, which names the line) run. The fast
path accepts only what the reference accepts and returns the same values.

CSV and TSV may also carry the columns of the files handed to people (``ANNOTATION_COLUMNS``:
``evalplat unjudged``, ``evalplat judge export``), so those files come back as they are; the
readers skip them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.formats.text_files import (
    JUDGMENT_LISTS,
    ParsedFile,
    check_id,
    delimited_rows,
    detect_format,
    json_objects,
    json_type,
    load_text,
    new_frame,
    non_blank_lines,
)
from evalplat.inputs.validation import (
    ARROW_CONTROL,
    GRADE_MAX,
    GRADE_MIN,
    ID_MAX_LENGTH,
    SOURCE_MAX_LENGTH,
    check_source,
    parse_grade,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


JUDGMENT_COLUMNS = ("query_id", "doc_id", "grade", "source")
# Columns of the files handed to people (``evalplat unjudged``, ``evalplat judge export``) that
# come back with the grades: read past, never stored.
ANNOTATION_COLUMNS = ("query", "rank", "title", "text", "judge_grade", "rationale")
_INTEGER = re.compile(r"[+-]?[0-9]+")


# starts with a literal so that the scan is fast; a blank first line is checked apart
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*(?:\n|\Z)")


def parse_judgments(path: str | Path, format: str | None = None) -> ParsedFile:
    """:func:`read_judgments` with the line of every row (and the queries a judgment list of
    another tool names, in ``queries``)."""
    path = Path(path)
    fmt = judgments_format(path, format)
    if fmt in JUDGMENT_LISTS:
        return _JUDGMENT_LIST_READERS[fmt](path)
    if fmt == "trec":
        return _trec_judgments(path)
    text = load_text(path)
    fast = _judgments_fast(text, fmt, path)
    if fast is not None:
        return ParsedFile(path, fast, lambda: _judgments_slow(text, fmt, path)[1])
    frame, lines = _judgments_slow(text, fmt, path)
    return ParsedFile(path, frame, lambda: lines)


def judgments_format(path: Path, format: str | None = None) -> str:
    """The format of a judgments file: ``format`` when given; else its extension, then its
    content tells a judgment list of another tool (``formats/judgment_lists.py``) from the
    plain formats (a ``.json`` file is always one of those)."""
    from evalplat.formats.judgment_lists import sniff_judgments

    if format is not None:
        return detect_format(path, "judgments", format)
    if path.suffix.lower() == ".json":
        return sniff_judgments(path, "json")
    return sniff_judgments(path, detect_format(path, "judgments"))


def _read_quepid(path: Path) -> ParsedFile:
    from evalplat.formats.quepid import parse_quepid

    return parse_quepid(path)


def _read_rre(path: Path) -> ParsedFile:
    from evalplat.formats.rre import parse_rre

    return parse_rre(path)


def _read_srw(path: Path) -> ParsedFile:
    from evalplat.formats.srw import parse_srw

    return parse_srw(path)


def _read_ltr(path: Path) -> ParsedFile:
    from evalplat.formats.ltr import parse_ltr

    return parse_ltr(path)


# the judgment lists of other tools, by --format name (JUDGMENT_LISTS)
_JUDGMENT_LIST_READERS = {
    "quepid": _read_quepid,
    "rre": _read_rre,
    "srw": _read_srw,
    "ltr": _read_ltr,
}


def _trec_judgments(path: Path) -> ParsedFile:
    from evalplat.formats.trec import read_qrels

    frame = read_qrels(path)
    frame["source"] = _none_column(len(frame))

    def locate() -> list[int]:
        # read_qrels keeps file order and skips blank and '#' lines: row k is the k-th other line
        text = path.read_bytes().decode("utf-8", errors="replace")
        return [n for n, line in non_blank_lines(text) if not line.lstrip().startswith("#")]

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
        if name not in JUDGMENT_COLUMNS and name not in ANNOTATION_COLUMNS:
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
        for number, obj in json_objects(text, path):
            for key in obj:
                if key not in JUDGMENT_COLUMNS:
                    problem = f"unknown key {key!r} (judgments have {', '.join(JUDGMENT_COLUMNS)})"
                    raise InputError(problem, path=path, line=number)
            yield number, obj
        return
    names: list[str] | None = None
    for number, fields in delimited_rows(text, fmt, path):
        if names is None:
            names = _judgment_header(fields, path, number)
            continue
        if len(fields) != len(names):
            problem = f"expected {len(names)} fields ({', '.join(names)}), found {len(fields)}"
            raise InputError(problem, path=path, line=number)
        yield number, dict(zip(names, fields, strict=True))


def _grade(value: object, path: Path, line: int) -> int:
    return parse_grade(value, path=path, line=line)


def _judgments_slow(text: str, fmt: str, path: Path) -> tuple[pd.DataFrame, list[int]]:
    """The reference reader: one record at a time, naming the first bad line."""
    queries: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    sources: list[str | None] = []
    lines: list[int] = []
    first: dict[tuple[str, str, str | None], int] = {}
    for number, record in _judgment_records(text, fmt, path):
        for key in JUDGMENT_COLUMNS[:3]:
            if key not in record:
                raise InputError(f"missing key {key!r}", path=path, line=number)
        query_id = check_id(record["query_id"], "query id", path, number)
        doc_id = check_id(record["doc_id"], "doc id", path, number)
        grade = _grade(record["grade"], path, number)
        source = record.get("source")
        if source is not None and not isinstance(source, str):
            problem = f"source must be a string, found {json_type(source)}"
            raise InputError(problem, path=path, line=number)
        if source:
            check_source(source, path=path, line=number)
        # a second grade of a pair from another source is a second rater, not a duplicate
        pair = (query_id, doc_id, source or None)
        if pair in first:
            by = f" from source {source!r}" if source else ""
            problem = (
                f"duplicate judgment for query {query_id!r}, doc {doc_id!r}{by} "
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

    frame = new_frame(
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
    if table.num_rows != _count_non_blank_lines(text):
        return None
    # pyarrow keeps the last of a key written twice; the reference refuses it, naming the line
    if any(text.count(f'"{name}"') > table.num_rows for name in JUDGMENT_COLUMNS):
        return None
    return table


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

    header = next(delimited_rows(text.split("\n", 1)[0], fmt, path), None)
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
    kept = [name for name in names if name in JUDGMENT_COLUMNS]
    columns = {name: pc.utf8_trim_whitespace(table.column(name)) for name in kept}
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

    from evalplat.inputs.columns import has_control_characters

    for name in ("query_id", "doc_id", "grade"):
        if table.column(name).null_count:
            return None
    for name in ("query_id", "doc_id"):
        column = table.column(name)
        lengths = pc.utf8_length(column)
        if pc.min(lengths).as_py() == 0 or pc.max(lengths).as_py() > ID_MAX_LENGTH:
            return None
        if pc.any(pc.match_substring_regex(column, r"[\s\p{Z}]|" + ARROW_CONTROL)).as_py():
            return None
    grades = table.column("grade")
    if pc.min(grades).as_py() < GRADE_MIN or pc.max(grades).as_py() > GRADE_MAX:
        return None
    if "source" in table.column_names and table.column("source").null_count < table.num_rows:
        source = table.column("source")
        if pc.max(pc.utf8_length(source)).as_py() > SOURCE_MAX_LENGTH:
            return None
        if has_control_characters(source):
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
    return new_frame(
        {
            "query_id": table.column("query_id").to_pandas().astype("str"),
            "doc_id": table.column("doc_id").to_pandas().astype("str"),
            "grade": table.column("grade").to_pandas().astype("int64"),
            "source": sources,
        }
    )
