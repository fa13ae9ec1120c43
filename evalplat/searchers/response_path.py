"""A small path language to pick hits, ids and scores out of a JSON response.

Grammar: segments joined by ``.``; a segment is a key optionally followed by any number of
``[]`` (every element of a list) or ``[n]`` (element ``n``, negative counts from the end); a
path may also start with ``[]``/``[n]`` when the response itself is a list. ``""`` is the
response itself. Keys containing ``.`` or ``[`` cannot be written (no engine we know needs it).

    results_path  "hits.hits"        Elasticsearch/OpenSearch: the list of hit objects
                  "response.docs"    Solr
                  "data[].items"     items of every element of data, flattened
    id_field      "_id", "id", "fields.id[0]"   evaluated on each hit, must give one value
    score_field   "_score", "score"             likewise; missing/null -> score from rank

``select_hits``: when the path does not end in ``[]``, its single value must be a list and its
elements are the hits; ending in ``[]`` the selected values are the hits already. A missing
key or an index out of range is a ``SearchError`` naming how far the path got.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evalplat.errors import InputError
from evalplat.searchers.base import SearchError

_SEGMENT = re.compile(r"^(?P<key>[^.\[\]]*)(?P<subs>(?:\[-?\d*\])*)$")
_SUBSCRIPT = re.compile(r"\[(-?\d*)\]")

_ALL = "[]"


@dataclass(frozen=True)
class Path:
    """A parsed path: steps are keys (str), ``"[]"`` (flatten) or indexes (int)."""

    text: str
    steps: tuple[str | int, ...]

    @property
    def ends_with_all(self) -> bool:
        return bool(self.steps) and self.steps[-1] == _ALL

    def values(self, document: Any) -> list[Any]:
        """Every value the path selects in ``document`` (one unless it contains ``[]``)."""
        values = [document]
        for position, step in enumerate(self.steps):
            values = [_step(value, step, self, position) for value in values]
            if step == _ALL:
                values = [item for value in values for item in value]
        return values


def parse_path(text: str) -> Path:
    """Parse ``text``; an invalid path is an ``InputError`` (it comes from a config)."""
    steps: list[str | int] = []
    if text.strip():
        for number, segment in enumerate(text.strip().split(".")):
            match = _SEGMENT.match(segment)
            if match is None or (not match.group("key") and (number > 0 or not match["subs"])):
                raise InputError(f"invalid response path {text!r} at {segment!r}")
            if match.group("key"):
                steps.append(match.group("key"))
            for subscript in _SUBSCRIPT.findall(match.group("subs")):
                steps.append(_ALL if subscript == "" else int(subscript))
    return Path(text.strip(), tuple(steps))


def select_hits(document: Any, path: Path) -> list[Any]:
    """The list of hit objects in a response (rules in the module docstring)."""
    values = path.values(document)
    if path.ends_with_all:
        return values
    # One list, or one per element when a ``[]`` comes earlier in the path: flattened in order.
    for found in values:
        if not isinstance(found, list):
            where = path.text or "(the response)"
            raise SearchError(f"response path {where!r} is {_kind(found)}, not a list of hits")
    return [hit for found in values for hit in found]


def select_one(hit: Any, path: Path) -> Any:
    """The single value ``path`` selects in one hit, or None when a key is missing."""
    try:
        values = path.values(hit)
    except SearchError:
        return None
    if len(values) != 1:
        raise SearchError(f"field path {path.text!r} gives {len(values)} values in a hit, not 1")
    return values[0]


def _step(value: Any, step: str | int, path: Path, position: int) -> Any:
    if isinstance(step, str) and step != _ALL:
        if isinstance(value, dict) and step in value:
            return value[step]
        raise SearchError(f"response has no {_prefix(path, position + 1)!r} (found {_kind(value)})")
    if not isinstance(value, list):
        raise SearchError(f"response {_prefix(path, position)!r} is {_kind(value)}, not a list")
    if step == _ALL:
        return value
    if not -len(value) <= int(step) < len(value):
        raise SearchError(f"response {_prefix(path, position)!r} has no element {step}")
    return value[int(step)]


def _prefix(path: Path, count: int) -> str:
    text = ""
    for step in path.steps[:count]:
        if step == _ALL:
            text += "[]"
        elif isinstance(step, int):
            text += f"[{step}]"
        else:
            text += ("." if text else "") + step
    return text or "(the response)"


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:5])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "null" if value is None else f"a {type(value).__name__}"
