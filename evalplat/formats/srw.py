"""OpenSearch Search Relevance Workbench (SRW) judgment lists, read and written.

The body of SRW's judgments API for imported judgments: a JSON object with ``name``, ``type``
(``IMPORT_JUDGMENT``) and ``judgmentRatings``, a list of ``{"query": text, "ratings": [{"docId":
..., "rating": ...}]}``. Ratings are numbers or strings (SRW writes ``"3.000"``); a grade is
an integer, so a fractional rating is refused with its line. A search response holding one
judgment list (``hits.hits[0]._source``, as a GET of the list returns it) is read too. Queries
have no ids in SRW: each gets :func:`~evalplat.formats.judgment_lists.text_query_id` of its text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.formats.judgment_lists import (
    QueryText,
    Rating,
    json_type_error,
    judgment_list,
    positioned_json,
    rating_grade,
    text_query_id,
    texts_by_id,
)
from evalplat.formats.text_files import ParsedFile, check_text, load_text

if TYPE_CHECKING:
    import pandas as pd


def parse_srw(path: Path) -> ParsedFile:
    """Judgments and query texts of an SRW judgment list (module doc)."""
    value, line_of = positioned_json(load_text(path), path)
    if isinstance(value, dict) and "hits" in value and "judgmentRatings" not in value:
        hits = value.get("hits", {}).get("hits") if isinstance(value["hits"], dict) else None
        if not isinstance(hits, list) or len(hits) != 1 or not isinstance(hits[0], dict):
            raise InputError("a search response must hold exactly one judgment list", path=path)
        value = hits[0].get("_source")
    if not isinstance(value, dict):
        raise json_type_error("a judgment list", "a JSON object", value, path, 1)
    return judgment_list(path, _rows(value, path, line_of))


def _rows(
    root: dict[str, Any], path: Path, line_of: Callable[[object], int]
) -> Iterator[Rating | QueryText]:
    entries = root.get("judgmentRatings")
    if not isinstance(entries, list):
        raise json_type_error("judgmentRatings", "a list", entries, path, line_of(root))
    for entry in entries:
        if not isinstance(entry, dict):
            raise json_type_error("each judgment", "an object", entry, path, line_of(root))
        line = line_of(entry)
        text = entry.get("query")
        if not isinstance(text, str) or not text.strip():
            raise InputError("a judgment without its query text", path=path, line=line)
        text = check_text(text.strip(), "query text", path, line)
        query_id = text_query_id(text)
        yield QueryText(line, query_id, text)
        ratings = entry.get("ratings", [])
        if not isinstance(ratings, list):
            raise json_type_error("ratings", "a list", ratings, path, line)
        for rating in ratings:
            if not isinstance(rating, dict):
                raise json_type_error("each rating", "an object", rating, path, line)
            at = line_of(rating)
            if "docId" not in rating:
                raise InputError("missing docId", path=path, line=at)
            grade = rating_grade(rating.get("rating"), path, at)
            yield Rating(at, query_id, rating["docId"], grade)


def write_srw(
    queries: pd.DataFrame, qrels: pd.DataFrame, path: str | Path, name: str = "evalplat"
) -> Path:
    """An SRW judgment list to import (``PUT _plugins/_search_relevance/judgments``): every
    query with its text and ratings written as SRW does (``"3.000"``)."""
    texts = texts_by_id(queries)
    ratings: dict[str, list[dict[str, str]]] = {q: [] for q in texts}
    for query_id, doc_id, grade in zip(
        qrels["query_id"], qrels["doc_id"], qrels["grade"], strict=True
    ):
        ratings.setdefault(str(query_id), []).append(
            {"docId": str(doc_id), "rating": f"{int(grade)}.000"}
        )
    document = {
        "name": name,
        "description": f"{name}, exported by evalplat",
        "type": "IMPORT_JUDGMENT",
        "judgmentRatings": [{"query": texts[q], "ratings": rows} for q, rows in ratings.items()],
    }
    path = Path(path)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path
