"""Where a table or key sits in a TOML file, for messages that name the line.

``tomllib`` returns plain dicts without positions, so the line is found in the text: the
``index``-th ``[table]`` / ``[[table]]`` header, then the first ``key = ...`` line of that
table's section (its own lines, then those of its sub-tables such as ``[configs.params]``, up
to the next header of another table). The search is a best effort: a table written inline
(``configs = [{...}]``) has no header, and the message then names the file without a line.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]\s]+(?:\s*\.\s*[^\]\s]+)*)\s*\]\]?\s*(#.*)?$")


def header_line(lines: list[str], table: str, index: int = 0) -> int | None:
    """Line number (from 1) of the ``index``-th header of ``table``."""
    seen = 0
    for number, line in enumerate(lines, start=1):
        match = _HEADER.match(line)
        if match and _name(match.group(1)) == table:
            if seen == index:
                return number
            seen += 1
    return None


def key_line(lines: list[str], table: str, index: int, key: str) -> int | None:
    """Line of ``key = ...`` inside the ``index``-th ``table`` section (header line if absent)."""
    start = header_line(lines, table, index)
    if start is None:
        return None
    dotted = key.split(".")
    section = table
    pattern = re.compile(rf"^\s*[\"']?{re.escape(dotted[-1])}[\"']?\s*=")
    for number in range(start + 1, len(lines) + 1):
        line = lines[number - 1]
        match = _HEADER.match(line)
        if match:
            section = _name(match.group(1))
            if section != table and not section.startswith(table + "."):
                break
            continue
        wanted = ".".join([table, *dotted[:-1]])
        if section == wanted and pattern.match(line):
            return number
    return start


def _name(header: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in header.split("."))
