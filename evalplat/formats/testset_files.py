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
in documents), and so is a JSON object naming a key twice (the line and the key named); tags
are stored sorted and without repeats, as a JSON list, or ``None`` when there are none. Every
problem is one :class:`~evalplat.errors.InputError` naming the file and line.

Judgments are the large input (millions of lines): CSV/TSV is read by pyarrow and validated in
vectorised kernels; only when that finds a problem does the line-by-line reader (the reference,
which names the line) run. JSONL is one tight loop over ``json.loads``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.formats.judgment_files import (
    JUDGMENT_COLUMNS,
    _judgments_fast,
    _judgments_slow,
    parse_judgments,
)
from evalplat.formats.query_files import parse_queries, tags_json
from evalplat.formats.text_files import (
    ACCEPTED,
    FORMATS,
    Kind,
    ParsedFile,
    check_id,
    check_text,
    detect_format,
    json_objects,
    json_type,
    load_text,
    new_frame,
)
from evalplat.inputs.validation import check_json_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ACCEPTED",
    "FORMATS",
    "JUDGMENT_COLUMNS",
    "Kind",
    "ParsedFile",
    "_judgments_fast",
    "_judgments_slow",
    "check_id",
    "detect_format",
    "fields_json",
    "load_text",
    "parse_documents",
    "parse_judgments",
    "parse_queries",
    "read_documents",
    "read_judgments",
    "read_queries",
    "tags_json",
]


def read_queries(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """Queries: ``query_id``, ``text`` (str), ``weight`` (float or NaN), ``tags`` (JSON or None)."""
    return parse_queries(path, format).frame


def read_judgments(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """Judgments: ``query_id``, ``doc_id`` (str), ``grade`` (int64), ``source`` (str | None)."""
    return parse_judgments(path, format).frame


def read_documents(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """Documents: ``doc_id``, ``title``, ``text`` (str), ``fields`` (JSON object text)."""
    return parse_documents(path, format).frame


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
    for number, obj in json_objects(text, path):
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
                problem = f"{key} must be a string, found {json_type(value)}"
                raise InputError(problem, path=path, line=number)
            out.append(check_text(value or "", f"document {key}", path, number))
        ids.append(doc_id)
        try:
            check_json_text(obj, "document field", path=path)
        except InputError as error:
            raise InputError(error.problem, path=path, line=number) from None
        extras.append(fields_json(obj))
        lines.append(number)
    import pandas as pd

    frame = new_frame(
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
