"""Request templates of the ``http`` searcher: compiled once, rendered per query.

A string body is one Jinja2 template. A table or list body (from TOML) keeps its shape: every
string in it is compiled, and a string that is exactly ``{{ depth }}``, ``{{ query }}`` or
``{{ query_id }}`` is replaced by the value itself, so a number stays a number in the JSON sent.
``reveal`` puts ``${ENV}`` secrets in after rendering, so they are never read as template text.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError

if TYPE_CHECKING:
    import jinja2

_NATIVE = re.compile(r"^\{\{\s*(depth|query|query_id)\s*\}\}$")


def compiler(environment: jinja2.Environment) -> Any:
    """``compile_(source, what)``: a template, or an ``InputError`` naming what failed to parse."""
    import jinja2

    def compile_(source: str, what: str) -> jinja2.Template:
        try:
            return environment.from_string(source)
        except jinja2.TemplateSyntaxError as error:
            raise InputError(f"http searcher {what} template: {error.message}") from None

    return compile_


def compile_body(body: Any, compile_: Any) -> Any:
    """Body templates: a string -> one template; tables/lists -> same shape, strings compiled."""
    if body is None:
        return None
    if isinstance(body, str):
        return compile_(body, "body")
    if isinstance(body, dict):
        return {key: _compile_leaf(value, compile_) for key, value in body.items()}
    if isinstance(body, list):
        return [_compile_leaf(value, compile_) for value in body]
    raise InputError(f"http searcher body must be a string, table or list, got {body!r}")


def _compile_leaf(value: Any, compile_: Any) -> Any:
    if isinstance(value, str):
        native = _NATIVE.match(value)
        return ("native", native.group(1)) if native else compile_(value, "body")
    if isinstance(value, dict | list):
        return compile_body(value, compile_)
    return value


def render_body(body: Any, variables: dict[str, Any], reveal: Any) -> str:
    """The body text; ``reveal`` puts the secrets in (before JSON encoding, so they are escaped)."""
    if hasattr(body, "render"):
        return str(reveal(body.render(variables)))
    return json.dumps(reveal(_render_leaf(body, variables)), ensure_ascii=False)


def masked(value: Any) -> Any:
    """A ``reveal`` that leaves the secret slots in, for quoting a body in a message."""
    return value


def _render_leaf(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, tuple):
        return variables[value[1]]
    if hasattr(value, "render"):
        return value.render(variables)
    if isinstance(value, dict):
        return {key: _render_leaf(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [_render_leaf(item, variables) for item in value]
    return value
