"""Diversity qrels: ``query subtopic doc grade``, the TREC qrels whose second column (trec_eval's
ignored "iteration") is the subtopic, or intent, the judgment is for, as ndeval and
ir_measures read it. Only the intent-aware measures read this form; every other measure reads
the qrels as ``evalplat.formats.trec`` does.

A subtopic is a whole number (ASCII digits, as ndeval's are); a document may be judged once per
subtopic, so a (query, subtopic, doc) repeated is refused, naming its line. Comments (``#``)
and blank lines are skipped as in the other TREC readers. Diversity qrels are small (thousands
of lines a track, but a judged pool may be far larger): the vectorised tiers of the TREC reader
read them, and only when they cannot, or a check fails, one plain pass names the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.inputs.validation import check_identifier, parse_grade, shown

if TYPE_CHECKING:
    import pyarrow as pa

SUBTOPIC_DIGITS = 9


def read_subtopic_qrels(path: str | Path) -> pa.Table:
    """Columns ``query_id``, ``subtopic`` (int64), ``doc_id``, ``grade`` (int64), in file order.

    Raises ``InputError`` naming the file and line for a wrong field count, a subtopic that is
    not a whole number, a bad id or grade, a repeated (query, subtopic, doc), bytes that are not
    UTF-8; naming the file when it is missing or holds no judgment."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", path=path)
    if path.stat().st_size:
        table = _read_fast(path)
        if table is not None:
            return table
    return _read_slow(path)


def _read_fast(path: Path) -> pa.Table | None:
    """The file through the TREC reader's vectorised tiers, or None when it, the subtopics or
    the (query, subtopic, doc) triples need the line pass."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalplat.formats.trec import read_qrels_iterations

    table = read_qrels_iterations(path)
    if table is None:
        return None
    text = table.column("iteration")
    if not pc.all(pc.match_substring_regex(text, rf"^[0-9]{{1,{SUBTOPIC_DIGITS}}}$")).as_py():
        return None
    subtopic = pc.cast(text, pa.int64())
    codes = pd.DataFrame(
        {
            "query": pc.dictionary_encode(table.column("query_id")).combine_chunks().indices,
            "subtopic": subtopic.to_numpy(),
            "doc": pc.dictionary_encode(table.column("doc_id")).combine_chunks().indices,
        }
    )
    if codes.duplicated().any():
        return None
    return pa.table(
        {
            "query_id": table.column("query_id"),
            "subtopic": subtopic,
            "doc_id": table.column("doc_id"),
            "grade": table.column("grade"),
        }
    )


def _read_slow(path: Path) -> pa.Table:
    """The reference pass, one line at a time, naming the first bad line."""
    import pyarrow as pa

    from evalplat.formats.trec import lines_of

    columns: dict[str, list[object]] = {"query_id": [], "subtopic": [], "doc_id": [], "grade": []}
    seen: set[tuple[str, int, str]] = set()
    for number, fields in lines_of(path):
        if len(fields) != 4:
            raise InputError(f"expected 4 fields, found {len(fields)}", path=path, line=number)
        query, text, doc, grade = fields
        if not (text.isascii() and text.isdigit() and len(text) <= SUBTOPIC_DIGITS):
            raise InputError(
                f"subtopic {shown(text)} is not a whole number (the intent-aware measures "
                "read the second column as the subtopic)",
                path=path,
                line=number,
            )
        key = (
            check_identifier(query, "query id", path=path, line=number),
            int(text),
            check_identifier(doc, "doc id", path=path, line=number),
        )
        if key in seen:
            raise InputError(
                f"duplicate judgment: query {query!r}, subtopic {text}, doc {doc!r}",
                path=path,
                line=number,
            )
        seen.add(key)
        columns["query_id"].append(key[0])
        columns["subtopic"].append(key[1])
        columns["doc_id"].append(key[2])
        columns["grade"].append(parse_grade(grade, path=path, line=number))
    if not seen:
        raise InputError("no judgments", path=path)
    types = {"query_id": pa.string(), "subtopic": pa.int64(), "doc_id": pa.string(),
             "grade": pa.int64()}  # fmt: skip
    return pa.table({name: pa.array(values, type=types[name]) for name, values in columns.items()})
