"""Readers for TREC qrels (``qid iter docid grade``) and TREC run files.

Run lines are ``qid Q0 docid rank score runid``; anything after the run id is ignored, as
trec_eval does (its ``results.trunc`` test file has junk there). Fields are separated by ASCII
whitespace (spaces, tabs), as trec_eval splits them; Unicode whitespace (a no-break space U+00A0,
an ideographic space U+3000) inside an id is refused, as the CSV reader refuses it. Blank
lines and lines whose first non-blank character is ``#`` are skipped (trec_eval 10 does the
same); a ``#`` inside a field (MS MARCO v2.1 docids) is part of the field.

Reading is tiered so that errors cost nothing on good input: the vectorised tiers of
:mod:`evalplat.formats.trec_arrow` read the common cases (one delimiter; mixed whitespace,
comments, extra trailing fields), and only when both fail, or when a duplicate is found, a
line-by-line pass here names the first bad line in an ``InputError``. That slow pass is the
reference: the fast tiers only accept input it would accept, and return the same values.

Rules enforced (each an ``InputError`` with path and line): wrong field count, a grade that is not
an integer in range (ASCII digits), a score that is not a finite number, an id that breaks the input
contract (:mod:`evalplat.inputs.validation`), a duplicate (query, doc) judgment, a doc id repeated
in one query's ranking (trec_eval refuses it too), an empty file, bytes that are not UTF-8.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.formats.trec_arrow import FastPathFailed, arrow_types, read_delimited, read_split
from evalplat.inputs.validation import check_identifier, parse_grade, parse_score

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pandas as pd
    import pyarrow as pa

QRELS_FIELDS = 4
RUN_FIELDS = 6

# (field index, output name) kept from each line
_QRELS_KEEP = ((0, "query_id"), (2, "doc_id"), (3, "grade"))
_RUN_KEEP = ((0, "query_id"), (2, "doc_id"), (4, "score"))
_ITERATION_KEEP = ((0, "query_id"), (1, "iteration"), (2, "doc_id"), (3, "grade"))


def read_qrels(path: str | Path) -> pd.DataFrame:
    """Read a TREC qrels file into columns ``query_id`` (str), ``doc_id`` (str), ``grade`` (int64).

    Negative grades (trec_eval's "judged, not in the pool", usually ``-1``) are kept as given.
    """
    frame: pd.DataFrame = read_qrels_table(path).to_pandas()
    return frame


def read_run(path: str | Path) -> pd.DataFrame:
    """Read a TREC run file into columns ``query_id`` (str), ``doc_id`` (str), ``score`` (float64).

    Rows keep file order; the rank column is ignored (trec_eval orders by score, then doc id).
    """
    frame: pd.DataFrame = read_run_table(path).to_pandas()
    return frame


def read_qrels_table(path: str | Path, *, check_duplicates: bool = True) -> pa.Table:
    """:func:`read_qrels` as a pyarrow Table (the engine's fast path, no pandas conversion).

    ``check_duplicates=False`` is for a caller that checks pairs itself on integer codes and
    calls :func:`name_first_error` when it finds one.
    """
    return _read(Path(path), QRELS_FIELDS, _QRELS_KEEP, exact=True, check=check_duplicates)


def read_run_table(path: str | Path, *, check_duplicates: bool = True) -> pa.Table:
    """:func:`read_run` as a pyarrow Table; see :func:`read_qrels_table`."""
    return _read(Path(path), RUN_FIELDS, _RUN_KEEP, exact=False, check=check_duplicates)


def read_qrels_iterations(path: str | Path) -> pa.Table | None:
    """The vectorised tiers alone over a qrels file, keeping the second column as text
    (``iteration``) and checking no pairs; None when they cannot read the file. For diversity
    qrels (:mod:`evalplat.formats.subtopic_qrels`), whose own line pass names any problem."""
    for tier in (read_delimited, read_split):
        try:
            table = tier(Path(path), QRELS_FIELDS, _ITERATION_KEEP, exact=True)
        except FastPathFailed:
            continue
        if table.num_rows:
            return table
    return None


def name_first_error(path: str | Path, kind: str) -> None:
    """Run the reference pass over a ``"qrels"`` or ``"run"`` file to raise its first error."""
    if kind == "qrels":
        _read_slow(Path(path), QRELS_FIELDS, _QRELS_KEEP, exact=True)
    else:
        _read_slow(Path(path), RUN_FIELDS, _RUN_KEEP, exact=False)


def _read(
    path: Path, n_fields: int, keep: tuple[tuple[int, str], ...], *, exact: bool, check: bool
) -> pa.Table:
    if not path.is_file():
        raise InputError("no such file", path=path)
    if path.stat().st_size == 0:
        raise InputError("file is empty", path=path)
    table: pa.Table | None = None
    for tier in (read_delimited, read_split):
        try:
            table = tier(path, n_fields, keep, exact=exact)
            break
        except FastPathFailed:
            continue
    import pyarrow as pa

    if table is None or table.num_rows == 0 or (check and _has_duplicates(table)):
        # The slow pass raises with the line number (or, for a valid file, returns the table).
        table = _read_slow(path, n_fields, keep, exact=exact)
    # one chunk per column, made here while nothing else is held: the engine needs them whole,
    # and combining them later kept the parsed blocks alive next to the copies at its peak.
    # Query ids stay in blocks: they are only coded, which reads blocks, and a copy of them
    # would be fresh memory the size of the column.
    return pa.table(
        {
            name: column if name == "query_id" else column.combine_chunks()
            for name, column in zip(table.column_names, table.columns, strict=True)
        }
    )


def _has_duplicates(table: pa.Table) -> bool:
    """True when a (query_id, doc_id) pair occurs twice (integer codes, one numpy sort)."""
    import numpy as np
    import pyarrow.compute as pc

    queries = pc.dictionary_encode(table.column("query_id")).combine_chunks()
    docs = pc.dictionary_encode(table.column("doc_id")).combine_chunks()
    keys = queries.indices.to_numpy().astype(np.int64) * len(docs.dictionary)
    keys += docs.indices.to_numpy()
    keys.sort()
    return bool((keys[1:] == keys[:-1]).any())


def _read_slow(
    path: Path, n_fields: int, keep: tuple[tuple[int, str], ...], *, exact: bool
) -> pa.Table:
    """Tier 3: the reference reader, one line at a time, naming the first bad line."""
    import pyarrow as pa

    kind = "judgment" if exact else "doc id in this query's ranking"
    out: dict[str, list[object]] = {name: [] for _, name in keep}
    seen: set[tuple[str, str]] = set()
    for number, fields in lines_of(path):
        if (len(fields) != n_fields) if exact else (len(fields) < n_fields):
            expected = f"{n_fields}" if exact else f"at least {n_fields}"
            raise InputError(
                f"expected {expected} fields, found {len(fields)}", path=path, line=number
            )
        for index, name in keep:
            out[name].append(_convert(name, fields[index], path, number))
        pair = (fields[0], fields[2])
        if pair in seen:
            raise InputError(
                f"duplicate {kind}: query {fields[0]!r}, doc {fields[2]!r}",
                path=path,
                line=number,
            )
        seen.add(pair)
    if not seen:
        raise InputError("no judgments" if exact else "no results", path=path)
    types = arrow_types(keep)
    return pa.table({name: pa.array(out[name], type=types[name]) for _, name in keep})


def lines_of(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each line of a TREC file but blank lines and ``#`` comments,
    split at ASCII whitespace only, as trec_eval: ``str.split`` would also split at U+00A0 and
    shift a line's fields, or drop a trailing no-break space from an id."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                fields = [field.decode("utf-8") for field in raw.split()]
            except UnicodeDecodeError:
                raise InputError("not valid UTF-8 text", path=path, line=number) from None
            if fields and not fields[0].startswith("#"):
                yield number, fields


def _convert(name: str, text: str, path: Path, line: int) -> object:
    if name == "grade":
        return parse_grade(text, path=path, line=line)
    if name == "score":
        return parse_score(text, path=path, line=line)
    what = "query id" if name == "query_id" else "doc id"
    return check_identifier(text, what, path=path, line=line)
