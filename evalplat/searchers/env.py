"""``${NAME}`` placeholders in searcher params: expanded at use time, never stored expanded.

Configs are stored with their placeholders (``url = "https://${ES_USER}:${ES_PASS}@es/..."``)
so that secrets never reach the database or a report. A searcher calls ``expand_env`` when it
is created and keeps the expanded value in memory only.

Rules:
- ``${NAME}`` with ``NAME`` matching ``[A-Za-z_][A-Za-z0-9_]*`` is replaced by the variable's
  value; an unset variable is an ``InputError`` naming it (an empty value is a value).
- ``$${`` is a literal ``${`` (an escape for the rare text that needs one).
- Anything else, including a lone ``$`` or ``$$`` (PostgreSQL dollar quoting), is left alone.
- Dicts and lists are expanded recursively (values only, not keys); other types pass through.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from evalplat.errors import InputError

_PLACEHOLDER = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """Return ``value`` with ``${NAME}`` placeholders replaced from ``environ`` (os.environ).

    >>> expand_env({"h": ["Bearer ${T}"]}, {"T": "x"})
    {'h': ['Bearer x']}
    """
    env = os.environ if environ is None else environ
    if isinstance(value, str):
        return _expand_text(value, env)
    if isinstance(value, Mapping):
        return {key: expand_env(item, env) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [expand_env(item, env) for item in value]
    return value


def has_placeholder(value: Any) -> bool:
    """True when ``value`` (or anything inside it) contains a ``${NAME}`` placeholder."""
    if isinstance(value, str):
        return any(match.group(1) is None for match in _PLACEHOLDER.finditer(value))
    if isinstance(value, Mapping):
        return any(has_placeholder(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(has_placeholder(item) for item in value)
    return False


def _expand_text(text: str, env: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        if match.group(1) is not None:  # "$${NAME}" is the escaped literal "${NAME}"
            return "${" + name + "}"
        if name not in env:
            raise InputError(
                f"environment variable {name} is not set (the config refers to ${{{name}}})"
            )
        return env[name]

    return _PLACEHOLDER.sub(replace, text)
