"""Test set content in memory: queries, judgments and an optional corpus, validated and hashed.

``load_testset`` reads the files (see :mod:`evalplat.formats.testset_files` for the formats) and
checks them against each other; ``TestSetContent`` is what the store writes as one immutable
version; the ``write_*`` helpers and :func:`export_testset` write a content back out.

Columns of the three frames:

- ``queries``: ``query_id`` (str), ``text`` (str, ``""`` when unknown), ``weight`` (float64,
  NaN when not given), ``tags`` (JSON list text, or None).
- ``judgments``: ``query_id``, ``doc_id`` (str), ``grade`` (int64), ``source`` (str or None,
  e.g. ``human``, ``llm``, ``click``).
- ``documents`` (or ``None``): ``doc_id``, ``title``, ``text`` (str), ``fields`` (JSON object
  text of the other fields).

Cross-file rules: a judgment for a query that is not in the queries file is an error naming the
judgments file and line; a query without judgments is kept (it scores 0 and counts); judged
documents missing from the corpus are allowed (corpora are often samples). Without a queries
file the queries are those the judgments file names with their texts (the judgment lists of
other tools), else the judged query ids with empty text.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.formats.testset_files import (
    fields_json,
    parse_documents,
    parse_judgments,
    parse_queries,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_NULL = "~"  # a field that is missing; every present field is "<length>:<value>"


@dataclass(frozen=True, eq=False)
class TestSetContent:
    """One test set version's content (frames described in the module docstring).

    Hashes are sha256 over a canonical serialisation that does not depend on row order, file
    format or JSON spelling. Each row becomes one line of tab-joined fields, a present string
    written ``<length>:<value>`` (unambiguous whatever the text holds) and a missing one ``~``;
    grades are decimal integers, weights Python ``repr`` floats, tags a sorted JSON list, fields
    a JSON object with sorted keys (``{}`` and missing are the same). The lines are sorted, so
    file order never matters, and hashed under a header naming the section and its row count::

        content_hash = sha256("evalplat test set v1" | queries | judgments | corpus_hash or "-")
        corpus_hash  = sha256("evalplat corpus v1" | documents)

    The corpus has its own hash so that versions differing only in judgments share one stored
    corpus; a content's hash includes its corpus hash, so changing a document is a new version.
    When a pair has grades from several sources, ``grade rule <rule>`` follows the judgments.
    """

    __test__ = False  # not a pytest test class, despite the name

    queries: pd.DataFrame
    judgments: pd.DataFrame
    documents: pd.DataFrame | None = None
    grade_rule: str | None = None  # how several sources' grades of one pair resolve
    # ``corpus_hash`` of ``documents`` when known already (the store keeps it with the corpus)
    known_corpus_hash: str | None = field(default=None, repr=False)

    @property
    def qrels(self) -> pd.DataFrame:
        """One grade per (query, document): ``judgments`` as they are when every pair was graded
        once, else resolved by ``grade_rule`` (``evalplat.testsets.raters``, default ``mean``)."""
        from evalplat.testsets.raters import DEFAULT_GRADE_RULE, check_grade_rule, resolve_grades

        rule = check_grade_rule(self.grade_rule or DEFAULT_GRADE_RULE)
        if not self.several_grades:  # known already: resolving would only check it again
            return self.judgments
        return resolve_grades(self.judgments, rule)

    @property
    def people_qrels(self) -> pd.DataFrame:
        """One grade per (query, document) from people's grades alone
        (``evalplat.testsets.raters.people_grades``): what every stored figure is scored on."""
        from evalplat.testsets.raters import people_grades

        return people_grades(self.judgments, self.grade_rule, several=self.several_grades)

    @cached_property
    def several_grades(self) -> bool:
        """Whether some (query, document) pair has grades from several sources."""
        from evalplat.testsets.raters import several_grades

        return several_grades(self.judgments)

    def content_hash(self) -> str:
        digest = hashlib.sha256(b"evalplat test set v1\n")
        query_rows = [
            _text_field(self.queries["query_id"]),
            _text_field(self.queries["text"].fillna("")),
            _weight_field(self.queries["weight"]),
            _json_field(self.queries["tags"], list_of_tags=True),
        ]
        _digest_section(digest, "queries", query_rows)
        judgments = self.judgments
        sources = judgments.get("source")
        judgment_rows = [
            _text_field(judgments["query_id"]),
            _text_field(judgments["doc_id"]),
            _int_field(judgments["grade"]),
            _text_field(sources if sources is not None else _nulls(len(judgments))),
        ]
        _digest_section(digest, "judgments", judgment_rows)
        from evalplat.testsets.raters import DEFAULT_GRADE_RULE

        if self.several_grades:  # hashed only then: single-rater versions keep their hash
            digest.update(f"grade rule {self.grade_rule or DEFAULT_GRADE_RULE}\n".encode())
        corpus = "-" if self.documents is None else self.corpus_hash()
        digest.update(f"corpus {corpus}\n".encode())
        return digest.hexdigest()

    def corpus_hash(self) -> str:
        if self.documents is None:
            raise InputError("this test set has no documents")
        if self.known_corpus_hash is not None:
            return self.known_corpus_hash
        documents = self.documents
        digest = hashlib.sha256(b"evalplat corpus v1\n")
        rows = [
            _text_field(documents["doc_id"]),
            _text_field(documents["title"].fillna("")),
            _text_field(documents["text"].fillna("")),
            _json_field(documents["fields"], list_of_tags=False),
        ]
        _digest_section(digest, "documents", rows)
        return digest.hexdigest()


def load_testset(
    qrels: str | Path,
    queries: str | Path | None = None,
    docs: str | Path | None = None,
    format: str | None = None,
    *,
    queries_format: str | None = None,
    docs_format: str | None = None,
    grade_rule: str | None = None,
) -> TestSetContent:
    """Read and cross-check a test set's files; nothing is returned unless all of it is valid.

    ``format`` is the judgments' format (``trec``, ``csv``, ``tsv``, ``jsonl``, or another tool's
    judgment list: ``quepid``, ``rre``, ``srw``, ``ltr``; default from the extension and the
    content); the queries a judgment list names are the queries when no ``queries`` file is
    given. ``queries_format`` and ``docs_format`` override the other two files' formats.
    ``grade_rule`` resolves pairs graded by several sources (``evalplat.testsets.raters``).
    """
    import pandas as pd

    judgments_file = parse_judgments(qrels, format)
    judgments = judgments_file.frame
    if queries is None and judgments_file.queries is not None:
        queries_frame = judgments_file.queries  # the texts a judgment list names
    elif queries is None:
        query_ids = judgments["query_id"].drop_duplicates().reset_index(drop=True)
        queries_frame = pd.DataFrame(
            {
                "query_id": query_ids.astype("str"),
                "text": pd.Series([""] * len(query_ids), dtype="str"),
                "weight": pd.Series([math.nan] * len(query_ids), dtype="float64"),
                "tags": pd.Series([None] * len(query_ids), dtype=object),
            }
        )
    else:
        queries_file = parse_queries(queries, queries_format)
        queries_frame = queries_file.frame
        known = judgments["query_id"].isin(queries_frame["query_id"])
        if not known.all():
            row = int((~known).to_numpy().argmax())
            query_id = judgments["query_id"].iloc[row]
            raise InputError(
                f"judgment for query {query_id!r}, which is not in {queries_file.path.name}",
                path=judgments_file.path,
                line=judgments_file.line_of(row),
            )
    documents = None if docs is None else parse_documents(docs, docs_format).frame
    if grade_rule is not None:
        from evalplat.testsets.raters import check_grade_rule

        check_grade_rule(grade_rule)
    return TestSetContent(
        queries=queries_frame, judgments=judgments, documents=documents, grade_rule=grade_rule
    )


# -- canonical serialisation --------------------------------------------------------------------


def _digest_section(digest: Any, name: str, fields: list[pa.Array]) -> None:
    import pyarrow.compute as pc

    count = len(fields[0])
    digest.update(f"{name} {count}\n".encode())
    if count == 0:
        return
    lines = pc.binary_join_element_wise(*fields, "\t")
    # sorted as lines, hashed each with its newline: the UTF-8 text of the sorted lines, one
    # after the other, read straight from Arrow's buffer
    ended = pc.binary_join_element_wise(lines, "", "\n")
    ordered = pc.take(ended, pc.sort_indices(lines))
    for chunk in getattr(ordered, "chunks", [ordered]):
        _digest_text(digest, chunk)


def _digest_text(digest: Any, strings: pa.Array) -> None:
    """Feed the UTF-8 bytes of ``strings``, one after the other, straight from Arrow's buffer."""
    import numpy as np

    if not len(strings):
        return
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset :]
    text = memoryview(strings.buffers()[2])
    start, end = int(offsets[0]), int(offsets[len(strings)])
    step = 1 << 24  # a few MB at a time
    for first in range(start, end, step):
        digest.update(text[first : min(first + step, end)])


def _text_field(series: pd.Series[Any]) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pa.array(series, type=pa.string(), from_pandas=True)
    lengths = pc.cast(pc.utf8_length(values), pa.string())
    return pc.fill_null(pc.binary_join_element_wise(lengths, values, ":"), _NULL)


def _int_field(series: pd.Series[Any]) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.cast(pa.array(series.astype("int64")), pa.string())


def _weight_field(series: pd.Series[Any]) -> pa.Array:
    import pyarrow as pa

    values = [_NULL if _missing(w) else repr(float(w)) for w in series.tolist()]
    return pa.array(values, type=pa.string())


def _json_field(series: pd.Series[Any], *, list_of_tags: bool) -> pa.Array:
    """Tags or document fields, re-serialised canonically whatever JSON spelling they came in."""
    import pyarrow as pa

    values: list[str] = []
    for raw in series.tolist():
        parsed = None if _missing(raw) else json.loads(raw) if isinstance(raw, str) else raw
        if list_of_tags:
            tags = sorted(set(parsed or []))
            values.append(json.dumps(tags, ensure_ascii=False) if tags else _NULL)
        else:
            values.append(fields_json(parsed or {}))
    return pa.array(values, type=pa.string())


def _missing(value: object) -> bool:
    if value is None or type(value).__name__ == "NAType":
        return True
    return isinstance(value, float) and math.isnan(value)


def _nulls(length: int) -> pd.Series[Any]:
    import pandas as pd

    return pd.Series([None] * length, dtype=object)


# -- writing ------------------------------------------------------------------------------------


def write_qrels(judgments: pd.DataFrame, path: str | Path) -> Path:
    """TREC qrels, ``qid 0 docid grade`` per line, in the frame's order (sources are dropped)."""
    lines = (
        judgments["query_id"].astype(str)
        + " 0 "
        + judgments["doc_id"].astype(str)
        + " "
        + judgments["grade"].astype("int64").astype(str)
    )
    return _write_lines(path, lines.tolist())


def write_judgments(judgments: pd.DataFrame, path: str | Path, format: str = "trec") -> Path:
    """Judgments as ``trec`` qrels, ``csv``/``tsv`` with a header, or ``jsonl``."""
    if format == "trec":
        return write_qrels(judgments, path)
    rows = _records(judgments, ["query_id", "doc_id", "grade", "source"])
    if format == "jsonl":
        return _write_lines(path, (_json_line(_drop_nulls(r)) for r in rows))
    if format in ("csv", "tsv"):
        return _write_delimited(path, format, ["query_id", "doc_id", "grade", "source"], rows)
    raise InputError(f"cannot write judgments as {format!r} (trec, csv, tsv, jsonl)")


def write_queries(queries: pd.DataFrame, path: str | Path, format: str = "tsv") -> Path:
    """Queries as ``tsv``/``csv`` (a header with weight and tags when any is set) or ``jsonl``."""
    rows = _records(queries, ["query_id", "text", "weight", "tags"])
    for row in rows:
        row["weight"] = None if _missing(row["weight"]) else float(row["weight"])
        row["tags"] = None if _missing(row["tags"]) else json.loads(row["tags"])
    if format == "jsonl":
        out = ({"id": r["query_id"], **_drop_nulls({**r, "query_id": None})} for r in rows)
        return _write_lines(path, (_json_line(r) for r in out))
    if format not in ("csv", "tsv"):
        raise InputError(f"cannot write queries as {format!r} (tsv, csv, jsonl)")
    columns = ["query_id", "text"]
    if any(r["weight"] is not None or r["tags"] for r in rows):
        columns += ["weight", "tags"]
    for row in rows:
        tags = row["tags"] or []
        if any("," in tag for tag in tags):
            raise InputError("a tag contains a comma; write the queries as jsonl", path=path)
        row["tags"] = ",".join(tags) or None
    # always a header: a first query id such as "id" would otherwise read as one
    return _write_delimited(path, format, columns, rows)


def write_documents(documents: pd.DataFrame, path: str | Path) -> Path:
    """Documents as JSONL: ``id``, ``title``, ``text``, then the other fields (sorted keys)."""
    lines = []
    for row in _records(documents, ["doc_id", "title", "text", "fields"]):
        extra = {} if _missing(row["fields"]) else json.loads(row["fields"])
        record = {"id": row["doc_id"], "title": row["title"] or "", "text": row["text"] or ""}
        lines.append(_json_line({**record, **dict(sorted(extra.items()))}))
    return _write_lines(path, lines)


def export_testset(content: TestSetContent, directory: str | Path) -> dict[str, Path]:
    """Write ``content`` into ``directory`` so that :func:`load_testset` reads it back unchanged.

    Judgments go to ``qrels.txt`` (TREC), or ``judgments.jsonl`` when any has a source, which
    TREC qrels cannot hold. Queries go to ``queries.tsv``, or ``queries.jsonl`` when a text holds
    a tab or newline or a tag a comma. Documents, if any, go to ``docs.jsonl``.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    judgments = content.judgments
    has_sources = "source" in judgments and judgments["source"].notna().any()
    if has_sources:
        written["qrels"] = write_judgments(judgments, directory / "judgments.jsonl", "jsonl")
    else:
        written["qrels"] = write_qrels(judgments, directory / "qrels.txt")
    try:
        written["queries"] = write_queries(content.queries, directory / "queries.tsv")
    except InputError:
        (directory / "queries.tsv").unlink(missing_ok=True)
        written["queries"] = write_queries(content.queries, directory / "queries.jsonl", "jsonl")
    if content.documents is not None:
        written["docs"] = write_documents(content.documents, directory / "docs.jsonl")
    return written


def _records(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    present = [c for c in columns if c in frame]
    rows: list[dict[str, Any]] = []
    for record in frame[present].astype(object).to_dict("records"):
        rows.append({c: None if _missing(record.get(c)) else record.get(c) for c in columns})
    return rows


def _drop_nulls(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if value is not None}


def _json_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(", ", ": "))


def _check_tsv(values: Iterable[str]) -> None:
    for value in values:
        if "\t" in value or "\n" in value or "\r" in value:
            raise InputError(f"{value[:40]!r} holds a tab or line break; write it as jsonl")


def _write_delimited(
    path: str | Path, format: str, columns: list[str], rows: list[dict[str, Any]]
) -> Path:
    """CSV (quoted where needed) or TSV (no quoting, so no field may hold a tab or line break)."""
    import csv
    import io

    table = [columns] + [["" if r.get(c) is None else str(r[c]) for c in columns] for r in rows]
    if format == "tsv":
        _check_tsv(value for row in table for value in row)
        return _write_lines(path, ("\t".join(row) for row in table))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(table)
    path = Path(path)
    path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    return path


def _write_lines(path: str | Path, lines: Iterable[str]) -> Path:
    path = Path(path)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")
    return path
