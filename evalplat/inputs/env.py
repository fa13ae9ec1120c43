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

Templated params (the ``http`` searcher's url, headers, query params and body) must not treat a
secret as template text: ``SecretSlots`` puts an opaque token where each placeholder was, the
template is compiled and rendered with the tokens, and only then are the values put in. A
secret ``a{{7*7}}b`` is therefore sent as ``a{{7*7}}b``, and query text that happens to contain
``${HOME}`` is sent as typed, never expanded.
"""

from __future__ import annotations

import json
import os
import re
import secrets
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


class SecretSlots:
    """Placeholders swapped for opaque tokens before templating; values put back after it.

    ``hide`` checks every variable is set (the same ``InputError`` as ``expand_env``) and
    returns the value with each placeholder replaced by a token of letters and digits, which
    Jinja passes through unchanged; ``reveal`` replaces the tokens in rendered text. The token
    holds a random part, so text from elsewhere (a query) cannot name a secret.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._env = os.environ if environ is None else environ
        self._prefix = f"evalplatsecret{secrets.token_hex(8)}n"
        self._values: list[str] = []
        self._extra: list[str] = []
        self._redaction: re.Pattern[str] | None = None  # built at the first redact
        self._token = re.compile(re.escape(self._prefix) + r"(\d+)e")

    def hide(self, value: Any) -> Any:
        if isinstance(value, str):
            return _PLACEHOLDER.sub(self._slot, value)
        if isinstance(value, Mapping):
            return {key: self.hide(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.hide(item) for item in value]
        return value

    def reveal(self, value: Any) -> Any:
        if isinstance(value, str):
            if self._prefix not in value:
                return value
            return self._token.sub(lambda match: self._values[int(match.group(1))], value)
        if isinstance(value, Mapping):
            return {key: self.reveal(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.reveal(item) for item in value]
        return value

    def mask(self, text: str) -> str:
        """Rendered text with every secret shown as ``***`` (for error messages)."""
        return self._token.sub("***", text)

    def conceal(self, value: str) -> None:
        """Have ``redact`` hide ``value`` too (a credential derived from the secrets)."""
        self._extra.append(value)
        self._redaction = None

    def redact(self, text: str) -> str:
        """``text`` from outside (an engine's error body) with every secret value it quotes
        shown as ``***``: as set, and as it may come back echoed, each character as itself,
        percent-encoded (a query string; a space also as ``+``) or JSON-escaped (a body), in
        any mix, longest secret first so that no part of a longer one is left."""
        if self._redaction is None:
            values = sorted({v for v in [*self._values, *self._extra] if v}, key=len, reverse=True)
            patterns = ["".join(map(_echoed_char, value)) for value in values]
            # no secret: a pattern that matches nothing
            self._redaction = re.compile("|".join(patterns) or "(?!)")
        return self._redaction.sub("***", text)

    def _slot(self, match: re.Match[str]) -> str:
        name = match.group(2)
        if match.group(1) is not None:
            return "${" + name + "}"
        if name not in self._env:
            raise InputError(
                f"environment variable {name} is not set (the config refers to ${{{name}}})"
            )
        self._values.append(self._env[name])
        self._redaction = None
        return f"{self._prefix}{len(self._values) - 1}e"


def _echoed_char(char: str) -> str:
    """A pattern for one character of a secret in the forms an echo may give it."""
    forms = {char, json.dumps(char)[1:-1], "\\/" if char == "/" else char}
    if char == " ":
        forms.add("+")
    encoded = "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    forms.update((encoded, encoded.lower()))
    return "(?:" + "|".join(map(re.escape, sorted(forms, key=len, reverse=True))) + ")"
