"""Document field values read from each hit of a search response (``hit_fields``).

A config names the fields it wants and where each sits in a hit, in the path language of
``id_field`` (:mod:`evalplat.searchers.response_path`)::

    hit_fields = { source = "_source.site", type = "_source.kind" }

Each path must select one value per hit, so ``[]`` is refused; ``[n]`` picks an element. The
value is kept as JSON (a string, number, boolean, list or object) and stored with the result; a
hit without the key, or with ``null`` there, simply has no value for that field (documents often
lack a field), which is not an error.

Field names are checked when the config is declared: a letter or ``_`` first, then letters,
digits, ``_``, ``-`` or ``.``, at most 64 characters, so that a metric parameter or a report
column can name them (``Diversity(field=source)@10``).

``stored_fields`` tells a preset which fields to ask the engine for: the keys of each path up to
its first subscript, without a leading ``_source`` (Elasticsearch's ``_source`` filter, Solr's
``fl`` list).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalplat.errors import InputError
from evalplat.searchers.response_path import Path, parse_path, select_one

FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
_ALL = "[]"


@dataclass(frozen=True)
class FieldPaths:
    """Field name -> parsed path, in the order the config gave them."""

    paths: tuple[tuple[str, Path], ...]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.paths]

    def read(self, hit: Any) -> dict[str, Any]:
        """The values of one hit; fields it lacks (or holds as null) are left out."""
        values: dict[str, Any] = {}
        for name, path in self.paths:
            value = select_one(hit, path)
            if value is not None:
                values[name] = value
        return values

    def stored_fields(self) -> list[str]:
        """Document fields the engine must return for these paths (for the presets)."""
        names: list[str] = []
        for _, path in self.paths:
            keys: list[str] = []
            for step in path.steps:
                if not isinstance(step, str) or step == _ALL:
                    break
                keys.append(step)
            if keys[:1] == ["_source"]:
                keys = keys[1:]
            name = ".".join(keys)
            if name and name not in names:
                names.append(name)
        return names


def parse_hit_fields(value: Mapping[str, Any] | None) -> FieldPaths | None:
    """Validate a ``hit_fields`` setting; ``None`` when it names no field.

    Raises ``InputError`` naming the field for a bad name, a path that is not a string, does not
    parse, or could select several values.
    """
    if not value:
        return None
    paths: list[tuple[str, Path]] = []
    for name, text in value.items():
        if not isinstance(name, str) or not FIELD_NAME.match(name):
            raise InputError(
                f"http searcher hit_fields: invalid field name {name!r} (a letter or _ first, "
                "then letters, digits, _, - or ., at most 64 characters)"
            )
        if not isinstance(text, str) or not text.strip():
            raise InputError(
                f"http searcher hit_fields: field {name!r} needs a path in a hit as a string, "
                f"e.g. _source.{name}; got {text!r}"
            )
        try:
            path = parse_path(text)
        except InputError as error:
            raise InputError(f"http searcher hit_fields: field {name!r}: {error.problem}") from None
        if _ALL in path.steps:
            raise InputError(
                f"http searcher hit_fields: the path {text!r} of field {name!r} may select "
                "several values ([]); pick one element with [0] or read the whole list"
            )
        paths.append((name, path))
    return FieldPaths(tuple(paths))
