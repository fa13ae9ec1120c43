"""Rated Ranking Evaluator (RRE) ratings JSON, read and written.

A ratings file is one JSON object: ``index``, ``id_field`` and the queries, in query groups
(``query_groups``), which may sit in ``topics`` or at the top; each group lists ``queries``
(``template`` and ``placeholders``) that share its ``relevant_documents``. RRE writes relevant
documents grouped by gain, ``{"3": ["doc1", "doc2"], "1": ["doc7"]}``; the older shapes, doc id
to gain (``{"doc1": {"gain": 3}}``) and a list of such objects, are read too.

A query's text is its placeholder ``$query`` (or ``$q``, or its only placeholder). Its id is
the group's ``name`` when the group has one query and the name is a valid id (no whitespace),
so a file evalplat wrote comes back with its ids; otherwise the id comes from the text
(:func:`~evalplat.formats.judgment_lists.text_query_id`).
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

_TEXT_PLACEHOLDERS = ("$query", "$q")


def parse_rre(path: Path) -> ParsedFile:
    """Judgments and query texts of an RRE ratings file (module doc)."""
    value, line_of = positioned_json(load_text(path), path)
    if not isinstance(value, dict):
        raise json_type_error("an RRE ratings file", "a JSON object", value, path, 1)
    return judgment_list(path, _groups_rows(value, path, line_of))


def _groups_rows(
    root: dict[str, Any], path: Path, line_of: Callable[[object], int]
) -> Iterator[Rating | QueryText]:
    groups: list[dict[str, Any]] = []
    for topic in _list(root, "topics", path, line_of):
        groups.extend(_list(topic, "query_groups", path, line_of))
    groups.extend(_list(root, "query_groups", path, line_of))
    if "queries" in root:
        groups.append(root)  # queries at the top, with the file's relevant_documents
    if not groups:
        raise InputError("no query_groups, topics or queries", path=path, line=1)
    for group in groups:
        yield from _group_rows(group, path, line_of)


def _list(
    node: dict[str, Any], key: str, path: Path, line_of: Callable[[object], int]
) -> list[dict[str, Any]]:
    items = node.get(key, [])
    if not isinstance(items, list):
        raise json_type_error(key, "a list", items, path, line_of(node))
    for item in items:
        if not isinstance(item, dict):
            raise json_type_error(f"each of {key}", "an object", item, path, line_of(node))
    return items


def _group_rows(
    group: dict[str, Any], path: Path, line_of: Callable[[object], int]
) -> Iterator[Rating | QueryText]:
    queries = _list(group, "queries", path, line_of)
    if not queries:
        raise InputError("a query group without queries", path=path, line=line_of(group))
    name = group.get("name")
    own_id = (
        len(queries) == 1
        and isinstance(name, str)
        and name
        and not any(ch.isspace() for ch in name)
    )
    ids: list[str] = []
    for query in queries:
        text = _query_text(query, path, line_of(query))
        query_id = str(name) if own_id else text_query_id(text)
        ids.append(query_id)
        yield QueryText(line_of(query), query_id, text)
    for doc_id, grade, line in _relevant(group, path, line_of):
        for query_id in ids:
            yield Rating(line, query_id, doc_id, grade)


def _query_text(query: dict[str, Any], path: Path, line: int) -> str:
    placeholders = query.get("placeholders")
    if not isinstance(placeholders, dict) or not placeholders:
        raise InputError("a query without placeholders (its text)", path=path, line=line)
    keys = [key for key in _TEXT_PLACEHOLDERS if key in placeholders]
    if not keys and len(placeholders) == 1:
        keys = list(placeholders)
    if not keys:
        problem = f"cannot tell the query text among the placeholders {sorted(placeholders)}"
        raise InputError(problem + " (name it $query)", path=path, line=line)
    text = placeholders[keys[0]]
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"placeholder {keys[0]} must be a non-empty string", path=path, line=line)
    return check_text(text.strip(), f"placeholder {keys[0]}", path, line)


def _relevant(
    group: dict[str, Any], path: Path, line_of: Callable[[object], int]
) -> Iterator[tuple[object, int, int]]:
    """(doc id, grade, line) of a group's relevant documents, in any of RRE's shapes."""
    relevant = group.get("relevant_documents", {})
    line = line_of(group)
    if isinstance(relevant, dict):
        line = line_of(relevant)
        entries: list[tuple[str, Any, int]] = [(k, v, line) for k, v in relevant.items()]
    elif isinstance(relevant, list):
        entries = []
        for item in relevant:
            if not isinstance(item, dict):
                raise json_type_error("each relevant document", "an object", item, path, line)
            entries.extend((k, v, line_of(item)) for k, v in item.items())
    else:
        raise json_type_error("relevant_documents", "an object", relevant, path, line)
    for key, value, at in entries:
        if isinstance(value, list):  # gain -> doc ids
            grade = rating_grade(key, path, at)
            for doc_id in value:
                yield doc_id, grade, at
        elif isinstance(value, dict):  # doc id -> {"gain": n}
            if "gain" not in value:
                raise InputError(f"document {key!r} has no gain", path=path, line=line_of(value))
            yield key, rating_grade(value["gain"], path, line_of(value)), line_of(value)
        else:
            problem = f'relevant document {key!r}: expected a list of doc ids or {{"gain": n}}'
            raise InputError(problem, path=path, line=at)


def write_rre(
    queries: pd.DataFrame, qrels: pd.DataFrame, path: str | Path, index: str = "evalplat"
) -> Path:
    """An RRE ratings file: one query group per query, named by its id, with one query (its
    text as ``$query``) and its relevant documents grouped by gain (highest first)."""
    texts = texts_by_id(queries, unique=False)  # groups are named by id
    by_query: dict[str, dict[int, list[str]]] = {q: {} for q in texts}
    for query_id, doc_id, grade in zip(
        qrels["query_id"], qrels["doc_id"], qrels["grade"], strict=True
    ):
        by_query.setdefault(str(query_id), {}).setdefault(int(grade), []).append(str(doc_id))
    groups = [
        {
            "name": query_id,
            "queries": [{"template": "only_q.json", "placeholders": {"$query": texts[query_id]}}],
            "relevant_documents": {
                str(grade): docs for grade, docs in sorted(gains.items(), reverse=True)
            },
        }
        for query_id, gains in by_query.items()
    ]
    document = {"index": index, "id_field": "id", "query_groups": groups}
    path = Path(path)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path
