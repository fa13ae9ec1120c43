"""The ``builtin`` searcher: SQLite FTS5 BM25 over the test set's own documents.

Index: one FTS5 table with a column per text field of the corpus (``title``, ``text``, any
other string field; a nested ``fields`` mapping is flattened), built once per corpus and
tokenizer into ``cache_dir / f"builtin-{corpus_key}-{tokenizer}.sqlite"``. The file is built
under a temporary name and renamed into place, so a killed process never leaves half an index
that a later run would trust.

Query: the text is split into word tokens (``\\w+``); each token is quoted as an FTS5 string
(``"flow"``), so nothing a user types is read as FTS5 syntax (``NEAR``, ``*``, ``:``, ``-``),
and the tokens are joined with ``OR`` (default) or ``AND``. With the trigram tokenizer, tokens
shorter than 3 characters are dropped (FTS5 cannot match them). A query with no usable token
returns no results.

Score: ``-bm25(docs, w_1, ..., w_n)`` (FTS5 returns lower-is-better; we negate so higher is
better), ``w_i`` from ``weights`` (default 1 per column). FTS5's BM25 uses k1 = 1.2, b = 0.75.
Ties are broken by doc id so repeated runs give the same ranking.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.validation import DECIMAL, check_number
from evalplat.searchers.base import Hit, Searcher, SearchError
from evalplat.searchers.kinds import Param, SearchContext, SearcherKind

TOKENIZERS = {"porter": "porter unicode61", "unicode61": "unicode61", "trigram": "trigram"}
_ID_KEYS = ("doc_id", "id", "docno")
_TOKEN = re.compile(r"\w+")
_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class BuiltinSearcher(Searcher):
    """BM25 over a cached FTS5 index; one read-only SQLite connection per calling thread."""

    kind = "builtin"

    def __init__(self, params: dict[str, Any], context: SearchContext) -> None:
        self.tokenizer: str = params["tokenizer"]
        self.operator: str = params["operator"].upper()
        self._own_dir: Path | None = None
        cache_dir = context.cache_dir
        if cache_dir is None:
            self._own_dir = cache_dir = Path(tempfile.mkdtemp(prefix="evalplat-builtin-"))
        self.index_path = ensure_index(
            context.documents, context.corpus_key, cache_dir, self.tokenizer
        )
        self.fields = _index_columns(self.index_path)
        weights = _parse_weights(params["weights"], self.fields)
        # bm25() takes one weight per column in table order, the unindexed doc_id included.
        weight_args = ", ".join(["0.0", *(repr(weights.get(name, 1.0)) for name in self.fields)])
        self._sql = (
            f"SELECT doc_id, -bm25(docs, {weight_args}) AS score FROM docs "
            "WHERE docs MATCH ? ORDER BY score DESC, doc_id LIMIT ?"
        )
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def match_expression(self, text: str) -> str:
        """The FTS5 MATCH expression for ``text`` ("" when no token is usable)."""
        tokens = _TOKEN.findall(text)
        if self.tokenizer == "trigram":
            tokens = [token for token in tokens if len(token) >= 3]
        return f" {self.operator} ".join('"' + token.replace('"', '""') + '"' for token in tokens)

    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        expression = self.match_expression(text)
        if not expression or depth <= 0:
            return []
        try:
            rows = self._connection().execute(self._sql, (expression, depth)).fetchall()
        except sqlite3.Error as error:
            raise SearchError(f"builtin searcher: query {query_id!r} failed: {error}") from error
        return [(str(doc_id), float(score)) for doc_id, score in rows]

    def close(self) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            uri = self.index_path.resolve().as_uri() + "?mode=ro"
            # check_same_thread=False only so that close() may close it from another thread;
            # each connection is used by the one thread that opened it.
            connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection


_build_lock = threading.Lock()


def ensure_index(
    documents: Iterable[Mapping[str, Any]] | Any | None,
    corpus_key: str | None,
    cache_dir: Path,
    tokenizer: str,
) -> Path:
    """Return the index file for this corpus and tokenizer, building it if it is not cached.

    Without ``corpus_key`` the key is a SHA-256 of the documents (computed here).
    """
    if tokenizer not in TOKENIZERS:
        raise InputError(f"unknown tokenizer {tokenizer!r}; choose from {', '.join(TOKENIZERS)}")
    if corpus_key is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", corpus_key):
        raise InputError(f"corpus key {corpus_key!r} must be letters, digits, '_', '.', '-'")
    rows: list[dict[str, str]] | None = None
    if corpus_key is None:
        rows = _document_rows(documents)
        corpus_key = _hash_rows(rows)
    path = cache_dir / f"builtin-{corpus_key}-{tokenizer}.sqlite"
    with _build_lock:
        if path.exists():
            return path
        if rows is None:
            rows = _document_rows(documents)
        cache_dir.mkdir(parents=True, exist_ok=True)
        handle, temp_name = tempfile.mkstemp(dir=cache_dir, prefix=path.name, suffix=".tmp")
        os.close(handle)
        try:
            _build(Path(temp_name), rows, TOKENIZERS[tokenizer])
            os.replace(temp_name, path)
        finally:
            if os.path.exists(temp_name):
                os.unlink(temp_name)
    return path


def _build(path: Path, rows: list[dict[str, str]], tokenize: str) -> None:
    fields = sorted({name for row in rows for name in row if name != "doc_id"})
    columns = ", ".join(["doc_id UNINDEXED", *fields])
    connection = sqlite3.connect(path)
    try:
        # The tokenizer comes from the TOKENIZERS whitelist, so inlining it is safe.
        connection.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5({columns}, tokenize='{tokenize}')"
        )
        placeholders = ", ".join("?" for _ in range(len(fields) + 1))
        connection.executemany(
            f"INSERT INTO docs VALUES ({placeholders})",
            ([row["doc_id"], *(row.get(name, "") for name in fields)] for row in rows),
        )
        # Merging the b-tree segments makes the read-only index faster to query.
        connection.execute("INSERT INTO docs(docs) VALUES ('optimize')")
        connection.commit()
    finally:
        connection.close()


def _document_rows(documents: Iterable[Mapping[str, Any]] | Any | None) -> list[dict[str, str]]:
    """Documents as ``{"doc_id": ..., field: text}`` rows, validating ids and field names."""
    if documents is None:
        raise InputError(
            "the builtin searcher needs the test set's documents; import the test set with --docs"
        )
    records = documents.to_dict("records") if hasattr(documents, "to_dict") else documents
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for number, record in enumerate(records, start=1):
        row = _document_row(record, number)
        if row["doc_id"] in seen:
            raise InputError(f"document {number}: duplicate doc id {row['doc_id']!r}")
        seen.add(row["doc_id"])
        rows.append(row)
    if not rows:
        raise InputError("the builtin searcher needs documents, and the test set has none")
    return rows


def _document_row(record: Mapping[str, Any], number: int) -> dict[str, str]:
    doc_id = next((record[key] for key in _ID_KEYS if record.get(key) is not None), None)
    if doc_id is None or str(doc_id) == "":
        raise InputError(f"document {number}: no id (expected one of {', '.join(_ID_KEYS)})")
    flat = dict(record)
    nested = flat.pop("fields", None)
    if isinstance(nested, str) and nested.lstrip().startswith("{"):
        # Test set tables keep extra fields as a JSON object in text form.
        try:
            nested = json.loads(nested)
        except json.JSONDecodeError:
            raise InputError(f"document {number}: 'fields' is not a JSON object") from None
    if isinstance(nested, Mapping):
        flat.update(nested)
    row = {"doc_id": str(doc_id)}
    for name, value in flat.items():
        if name in _ID_KEYS or not isinstance(value, str):
            continue
        if not _COLUMN.match(name) or name.lower() in {"rank", "rowid", "docs"}:
            raise InputError(f"document {number}: field name {name!r} cannot be indexed")
        row[name] = value
    return row


def _hash_rows(rows: list[dict[str, str]]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]


def _index_columns(path: Path) -> list[str]:
    connection = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        names = [row[1] for row in connection.execute("PRAGMA table_info(docs)")]
    finally:
        connection.close()
    return [name for name in names if name != "doc_id"]


def _parse_weights(weights: Mapping[str, Any], fields: list[str]) -> dict[str, float]:
    result: dict[str, float] = {}
    for name, value in check_weights(weights).items():
        if name not in fields:
            raise InputError(
                f"builtin searcher weights name the field {name!r}, which the documents do not "
                f"have; fields: {', '.join(fields)}"
            )
        result[name] = value
    return result


def check_weights(weights: Mapping[str, Any]) -> dict[str, float]:
    """Each weight a finite number, at least 0: a JSON number or ASCII decimal text (``2``,
    ``0.5`` from ``title=2,text=0.5``)."""
    result: dict[str, float] = {}
    for name, value in weights.items():
        number: float | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str) and DECIMAL.fullmatch(value.strip()):
            number = float(value.strip())
        if number is None:
            raise InputError(
                f"builtin searcher weight for {name!r} must be a number, got {value!r}"
            )
        result[name] = check_number(number, f"builtin searcher weight for {name!r}", minimum=0)
    return result


def _check(params: dict[str, Any]) -> None:
    check_weights(params["weights"])


def _create(params: dict[str, Any], context: SearchContext) -> Searcher:
    return BuiltinSearcher(params, context)


KIND = SearcherKind(
    name="builtin",
    description="SQLite FTS5 BM25 over the test set's documents (no search server needed)",
    params=(
        Param(
            "tokenizer",
            "str",
            "porter",
            "porter (stemmed unicode61), unicode61 or trigram",
            choices=tuple(TOKENIZERS),
        ),
        Param("operator", "str", "or", "join query terms with or / and", choices=("or", "and")),
        Param("weights", "mapping", {}, "BM25 weight per field, e.g. title=2,text=1 (default 1)"),
    ),
    factory=_create,
    check=_check,
)
