"""Learning-to-rank judgment lists (RankLib's file format), read and written.

One judgment a line, ``grade qid:ID # doc_id [anything]``: the grade, the query id, then after
``#`` the document id. Feature columns (``1:0.52``) between the query id and ``#`` are read
past, so a RankLib training file reads as its judgments. Comment lines name the queries'
texts as LTR tools write them, ``# qid:1: rambo``; other comments are skipped. A query without
such a line takes as its text what follows the doc id when that is the same on each of its
lines (a query text repeated on every line); when it differs (a title per document) it is
read past. Query ids are the file's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.formats.judgment_lists import QueryText, Rating, judgment_list
from evalplat.formats.text_files import ParsedFile, load_text, non_blank_lines
from evalplat.inputs.validation import parse_grade

if TYPE_CHECKING:
    import pandas as pd

_HEADER = re.compile(r"#\s*qid:(\S+):(?:\s+(.*))?")
_FEATURE = re.compile(r"[0-9]+:\S*")


def looks_like_ltr(head: str) -> bool:
    """Whether a file's first lines are an LTR judgment list (``grade qid:...`` lines or
    ``# qid:N: text`` headers), not TREC qrels."""
    for _, line in list(non_blank_lines(head))[:50]:
        stripped = line.strip()
        if stripped.startswith("#"):
            if _HEADER.fullmatch(stripped):
                return True
            continue
        fields = stripped.split()
        return len(fields) > 1 and fields[1].startswith("qid:")
    return False


def parse_ltr(path: Path) -> ParsedFile:
    """Judgments and query texts of an LTR judgment list (module doc)."""
    return judgment_list(path, _rows(load_text(path), path))


def _rows(text: str, path: Path) -> Iterator[Rating | QueryText]:
    named: set[str] = set()
    trailing: dict[str, tuple[str | None, int]] = {}
    for number, line in non_blank_lines(text):
        stripped = line.strip()
        if stripped.startswith("#"):
            header = _HEADER.fullmatch(stripped)
            if header is not None and (header.group(2) or "").strip():
                named.add(header.group(1))
                yield QueryText(number, header.group(1), header.group(2))
            continue
        judged, hash_mark, after_mark = stripped.partition("#")
        if not hash_mark:
            problem = "missing '# doc_id' (lines are 'grade qid:ID # doc_id')"
            raise InputError(problem, path=path, line=number)
        fields = judged.split()
        if len(fields) < 2 or not fields[1].startswith("qid:"):
            problem = "expected 'grade qid:ID # doc_id'"
            raise InputError(problem, path=path, line=number)
        for feature in fields[2:]:
            if not _FEATURE.fullmatch(feature):
                problem = f"unexpected {feature!r} before '#' (features are N:value)"
                raise InputError(problem, path=path, line=number)
        query_id = fields[1][len("qid:") :]
        grade = parse_grade(fields[0], path=path, line=number)
        after = after_mark.split(None, 1)
        if not after:
            raise InputError("missing doc id (after '#')", path=path, line=number)
        rest = after[1].strip() if len(after) > 1 else ""
        seen = trailing.get(query_id)
        trailing[query_id] = (rest if seen is None or seen[0] == rest else None, number)
        yield Rating(number, query_id, after[0], grade)
    for query_id, (repeated, number) in trailing.items():
        if query_id not in named and repeated:
            yield QueryText(number, query_id, repeated)


def write_ltr(queries: pd.DataFrame, qrels: pd.DataFrame, path: str | Path) -> Path:
    """``# qid:ID: text`` for every query with a text, then ``grade qid:ID # doc_id`` lines."""
    lines = ["# grade qid:query_id # doc_id"]
    for query_id, text in zip(queries["query_id"], queries["text"].fillna(""), strict=True):
        flat = " ".join(str(text).split())
        if flat:
            lines.append(f"# qid:{query_id}: {flat}")
    for query_id, doc_id, grade in zip(
        qrels["query_id"], qrels["doc_id"], qrels["grade"], strict=True
    ):
        lines.append(f"{int(grade)}\tqid:{query_id}\t#\t{doc_id}")
    path = Path(path)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
