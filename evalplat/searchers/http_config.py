"""The ``http`` searcher's settings (presets over defaults) and what is checked before a run.

``check_params`` is the kind's check, run by :func:`evalplat.searchers.validate_config` (so by
``config add``, ``run`` and ``nightly`` alike), without secrets, a client or the network:

- every template compiles, uses only the variables templates see (``query``, ``query_id``,
  ``depth``, ``fields``, ``stored_fields``) and renders for a sample query (with
  ``StrictUndefined``, so ``{{ query.nosuch }}`` is refused as well as ``{{ nosuch }}``);
- a string body sent as JSON renders to JSON for that sample (``${ENV}`` placeholders stand
  in as ``0``, which fits a string or a number);
- the url is ``http://`` or ``https://`` (unless it starts with a placeholder or a template,
  which the searcher checks once they are filled in);
- the method is a word, header names are tokens and header values one line, ``auth`` is
  ``user:password``;
- the result paths and ``hit_fields`` parse.

``uses_query`` tells whether the request carries the query text at all (a JSON API read by
``query_id`` does not), so a test set without query texts is refused only where it matters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.env import SecretSlots, has_placeholder
from evalplat.inputs.http_headers import HEADER_NAME
from evalplat.searchers.base import shorten
from evalplat.searchers.hit_fields import parse_hit_fields
from evalplat.searchers.http_templates import compile_body, compiler, masked, render_body
from evalplat.searchers.response_path import parse_path

if TYPE_CHECKING:
    import jinja2.sandbox

TEMPLATE_VARIABLES = ("query", "query_id", "depth", "fields", "stored_fields")
PROBE_QUERY_ID = "evalplat-check"
DEFAULT_PROBE = "evalplat"

_ES_BODY = (
    '{"size": {{ depth }}, "_source": {{ stored_fields|tojson if stored_fields else "false" }}, '
    '"track_total_hits": false, '
    '"query": {"multi_match": {"query": {{ query|tojson }}'
    '{% if fields %}, "fields": {{ fields|tojson }}{% endif %}}}}'
)
_ES_PRESET: dict[str, Any] = {
    "url_suffix": "/_search",
    "method": "POST",
    "body": _ES_BODY,
    "results_path": "hits.hits",
    "id_field": "_id",
    "score_field": "_score",
}
PRESETS: dict[str, dict[str, Any]] = {
    "elasticsearch": _ES_PRESET,
    "opensearch": _ES_PRESET,
    "solr": {
        "url_suffix": "/select",
        "method": "GET",
        "query_params": {
            "q": "{{ query }}",
            "rows": "{{ depth }}",
            "fl": "id,score{% for name in stored_fields %},{{ name }}{% endfor %}",
            "wt": "json",
            "defType": "edismax",
            "qf": "{{ fields|join(' ') }}",
        },
        "results_path": "response.docs",
        "id_field": "id",
        "score_field": "score",
    },
}
_DEFAULTS: dict[str, Any] = {
    "method": "GET",
    "body": None,
    "query_params": {},
    "id_field": "id",
    "score_field": "score",
}
_METHOD = re.compile(r"[A-Za-z]+")
_LINE_BREAK = re.compile(r"[\r\n\x00-\x08\x0a-\x1f\x7f]")
_TEMPLATED_START = ("${", "{{", "{%")


def settings_of(params: dict[str, Any]) -> dict[str, Any]:
    """Explicit params over preset over defaults; the preset's url suffix appended if needed."""
    preset = PRESETS.get(params["preset"] or "", {})
    merged = {**_DEFAULTS, **preset}
    merged.update({name: value for name, value in params.items() if value is not None})
    base, mark, query = params["url"].partition("?")
    base = base.rstrip("/")
    suffix = preset.get("url_suffix")
    if suffix and not base.endswith(suffix):
        base += suffix  # before the url's own query string, which stays
    merged["url"] = base + mark + query
    merged.setdefault("results_path", None)
    return merged


def split_query(url: str) -> tuple[str, list[tuple[str, str]]]:
    """A rendered url without its query string, and the query's parameters in order (decoded,
    blank values kept), which are sent merged with ``query_params`` (module doc of
    :mod:`evalplat.searchers.http`). ``${ENV}`` secrets are still in their slots: a secret is
    put in each value after the split, so a ``&`` or ``#`` in one cannot cut the query."""
    from urllib.parse import parse_qsl

    base, _, query = url.partition("?")
    query = query.partition("#")[0]
    return base, parse_qsl(query, keep_blank_values=True)


def environment(*, strict: bool = False) -> jinja2.sandbox.SandboxedEnvironment:
    """The sandboxed template environment, with ``tojson`` writing a JSON literal."""
    import jinja2
    import jinja2.sandbox

    undefined = jinja2.StrictUndefined if strict else jinja2.Undefined
    made = jinja2.sandbox.SandboxedEnvironment(autoescape=False, undefined=undefined)
    made.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    return made


def sample_variables(params: dict[str, Any], query: str = DEFAULT_PROBE) -> dict[str, Any]:
    """What the templates see for one query (the probe's, by default)."""
    paths = parse_hit_fields(params["hit_fields"])
    return {
        "query": query,
        "query_id": PROBE_QUERY_ID,
        "depth": 10,
        "fields": params["fields"],
        "stored_fields": paths.stored_fields() if paths else [],
    }


def check_scheme(url: str, label: str) -> None:
    """The rendered url is http or https: httpx would refuse anything else on every query."""
    if not url.lower().startswith(("http://", "https://")):
        raise InputError(f"http searcher url {label!r} must start with http:// or https://")


class _AnyEnvironment(dict[str, str]):
    """Every variable set (to ``0``): checking a config needs no secrets."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return "0"


def check_params(params: dict[str, Any]) -> None:
    """The module's checks (see the docstring); an ``InputError`` names what is wrong."""
    settings = settings_of(params)
    slots = SecretSlots(_AnyEnvironment())
    strict = environment(strict=True)
    compile_ = compiler(strict)
    variables = sample_variables(params)
    for what, source in _sources(settings, slots):
        _check_template(strict, compile_(source, what), source, what, variables)
    body = compile_body(slots.hide(settings["body"]), compile_)
    if isinstance(settings["body"], str) and _json_body(settings):
        rendered = render_body(body, variables, masked)
        try:
            json.loads(slots.reveal(rendered))
        except (ValueError, RecursionError) as error:
            raise InputError(
                f"http searcher body is not valid JSON ({getattr(error, 'msg', error)}) "
                f"for the query {DEFAULT_PROBE!r}: {shorten(slots.mask(rendered))!r}"
            ) from None
    url = compile_(slots.hide(settings["url"]), "url").render(variables)
    if not params["url"].lstrip().startswith(_TEMPLATED_START):
        check_scheme(slots.reveal(url), params["url"])
    named = {name for name, _ in split_query(url)[1]}
    twice = sorted(named & set(params["query_params"] or {}))
    if twice:
        raise InputError(
            f"http searcher query param {twice[0]!r} is given in the url and in query_params; "
            "give it once"
        )
    _check_request_shape(params, settings)
    if settings["results_path"] is None:
        raise InputError("http searcher needs results_path (or a preset)")
    for key in ("results_path", "id_field", "score_field"):
        if settings[key]:
            parse_path(settings[key])


def uses_query(params: dict[str, Any]) -> bool:
    """Does the request carry the query text (does any template read ``query``)?"""
    from jinja2 import meta

    made = environment()
    return any(
        "query" in meta.find_undeclared_variables(made.parse(source))
        for _, source in _sources(settings_of(params), SecretSlots(_AnyEnvironment()))
    )


def _json_body(settings: dict[str, Any]) -> bool:
    return not any(
        name.lower() == "content-type" and "json" not in str(value).lower()
        for name, value in settings["headers"].items()
    )


def _sources(settings: dict[str, Any], slots: SecretSlots) -> Iterator[tuple[str, str]]:
    """Every template of a request: (what it is, its source with placeholders hidden)."""
    yield "url", slots.hide(settings["url"])
    for name, value in settings["headers"].items():
        yield f"header {name}", slots.hide(str(value))
    for name, value in (settings["query_params"] or {}).items():
        yield f"query param {name}", slots.hide(str(value))
    yield from (("body", slots.hide(text)) for text in _strings(settings["body"]))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _check_template(
    made: jinja2.Environment,
    template: jinja2.Template,
    source: str,
    what: str,
    variables: dict[str, Any],
) -> None:
    from jinja2 import meta

    unknown = sorted(
        meta.find_undeclared_variables(made.parse(source))
        - set(TEMPLATE_VARIABLES)
        - set(made.globals)
    )
    if unknown:
        raise InputError(
            f"http searcher {what} template uses {unknown[0]!r}, which is not defined; "
            f"templates see {', '.join(TEMPLATE_VARIABLES)}"
        )
    try:
        template.render(variables)
    except Exception as error:  # any template failure: UndefinedError, TypeError, ZeroDivision
        raise InputError(
            f"http searcher {what} template fails for the query {DEFAULT_PROBE!r}: "
            f"{type(error).__name__}: {shorten(str(error))}"
        ) from None


def _check_request_shape(params: dict[str, Any], settings: dict[str, Any]) -> None:
    if not _METHOD.fullmatch(settings["method"]):
        raise InputError(f"http searcher method {settings['method']!r} is not an HTTP method")
    for name, value in params["headers"].items():
        if not HEADER_NAME.fullmatch(name):
            raise InputError(f"http searcher header name {name!r} is not a valid header name")
        if _LINE_BREAK.search(str(value)):
            raise InputError(f"http searcher header {name} must be one line of text")
    auth = params["auth"]
    if auth and ":" not in auth and not has_placeholder(auth):
        raise InputError("http searcher auth must be user:password (or a ${ENV} placeholder)")
