"""Reading interaction logs: UBI 1.x records, or flat JSONL/CSV rows through a column map.

A log holds two kinds of record (:class:`SearchRecord`, :class:`EventRecord`):

- a **query record** (UBI: ``query_id``, ``client_id``, ``user_query``,
  ``query_response_hit_ids``, ``timestamp``, ``query_attributes``): one search and the hits it
  showed, in order;
- an **event record** (UBI: ``action_name``, ``query_id``, ``session_id``, ``client_id``,
  ``timestamp``, ``event_attributes.object.object_id``, ``event_attributes.position.ordinal``):
  one thing a user did on a search.

In UBI files a record with ``action_name`` is an event, anything else a query record. Flat rows
use the canonical column names of :data:`FLAT_COLUMNS` (``--map canonical=theirs`` renames);
a row with a non-empty ``action`` is an event. Every problem raises ``InputError`` naming the
file and line, before anything is stored.

Rules: a timestamp is ISO 8601 with a time zone (``Z`` or an offset) or epoch milliseconds;
one without a zone is refused (the day a search belongs to would be a guess). Positions are
1-based (the first hit is 1). An event without an ``event_id`` is identified by a hash of its
content, so re-importing a log is idempotent either way. A search's session is its
``session_id`` (also read from ``query_attributes``), else its client id.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.inputs.validation import check_free_text, check_identifier, shown

FORMATS = ("ubi", "jsonl", "csv")
FLAT_COLUMNS: dict[str, str] = {
    "query_id": "id of the search (the query record); events name it too",
    "session_id": "session of the search or event",
    "client_id": "client (user or device), optional",
    "user_query": "the text the user searched for",
    "timestamp": "ISO 8601 with a time zone, or epoch milliseconds",
    "hit_ids": "ids of the hits shown, in order (a JSON list, or separated by | or spaces)",
    "config": "the config that served the search: NAME (latest version) or NAME@VER",
    "event_id": "id of an event (optional: a hash of the event's content otherwise)",
    "action": "what the user did: click, purchase, add_to_cart, rating, ...",
    "object_id": "the document acted on",
    "position": "1-based position of that document in the hits",
    "value": "a number carried by the event (a rating)",
}
CONFIG_ATTRIBUTES = ("config", "variant")


@dataclass(frozen=True)
class SearchRecord:
    query_id: str
    session_id: str
    client_id: str | None
    user_query: str
    timestamp: datetime
    hit_ids: tuple[str, ...]
    config: str | None
    where: str  # "file line N", for attribution errors


@dataclass(frozen=True)
class EventRecord:
    event_id: str
    query_id: str
    action: str
    session_id: str
    client_id: str | None
    timestamp: datetime
    object_id: str | None
    position: int | None
    value: float | None


@dataclass
class ParsedLog:
    """Records read from one or more files; repeats of a record id are counted, kept once."""

    searches: dict[str, SearchRecord] = field(default_factory=dict)
    events: dict[str, EventRecord] = field(default_factory=dict)
    duplicates: int = 0


def parse_map(text: str | None) -> dict[str, str]:
    """``session_id=sid,action=type`` → {canonical: their column}; unknown names refused."""
    mapping: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        canonical, sep, theirs = part.partition("=")
        canonical, theirs = canonical.strip(), theirs.strip()
        if not sep or not theirs:
            raise InputError(f"--map: expected canonical=column, got {part.strip()!r}")
        if canonical not in FLAT_COLUMNS:
            known = ", ".join(FLAT_COLUMNS)
            raise InputError(f"--map: unknown column {canonical!r} (columns: {known})")
        mapping[canonical] = theirs
    return mapping


def read_logs(
    paths: list[Path], *, format: str | None = None, mapping: Mapping[str, str] | None = None
) -> ParsedLog:
    """Every record of ``paths``, validated; ``InputError`` at the first bad line."""
    log = ParsedLog()
    for path in paths:
        kind = format or _guess(path)
        if kind not in FORMATS:
            raise InputError(f"unknown events format {kind!r} (formats: {', '.join(FORMATS)})")
        if not path.is_file():
            raise InputError("no such file", path=path)
        for line, raw in _rows(path, kind):
            record = _ubi(raw, path, line) if kind == "ubi" else _flat(raw, mapping, path, line)
            target: dict[str, Any] = log.events if isinstance(record, EventRecord) else log.searches
            key = record.event_id if isinstance(record, EventRecord) else record.query_id
            if key in target:
                log.duplicates += 1
                continue
            target[key] = record
    return log


def _guess(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return "csv"
    return "ubi"


def _rows(path: Path, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", path=path) from None
    if kind == "csv":
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        reader = csv.DictReader(text.splitlines(), delimiter=delimiter)
        for row in reader:
            if None in row:
                raise InputError("more fields than the header names", path=path,
                                 line=reader.line_num)  # fmt: skip
            yield reader.line_num, {k: v for k, v in row.items() if v not in (None, "")}
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"invalid JSON ({error.msg})", path=path, line=number) from None
        if not isinstance(value, dict):
            raise InputError("expected a JSON object", path=path, line=number)
        yield number, value


def _ubi(raw: dict[str, Any], path: Path, line: int) -> SearchRecord | EventRecord:
    if "action_name" in raw:
        attributes = _object(raw.get("event_attributes"), "event_attributes", path, line)
        target = _object(attributes.get("object"), "event_attributes.object", path, line)
        place = _object(attributes.get("position"), "event_attributes.position", path, line)
        flat = {
            "event_id": raw.get("event_id", attributes.get("event_id")),
            "action": raw.get("action_name"),
            "query_id": raw.get("query_id"),
            "session_id": raw.get("session_id"),
            "client_id": raw.get("client_id"),
            "timestamp": raw.get("timestamp"),
            "object_id": target.get("object_id"),
            "position": place.get("ordinal"),
            "value": attributes.get("value"),
        }
        return _event(flat, path, line)
    attributes = _object(raw.get("query_attributes"), "query_attributes", path, line)
    config = next((raw[k] for k in CONFIG_ATTRIBUTES if raw.get(k) is not None), None)
    if config is None:
        config = next((attributes[k] for k in CONFIG_ATTRIBUTES if attributes.get(k)), None)
    flat = {
        "query_id": raw.get("query_id"),
        "session_id": raw.get("session_id", attributes.get("session_id")),
        "client_id": raw.get("client_id"),
        "user_query": raw.get("user_query"),
        "timestamp": raw.get("timestamp"),
        "hit_ids": raw.get("query_response_hit_ids", raw.get("query_response_object_ids")),
        "config": config,
    }
    return _search(flat, path, line)


def _flat(
    raw: dict[str, Any], mapping: Mapping[str, str] | None, path: Path, line: int
) -> SearchRecord | EventRecord:
    mapping = mapping or {}
    flat = {name: raw.get(mapping.get(name, name)) for name in FLAT_COLUMNS}
    if flat["action"] not in (None, ""):
        return _event(flat, path, line)
    return _search(flat, path, line)


def _search(flat: dict[str, Any], path: Path, line: int) -> SearchRecord:
    query_id = _id(flat["query_id"], "query_id", path, line, required=True)
    client = _id(flat["client_id"], "client_id", path, line)
    session = _id(flat["session_id"], "session_id", path, line) or client
    if session is None:
        raise InputError("query record has neither a session_id nor a client_id", path=path,
                         line=line)  # fmt: skip
    text = flat["user_query"]
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise InputError("user_query must be text", path=path, line=line)
    check_free_text(text, "user_query", path=path, line=line)
    config = flat["config"]
    if config is not None and (not isinstance(config, str) or not config.strip()):
        raise InputError(f"config must be NAME or NAME@VER, got {config!r}", path=path, line=line)
    return SearchRecord(
        query_id=str(query_id),
        session_id=session,
        client_id=client,
        user_query=text,
        timestamp=parse_timestamp(flat["timestamp"], path, line),
        hit_ids=_hits(flat["hit_ids"], path, line),
        config=None if config is None else config.strip(),
        where=f"{path} line {line}",
    )


def _event(flat: dict[str, Any], path: Path, line: int) -> EventRecord:
    action = flat["action"]
    if not isinstance(action, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.:-]{0,59}", action):
        raise InputError(f"action must be a word such as click, got {action!r}", path=path,
                         line=line)  # fmt: skip
    query_id = str(_id(flat["query_id"], "query_id", path, line, required=True))
    client = _id(flat["client_id"], "client_id", path, line)
    session = _id(flat["session_id"], "session_id", path, line) or client
    if session is None:
        raise InputError("event has neither a session_id nor a client_id", path=path, line=line)
    timestamp = parse_timestamp(flat["timestamp"], path, line)
    object_id = _id(flat["object_id"], "object_id", path, line)
    position = _position(flat["position"], path, line)
    value = _number(flat["value"], path, line)
    event_id = _id(flat["event_id"], "event_id", path, line, max_length=64)
    if event_id is None:
        content = [action, query_id, session, client, timestamp.isoformat(), object_id,
                   position, value]  # fmt: skip
        event_id = hashlib.sha256(json.dumps(content).encode()).hexdigest()
    return EventRecord(
        event_id=event_id,
        query_id=query_id,
        action=action.lower(),
        session_id=session,
        client_id=client,
        timestamp=timestamp,
        object_id=object_id,
        position=position,
        value=value,
    )


def parse_timestamp(value: Any, path: Path | str | None = None, line: int | None = None
                    ) -> datetime:  # fmt: skip
    """ISO 8601 with a zone, or epoch milliseconds (an integer), as an aware UTC datetime."""
    if isinstance(value, bool) or value is None or value == "":
        raise InputError("missing timestamp", path=path, line=line)
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        try:
            return datetime.fromtimestamp(float(value) / 1000.0, tz=UTC)
        except (OverflowError, ValueError, OSError):
            raise InputError(f"timestamp {value!r} is out of range", path=path,
                             line=line) from None  # fmt: skip
    if not isinstance(value, str):
        raise InputError(f"timestamp must be text or epoch ms, got {value!r}", path=path, line=line)
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InputError(f"timestamp {shown(value)} is not ISO 8601", path=path,
                         line=line) from None  # fmt: skip
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InputError(f"timestamp {shown(value)} has no time zone (add Z or +hh:mm)",
                         path=path, line=line)  # fmt: skip
    return moment.astimezone(UTC)


def _object(value: Any, what: str, path: Path, line: int) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{what} must be an object", path=path, line=line)
    return value


def _id(value: Any, what: str, path: Path, line: int, *, required: bool = False,
        max_length: int = 200) -> str | None:  # fmt: skip
    if value is None or value == "":
        if required:
            raise InputError(f"missing {what}", path=path, line=line)
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{what} must be text, got {value!r}", path=path, line=line)
    return check_identifier(str(value), what, max_length=max_length, path=path, line=line)


def _hits(value: Any, path: Path, line: int) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    items = re.split(r"[|\s]+", value.strip()) if isinstance(value, str) else value
    if not isinstance(items, list):
        raise InputError("hit ids must be a list of ids", path=path, line=line)
    hits = tuple(str(_id(item, "hit id", path, line, required=True)) for item in items if item)
    if len(set(hits)) != len(hits):
        raise InputError("a hit id is shown twice in one search", path=path, line=line)
    return hits


def _position(value: Any, path: Path, line: int) -> int | None:
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not re.fullmatch(r"[0-9]{1,6}", text) or int(text) < 1:
        raise InputError(f"position must be an integer from 1, got {value!r}", path=path,
                         line=line)  # fmt: skip
    return int(text)


def _number(value: Any, path: Path, line: int) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"value must be a number, got {value!r}", path=path, line=line) from None
    if isinstance(value, bool) or number != number or number in (float("inf"), float("-inf")):
        raise InputError(f"value must be a finite number, got {value!r}", path=path, line=line)
    return number
