"""The ``http`` searcher: one templated HTTP request per query, hits read from the JSON answer.

Templates (Jinja2, sandboxed) see ``query``, ``query_id``, ``depth`` and ``fields``; the
``tojson`` filter writes a JSON literal (``{{ query|tojson }}`` -> ``"say \\"hi\\""``), which
is how query text goes into a JSON body safely. Rendered: ``url``, each header value, each
``query_params`` value (URL-encoded by httpx; empty values are dropped) and ``body``:

- a string body is rendered as text and sent as is (checked to be JSON unless a
  ``Content-Type`` header says otherwise);
- a table/list body (from TOML) is sent as JSON with every string inside rendered; a string
  that is exactly ``{{ depth }}``, ``{{ query }}`` or ``{{ query_id }}`` keeps the value's type.

The url's own query string is kept (``url = "https://api/search?fmt=json&key=${KEY}"``): its
parameters are sent first, as written, then the ``query_params`` (the preset's, or given) the url
does not name; one named in the url and in a given ``query_params`` is refused by the check.

Presets fill in everything but ``url``; params given explicitly win. ``fields`` (e.g.
``["title^2", "text"]``) picks the searched fields.

- ``elasticsearch``/``opensearch``: ``POST {url}/_search`` (``/_search`` appended unless the
  url ends with it) with a ``multi_match`` query of ``size`` depth; hits ``hits.hits``, id
  ``_id``, score ``_score``.
- ``solr``: ``GET {url}/select?q=...&rows=depth&fl=id,score&defType=edismax&qf=fields``; hits
  ``response.docs``, id ``id``, score ``score``.

``hit_fields`` (field name -> path in a hit, :mod:`evalplat.searchers.hit_fields`) reads
document field values from each hit for ``search_with_fields``; the presets then ask the engine
for those fields (``stored_fields`` in the templates: Elasticsearch's ``_source``, Solr's
``fl``), and leave their requests as they were without it.

``${ENV}`` placeholders in ``url``, ``headers``, ``query_params`` and ``body`` are substituted
after the template is rendered (see :class:`~evalplat.inputs.env.SecretSlots`), so a secret
is sent exactly as set and never read as template text; ``auth`` (``user:password``, HTTP
basic) is expanded once. Secrets stay in memory; messages name the url as configured, and an
engine's answer quoted in a message (an error body that echoes the request) has every secret
value redacted to ``***`` first, as sent, URL-encoded or JSON-escaped, so it is never stored,
printed or published.

Before a run, ``check`` sends the ``probe`` query (``"evalplat"`` unless set; ``false`` sends
nothing), so an unreachable engine or refused credentials stop the run before it starts; the
probe shows in the engine's query logs, hence the param. What is checked before any request
(templates, body, url, headers) is in :mod:`evalplat.searchers.http_config`.

Status mapping: 2xx parsed; 408, 429 and 5xx -> ``TransientSearchError`` with ``Retry-After``
(seconds or an HTTP date); any other status -> ``SearchError`` quoting the start of the body.
Timeouts and connection errors are transient; a body that is not JSON or lacks the results
path is a ``SearchError`` quoting the start of the body.
"""

from __future__ import annotations

import base64
import email.utils
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.env import SecretSlots
from evalplat.searchers.base import (
    BackendUnavailableError,
    Hit,
    HitFields,
    Searcher,
    SearchError,
    TransientSearchError,
    record_request_ms,
    score_from_rank,
    shorten,
)
from evalplat.searchers.engines import http_engine
from evalplat.searchers.hit_fields import FieldPaths, parse_hit_fields
from evalplat.searchers.http_config import (
    DEFAULT_PROBE,
    PRESETS,
    PROBE_QUERY_ID,
    check_params,
    check_scheme,
    environment,
    sample_variables,
    settings_of,
    split_query,
    uses_query,
)
from evalplat.searchers.http_templates import compile_body, compiler, masked, render_body
from evalplat.searchers.kinds import RETRIES_MAX, TIMEOUT_MAX, Param, SearchContext, SearcherKind
from evalplat.searchers.response_path import parse_path, select_hits, select_one

if TYPE_CHECKING:
    import httpx


class HttpSearcher(Searcher):
    """Sends rendered requests through one pooled ``httpx.Client`` shared by all threads."""

    kind = "http"

    def __init__(self, params: dict[str, Any], context: SearchContext) -> None:
        import httpx

        settings = settings_of(params)
        self.label = settings["url"]  # as configured: placeholders unexpanded
        self.retries = params["retries"]
        self.timeout: float = params["timeout"]
        self.fields: list[str] = params["fields"]
        self.hit_fields: FieldPaths | None = parse_hit_fields(params["hit_fields"])
        self._stored = self.hit_fields.stored_fields() if self.hit_fields else []
        self.method: str = settings["method"].upper()
        self.probe: str | bool = params["probe"]
        compile_ = compiler(environment())
        self._secrets = secrets = SecretSlots()
        self._url = compile_(secrets.hide(settings["url"]), "url")
        # the scheme may come from a ${ENV} placeholder: checked here, once it is filled in
        check_scheme(secrets.reveal(self._url.render(sample_variables(params))), self.label)
        self._headers = {
            name: compile_(str(value), f"header {name}")
            for name, value in secrets.hide(params["headers"]).items()
        }
        self._query_params = {
            name: compile_(str(value), f"query param {name}")
            for name, value in secrets.hide(settings["query_params"]).items()
        }
        self._body = compile_body(secrets.hide(settings["body"]), compile_)
        self._json_body = not any(
            name.lower() == "content-type" and "json" not in str(value).lower()
            for name, value in params["headers"].items()
        )
        if settings["results_path"] is None:
            raise InputError("http searcher needs results_path (or a preset)")
        self._results_path = parse_path(settings["results_path"])
        self._id_path = parse_path(settings["id_field"])
        self._score_path = parse_path(settings["score_field"]) if settings["score_field"] else None
        auth = secrets.reveal(secrets.hide(params["auth"])) if params["auth"] else None
        if auth:  # an engine may echo the Authorization header it was sent
            secrets.conceal(base64.b64encode(auth.encode("utf-8")).decode("ascii"))
        size = max(1, context.concurrency)
        self.client = httpx.Client(
            timeout=self.timeout,
            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
            auth=tuple(auth.split(":", 1)) if auth else None,
            verify=params["verify"],
            follow_redirects=True,
        )

    def build_request(self, query_id: str, text: str, depth: int) -> httpx.Request:
        """The request for one query (rendered templates, not yet sent); a template that fails
        for this query is a ``SearchError`` of the query."""
        import httpx
        import jinja2

        try:
            return self._build(query_id, text, depth)
        except httpx.InvalidURL:  # its message may quote the url with the secrets in
            raise SearchError(
                f"{self.label}: query {query_id!r}: the rendered url is not a valid URL"
            ) from None
        except (jinja2.TemplateError, TypeError, ValueError, LookupError, ArithmeticError) as error:
            raise SearchError(
                f"{self.label}: query {query_id!r}: a request template failed "
                f"({type(error).__name__}: {shorten(str(error))})"
            ) from None

    def _build(self, query_id: str, text: str, depth: int) -> httpx.Request:
        variables = {
            "query": text,
            "query_id": query_id,
            "depth": depth,
            "fields": self.fields,
            "stored_fields": self._stored,
        }
        reveal = self._secrets.reveal
        headers = {
            name: reveal(template.render(variables)) for name, template in self._headers.items()
        }
        url, own = split_query(self._url.render(variables))
        named = {name for name, _ in own}
        query_params = [(reveal(name), reveal(value)) for name, value in own]
        for name, template in self._query_params.items():
            value = reveal(template.render(variables))
            if value != "" and name not in named:  # the url's own parameter wins
                query_params.append((name, value))
        content: str | None = None
        if self._body is not None:
            content = render_body(self._body, variables, reveal)
            if self._json_body:
                try:
                    json.loads(content)
                except (ValueError, RecursionError) as error:
                    shown = self._secrets.mask(render_body(self._body, variables, masked))
                    raise SearchError(
                        f"http searcher body for query {query_id!r} is not valid JSON "
                        f"({getattr(error, 'msg', error)}): {shorten(shown)!r}"
                    ) from None
                if not any(name.lower() == "content-type" for name in headers):
                    headers["Content-Type"] = "application/json"
        return self.client.build_request(
            self.method,
            reveal(url),
            params=query_params,
            headers=headers,
            content=content,
        )

    def search(self, query_id: str, text: str, depth: int) -> list[Hit]:
        return self.search_with_fields(query_id, text, depth)[0]

    def search_with_fields(
        self, query_id: str, text: str, depth: int
    ) -> tuple[list[Hit], list[HitFields] | None]:
        response = self._send(self.build_request(query_id, text, depth), query_id)
        if not response.is_success:
            raise _status_error(response, self.label, query_id, self._secrets.redact)
        try:
            document = json.loads(response.content)
        except (ValueError, RecursionError):  # also too deep, or integers of 4300+ digits
            raise SearchError(
                f"{self.label}: query {query_id!r} got a response that is not JSON: "
                f"{_quoted(response, self._secrets.redact)!r}"
            ) from None
        try:
            items = select_hits(document, self._results_path)
            hits = self._hits(items)
        except SearchError as error:
            problem = self._secrets.redact(str(error))
            raise SearchError(f"{self.label}: query {query_id!r}: {problem}") from None
        if self.hit_fields is None:
            return hits, None
        return hits, [self.hit_fields.read(item) for item in items]

    def _hits(self, items: list[Any]) -> list[Hit]:
        hits: list[Hit] = []
        for rank, item in enumerate(items):
            doc_id = select_one(item, self._id_path)
            if doc_id is None or isinstance(doc_id, dict | list | bool):
                raise SearchError(f"hit {rank + 1} has no usable {self._id_path.text!r}")
            score = select_one(item, self._score_path) if self._score_path else None
            if score is None:
                score = score_from_rank(rank, len(items))
            if isinstance(score, bool) or not isinstance(score, int | float | str):
                raise SearchError(f"hit {rank + 1} has a non-numeric score {score!r}")
            try:
                hits.append((str(doc_id), float(score)))
            except ValueError:
                raise SearchError(f"hit {rank + 1} has a non-numeric score {score!r}") from None
        return hits

    def _send(self, request: httpx.Request, query_id: str) -> httpx.Response:
        import httpx

        marks: dict[str, float] = {}

        def trace(event: str, info: dict[str, Any]) -> None:
            # httpcore's events: the request's first byte on the wire, the answer's last
            if event.endswith(".send_request_headers.started"):
                marks.setdefault("sent", time.perf_counter())
            elif event.endswith(".receive_response_body.complete"):
                marks["received"] = time.perf_counter()

        request.extensions["trace"] = trace
        try:
            response = self.client.send(request)
            done = time.perf_counter()
            if "sent" in marks:
                record_request_ms((marks.get("received", done) - marks["sent"]) * 1000.0)
            return response
        except httpx.TimeoutException:
            raise TransientSearchError(
                f"{self.label}: query {query_id!r} timed out after {self.timeout:g}s"
            ) from None
        except httpx.UnsupportedProtocol as error:
            raise SearchError(f"{self.label}: {self._secrets.redact(str(error))}") from None
        except httpx.TransportError as error:
            raise TransientSearchError(
                f"{self.label}: cannot reach the server "
                f"({type(error).__name__}: {self._secrets.redact(str(error))})"
            ) from None

    def check(self) -> None:
        """Send the ``probe`` query (none when it is false): unreachable, 401, 403 or 404 means
        the run cannot work."""
        if not isinstance(self.probe, str):  # probe = false: no request before the run
            return
        try:
            request = self.build_request(PROBE_QUERY_ID, self.probe, 1)
            response = self._send(request, PROBE_QUERY_ID)
        except SearchError as error:
            raise BackendUnavailableError(str(error)) from None
        if response.status_code in (401, 403, 404):
            refused = _status_error(response, self.label, PROBE_QUERY_ID, self._secrets.redact)
            raise BackendUnavailableError(str(refused))

    def close(self) -> None:
        self.client.close()


def _quoted(response: httpx.Response, redact: Callable[[str], str]) -> str:
    """The start of a response's body for a message, secrets redacted first: redacting after
    the cut could leave the start of a secret the cut went through."""
    return shorten(redact(response.content.decode("utf-8", "replace"))[:200])


def _status_error(
    response: httpx.Response, label: str, query_id: str, redact: Callable[[str], str]
) -> SearchError:
    body = _quoted(response, redact)
    message = f"{label}: query {query_id!r} got HTTP {response.status_code}: {body!r}"
    status = response.status_code
    if status in (408, 429) or status >= 500:
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        return TransientSearchError(message, retry_after=retry_after)
    return SearchError(message)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110).

    A date in the past gives 0; an unreadable value gives None (use the normal backoff).
    """
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def _create(params: dict[str, Any], context: SearchContext) -> Searcher:
    return HttpSearcher(params, context)


KIND = SearcherKind(
    name="http",
    description="a templated HTTP request per query (Elasticsearch, OpenSearch, Solr, JSON APIs)",
    params=(
        Param(
            "url",
            "str",
            None,
            "endpoint URL (a template; its query string is kept); for presets the index/core URL",
            required=True,
        ),
        Param("preset", "str", None, "elasticsearch, opensearch or solr", choices=tuple(PRESETS)),
        Param("method", "str", None, "HTTP method (default GET, or the preset's)"),
        Param("body", "json", None, "request body template (JSON text or a table)"),
        Param("headers", "mapping", {}, "header name -> template, e.g. ${ENV} secrets"),
        Param("query_params", "mapping", None, "URL query parameter -> template"),
        Param("auth", "str", "", "HTTP basic auth as user:password (use ${ENV})"),
        Param("fields", "list", [], "fields the presets search, e.g. title^2 text"),
        Param("results_path", "str", None, "path to the list of hits, e.g. hits.hits"),
        Param(
            "hit_fields",
            "mapping",
            {},
            "document field name -> path in a hit, e.g. source=_source.site (stored per result)",
        ),
        Param("id_field", "str", None, "path to the doc id in a hit (default id)"),
        Param("score_field", "str", None, "path to the score in a hit (default score)"),
        Param("timeout", "float", 10.0, "seconds per request", above=0, maximum=TIMEOUT_MAX),
        Param(
            "retries",
            "int",
            3,
            "retries of a timed-out, refused, 429 or 5xx request",
            minimum=0,
            maximum=RETRIES_MAX,
        ),
        Param("verify", "bool", True, "verify TLS certificates"),
        Param(
            "probe",
            "str or false",
            DEFAULT_PROBE,
            "query text of the one request sent before a run to check the engine answers "
            "(it shows in the engine's query logs); false sends none",
        ),
    ),
    factory=_create,
    check=check_params,
    reads_text=uses_query,
    engine=http_engine,
)
