"""Reading interaction logs: UBI 1.x records, or flat JSONL/CSV/Parquet rows through a map.

A log holds two kinds of record (:class:`SearchRecord`, :class:`EventRecord`):

- a **query record** (UBI: ``query_id``, ``client_id``, ``user_query``,
  ``query_response_hit_ids``, ``timestamp``, ``query_attributes``): one search and the hits it
  showed, in order;
- an **event record** (UBI: ``action_name``, ``query_id``, ``session_id``, ``client_id``,
  ``timestamp``, ``event_attributes.object.object_id``, ``event_attributes.position.ordinal``):
  one thing a user did on a search.

In UBI files a record with ``action_name`` is an event, anything else a query record. Flat rows
use the canonical column names of :data:`FLAT_COLUMNS` (``--map canonical=theirs`` renames);
a row with a non-empty ``action`` is an event. Parquet files are read row by row, as UBI
records when their columns carry UBI names, else as flat rows (``evalplat.events.log_files``).
Every problem is an ``InputError`` naming the file and line, before anything is stored; with
``max_invalid`` up to that many bad lines are set aside as :class:`Reject` instead
(``evalplat.events.rejects``).

Rules (the values: ``evalplat.events.values``): a timestamp is ISO 8601 with a time zone (``Z``
or an offset) or epoch milliseconds; one without a zone is refused (the day a search belongs to
would be a guess). Positions are 1-based (the first hit is 1), and a hit list keeps every
position as logged. An event without an ``event_id`` is identified by a hash of its
content, so re-importing a log is idempotent either way. A search's session is its
``session_id`` (also read from ``query_attributes``), else its client id.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evalplat.errors import InputError
from evalplat.events.log_files import FORMATS, guess_format, log_rows
from evalplat.events.rejects import Reject
from evalplat.events.teams import Attribution, SessionExperiments, attribution
from evalplat.events.values import hit_ids, identifier, number, parse_timestamp
from evalplat.events.values import mapping as _object
from evalplat.events.values import position as _position
from evalplat.inputs.validation import check_free_text, check_name, shown

__all__ = ["FORMATS", "parse_timestamp"]

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
    "teams": "interleaved search: the config that contributed each hit, aligned with hit_ids",
    "interleaving": "interleaved search: team_draft (the default) or balanced",
    "ranks": "balanced interleaving: a JSON object, per config the rank of each hit in its list",
    "rankers": "interleaved search: its two configs (a search may show hits of one team only)",
}
CONFIG_ATTRIBUTES = ("config", "variant")
CONFIG_MAX_LENGTH = 220  # a config name of 200 characters, "@", a version


@dataclass(frozen=True)
class SearchRecord:
    query_id: str
    session_id: str
    client_id: str | None
    user_query: str
    timestamp: datetime
    hit_ids: tuple[str, ...]
    config: str | None
    path: Path  # where the record is, for attribution errors
    line: int
    interleaved: Attribution | None = None  # the per-hit teams of an interleaved search


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
    lines: int = 0  # lines (Parquet rows) read as records, repeats included
    rejects: list[Reject] = field(default_factory=list)


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
    paths: list[Path],
    *,
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    max_invalid: int = 0,
) -> ParsedLog:
    """Every record of ``paths``, validated. A bad line is set aside in ``rejects`` while there
    are at most ``max_invalid`` of them; one more raises ``InputError`` naming the first."""
    log = ParsedLog()
    experiments = SessionExperiments()
    for path in paths:
        shape, rows = log_rows(path, format or guess_format(path))
        for line, raw in rows:
            try:
                if isinstance(raw, InputError):
                    raise raw
                if shape == "ubi":
                    record = _ubi(raw, path, line)
                else:
                    record = _flat(raw, mapping, path, line)
                if isinstance(record, SearchRecord) and record.interleaved is not None:
                    experiments.check(record.session_id, record.interleaved, path, line)
            except InputError as error:
                _set_aside(log, error, path, line, max_invalid)
                continue
            target: dict[str, Any] = log.events if isinstance(record, EventRecord) else log.searches
            key = record.event_id if isinstance(record, EventRecord) else record.query_id
            log.lines += 1
            if key in target:
                log.duplicates += 1
                continue
            target[key] = record
    return log


def _set_aside(log: ParsedLog, error: InputError, path: Path, line: int, allowed: int) -> None:
    if len(log.rejects) < allowed:
        log.rejects.append(Reject.of(error, path, line))
        return
    if not allowed:
        raise error
    first = log.rejects[0]
    raise InputError(f"{first.reason} (more than --max-invalid {allowed} bad lines, the next "
                     f"at {path} line {line}; nothing imported)", path=first.path,
                     line=first.line)  # fmt: skip


def _ubi(raw: dict[str, Any], path: Path, line: int) -> SearchRecord | EventRecord:
    if raw.get("action_name") is not None:
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
        "teams": attributes.get("teams"),
        "interleaving": attributes.get("interleaving"),
        "ranks": attributes.get("ranks"),
        "rankers": attributes.get("rankers"),
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
    query_id = identifier(flat["query_id"], "query_id", path, line, required=True)
    client = identifier(flat["client_id"], "client_id", path, line)
    session = identifier(flat["session_id"], "session_id", path, line) or client
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
        got = repr(config) if isinstance(config, str) else type(config).__name__
        raise InputError(f"config must be NAME or NAME@VER, got {got}", path=path, line=line)
    if config is not None:
        check_name(config.strip(), "config", max_length=CONFIG_MAX_LENGTH, path=path, line=line)
    hits = hit_ids(flat["hit_ids"], path, line)
    config = None if config is None else config.strip()
    teams = attribution(flat.get("teams"), flat.get("interleaving"), flat.get("ranks"), hits,
                        config, path, line, flat.get("rankers"))  # fmt: skip
    return SearchRecord(
        query_id=str(query_id),
        session_id=session,
        client_id=client,
        user_query=text,
        timestamp=parse_timestamp(flat["timestamp"], path, line),
        hit_ids=hits,
        config=config,
        path=path,
        line=line,
        interleaved=teams,
    )


def _event(flat: dict[str, Any], path: Path, line: int) -> EventRecord:
    action = flat["action"]
    if not isinstance(action, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.:-]{0,59}", action):
        got = shown(action) if isinstance(action, str) else type(action).__name__
        raise InputError(f"action must be a word such as click, got {got}", path=path,
                         line=line)  # fmt: skip
    query_id = str(identifier(flat["query_id"], "query_id", path, line, required=True))
    client = identifier(flat["client_id"], "client_id", path, line)
    session = identifier(flat["session_id"], "session_id", path, line) or client
    if session is None:
        raise InputError("event has neither a session_id nor a client_id", path=path, line=line)
    timestamp = parse_timestamp(flat["timestamp"], path, line)
    object_id = identifier(flat["object_id"], "object_id", path, line)
    position = _position(flat["position"], path, line)
    value = number(flat["value"], path, line)
    event_id = identifier(flat["event_id"], "event_id", path, line, max_length=64)
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
