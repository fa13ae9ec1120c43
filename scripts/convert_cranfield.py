"""Convert the Cranfield 1400 collection (Glasgow IR resources files) into evalplat's formats.

Usage::

    python scripts/convert_cranfield.py SOURCE_DIR [--out testsets/cranfield]

SOURCE_DIR holds ``cran.all.1400``, ``cran.qry`` and ``cranqrel``. The output is
``qrels.txt`` (TREC, 4 columns), ``queries.tsv`` (``qid<TAB>text``) and ``docs.jsonl``; it is
byte-identical on every run. Every quirk handled here is listed in the README written next to
the output (see ``testsets/cranfield/README.md``):

- queries are numbered 1..225 by their position in ``cran.qry``; the ``.I`` numbers (001..365,
  with gaps) are not the ids the qrels use;
- grades are remapped ``g' = 5 - g`` so that higher is better (1 "complete answer" -> 4);
- the undocumented ``-1`` code is kept as grade 0 (judged, not relevant);
- CRLF line endings and trailing spaces are ignored; whitespace inside a text is collapsed;
- docs 471 and 995 have an empty abstract and are kept with empty text;
- marker lines (``.A``, ``.B``, ``.W``) that reappear inside an abstract (docs 240, 576, 578)
  are dropped and the text after them stays in the abstract.

Only the standard library is used, so the script runs without evalplat installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

QUERIES = 225
DOCUMENTS = 1400
QRELS_LINES = 1837
_FIELDS = {".T": "title", ".A": "author", ".B": "bibliography", ".W": "text"}


class ConversionError(Exception):
    """The source does not look like the Cranfield files this script was written for."""


@dataclass(frozen=True)
class Judgment:
    query_id: int
    doc_id: int
    grade: int


def remap_grade(code: int) -> int:
    """Cleverdon's code (1 best .. 4 least; -1 undocumented) as a higher-is-better grade."""
    if code == -1:
        return 0
    if 1 <= code <= 4:
        return 5 - code
    raise ConversionError(f"unexpected relevance code {code}")


def _text_lines(path: Path) -> list[str]:
    # CRLF (cran.qry) and trailing spaces (cranqrel) are noise, never content
    return [line.rstrip() for line in path.read_text(encoding="ascii").splitlines()]


def _squash(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def read_queries(path: Path) -> list[tuple[int, str]]:
    """(position 1..N, text) of each ``.I`` record; the ``.I`` number itself is discarded."""
    queries: list[list[str]] = []
    in_text = False
    for line in _text_lines(path):
        if line.startswith(".I"):
            queries.append([])
            in_text = False
        elif line == ".W":
            in_text = True
        elif in_text and queries:
            queries[-1].append(line)
        elif line.strip():
            raise ConversionError(f"{path.name}: text outside a .W field: {line!r}")
    return [(position, _squash(lines)) for position, lines in enumerate(queries, start=1)]


def read_documents(path: Path) -> list[dict[str, str]]:
    """Records in file order with ``id``, ``title``, ``text`` (abstract), author, bibliography."""
    documents: list[dict[str, list[str]]] = []
    ids: list[str] = []
    current: str | None = None
    for line in _text_lines(path):
        if line.startswith(".I "):
            ids.append(line[3:].strip())
            documents.append({name: [] for name in _FIELDS.values()})
            current = None
        elif line in _FIELDS and documents:
            # Once the abstract has begun, a marker is a stray line inside it (docs 240, 576,
            # 578): the abstract's text continues after it, so the marker is dropped.
            if current != "text":
                current = _FIELDS[line]
        elif current is not None:
            documents[-1][current].append(line)
        elif line.strip():
            raise ConversionError(f"{path.name}: text outside a field: {line!r}")
    out = []
    for doc_id, fields in zip(ids, documents, strict=True):
        record = {"id": doc_id, "title": _squash(fields["title"]), "text": _squash(fields["text"])}
        record["author"] = _squash(fields["author"])
        record["bibliography"] = _squash(fields["bibliography"])
        out.append(record)
    return out


def read_qrels(path: Path) -> list[Judgment]:
    """``qid docid code`` lines, remapped; a repeated (query, doc) pair is refused."""
    judgments: list[Judgment] = []
    seen: set[tuple[int, int]] = set()
    for number, line in enumerate(_text_lines(path), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3:
            raise ConversionError(f"{path.name} line {number}: expected 3 fields")
        query_id, doc_id, code = (int(field) for field in fields)
        if (query_id, doc_id) in seen:
            # the source has none; if one appears, a person should decide which grade wins
            raise ConversionError(f"{path.name} line {number}: repeated pair")
        seen.add((query_id, doc_id))
        judgments.append(Judgment(query_id, doc_id, remap_grade(code)))
    return judgments


def _check(
    queries: list[tuple[int, str]], docs: list[dict[str, str]], qrels: list[Judgment]
) -> None:
    if (len(queries), len(docs), len(qrels)) != (QUERIES, DOCUMENTS, QRELS_LINES):
        counts = f"{len(queries)} queries, {len(docs)} docs, {len(qrels)} qrels lines"
        raise ConversionError(f"unexpected source size: {counts}")
    if [d["id"] for d in docs] != [str(n) for n in range(1, DOCUMENTS + 1)]:
        raise ConversionError("document ids are not 1..1400 in order")
    judged = {j.query_id for j in qrels}
    if judged != set(range(1, QUERIES + 1)):
        raise ConversionError("qrels query ids are not exactly 1..225")
    if not {j.doc_id for j in qrels} <= set(range(1, DOCUMENTS + 1)):
        raise ConversionError("qrels name a document outside 1..1400")


def convert(source: Path, out: Path) -> dict[str, int]:
    """Write qrels.txt, queries.tsv and docs.jsonl into ``out``; returns the counts written."""
    queries = read_queries(source / "cran.qry")
    docs = read_documents(source / "cran.all.1400")
    qrels = read_qrels(source / "cranqrel")
    _check(queries, docs, qrels)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "qrels.txt", (f"{j.query_id} 0 {j.doc_id} {j.grade}" for j in qrels))
    _write(out / "queries.tsv", (f"{qid}\t{text}" for qid, text in queries))
    _write(out / "docs.jsonl", (json.dumps(d, ensure_ascii=False) for d in docs))
    return {"queries": len(queries), "documents": len(docs), "judgments": len(qrels)}


def _write(path: Path, lines: Iterable[str]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(f"{line}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder with cran.all.1400, cran.qry, cranqrel")
    default_out = Path(__file__).resolve().parent.parent / "testsets" / "cranfield"
    parser.add_argument("--out", type=Path, default=default_out, help="output folder")
    args = parser.parse_args(argv)
    try:
        counts = convert(args.source, args.out)
    except (ConversionError, OSError, ValueError) as error:
        print(f"convert_cranfield: {error}", file=sys.stderr)
        return 2
    print(", ".join(f"{n} {name}" for name, n in counts.items()) + f" written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
