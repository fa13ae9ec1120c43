"""The rating web application (ASGI, Starlette): who gets in, and the headers every answer
carries. The pages and the grade posts are ``evalplat.rating.routes``.

**Who gets in.** An invite link (``/tasks/TASK/enter/TOKEN``) is checked against the stored
hash of its token; for a live invite of this very task it shows a page naming the task and
the rater, and nothing more: following a link logs nobody in, so a crafted link cannot make a
person grade under someone else's invite (login CSRF). The page's focused button posts back a
nonce that a ``SameSite=Strict`` cookie also holds (a cross-site page can neither read the
nonce nor send the cookie; a ``Sec-Fetch-Site`` other than same-origin is refused too); only
then is the task's cookie set, holding the token (HttpOnly, ``SameSite=Strict``, scoped to the
task's path, ``Secure`` behind HTTPS), and the rater sent on to the task, so the token leaves
the address bar. Every later request is checked again the same way:
no token, a wrong one, an expired or revoked one, another task's, or a closed task all get 403.

**Cross-site requests.** Grades are posted as JSON with the invite's anti-forgery value in the
``X-Evalplat-CSRF`` header, compared in constant time. A cross-site form cannot set a header
and cannot send JSON, and a cross-site script that tries needs a CORS preflight this server
never grants; the value also stops a same-site sibling (another app on a subdomain, which
``SameSite`` lets through) that cannot read the page.

**Bounded before authenticated.** Every route reads at most the bytes it needs, before any
other check: a body whose ``Content-Length`` is above the largest any route takes is refused
with 413 before routing (``BodyLimit``), and a route reading a body (``read_body``) refuses
one declared or streamed past its own limit as soon as it is, so a chunked body is never held
beyond the limit. A JSON body's nesting is counted before it is parsed (``json_body``).

**Untrusted text.** Query and document text come from files and engines: the templates
autoescape everything, and a strict Content-Security-Policy (scripts and styles from this
server only, no inline script, no frames, no plugins) keeps a hostile document inert even if
escaping were ever missed.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from evalplat.errors import InputError
from evalplat.inputs.validation import check_json_depth
from evalplat.rating.tokens import cookie_name, same_secret, token_hash

if TYPE_CHECKING:
    import jinja2
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp, Receive, Scope, Send

    from evalplat.store import Store
    from evalplat.store.rating import InviteInfo, RatingTaskInfo
    from evalplat.store.rating_views import RaterState

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
CSRF_HEADER = "x-evalplat-csrf"
JSON_DEPTH_MAX = 8  # a grade is one flat object: anything deeper is not one


class Forbidden(Exception):
    """Answered 403, with a page that says no more than that the link is not valid."""


class BodyTooLarge(Exception):
    """Answered 413: the request's body is larger than its route takes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the body is larger than {limit:,} bytes")
        self.limit = limit


def _declared_length(headers: Any) -> int | None:
    """The ``Content-Length`` a request declares (the server has checked its syntax)."""
    text = headers.get("content-length")
    return int(text) if text is not None and text.isascii() and text.isdigit() else None


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, at most ``limit`` bytes: a larger one raises ``BodyTooLarge`` as
    soon as its ``Content-Length`` says so, or as its chunks pass the limit, holding no more
    than ``limit`` bytes and one chunk."""
    declared = _declared_length(request.headers)
    if declared is not None and declared > limit:
        raise BodyTooLarge(limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(limit)
    return bytes(body)


async def json_body(request: Request, limit: int) -> Any:
    """The request's JSON body (at most ``limit`` bytes, nested at most ``JSON_DEPTH_MAX``
    deep); ``InputError`` when it is not JSON."""
    import json

    try:
        text = (await read_body(request, limit)).decode("utf-8")
        return json.loads(check_json_depth(text, "the body", JSON_DEPTH_MAX))
    except ValueError:  # also a body that is not UTF-8
        raise InputError("the body must be JSON") from None


class BodyLimit:
    """Refuses (413) a request whose ``Content-Length`` is above ``limit``, the largest body any
    route takes, before it is routed; a route's own limit is ``read_body``'s."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            from starlette.datastructures import Headers

            declared = _declared_length(Headers(scope=scope))
            if declared is not None and declared > self.limit:
                await _too_large(self.limit)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def too_large(_request: Request, error: Exception) -> Response:
    return _too_large(error.limit if isinstance(error, BodyTooLarge) else 0)


def _too_large(limit: int) -> Response:
    from starlette.responses import JSONResponse

    # the connection closes: the rest of the body is not read to find the next request
    return JSONResponse(
        {"error": f"the body is larger than {limit:,} bytes"},
        status_code=413,
        headers={"connection": "close"},
    )


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every HTTP answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        # the script and the style are cached (routes.static); the path holds the root path
        static = scope["path"].endswith(("/static/rate.js", "/static/rate.css"))

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = SECURITY_HEADERS[:-1] if static else SECURITY_HEADERS
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        await self.app(scope, receive, with_headers)


def templates() -> jinja2.Environment:
    import jinja2

    from evalplat.metrics.numbers import counted
    from evalplat.resources import data_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(data_dir("templates") / "rate"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["counted"] = counted
    return env


def create_app(store: Store) -> Starlette:
    """The application over ``store`` (the routes: ``evalplat.rating.routes``)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware

    from evalplat.errors import NotFoundError
    from evalplat.rating.routes import BODY_MAX, ROUTES, forbidden, not_found

    app = Starlette(
        routes=ROUTES,
        middleware=[Middleware(SecurityHeaders), Middleware(BodyLimit, limit=BODY_MAX)],
        exception_handlers={
            Forbidden: forbidden,
            NotFoundError: not_found,
            BodyTooLarge: too_large,
        },
    )
    app.state.store = store
    app.state.templates = templates()
    return app


def rater_state(
    request: Request, pair_id: int | None = None, token: str | None = None
) -> RaterState:
    """The state behind the request's cookie for the task its path names (or behind
    ``token``, from an invite link): a live invite of this very task, else 403."""
    store: Store = request.app.state.store
    task = request.path_params["task"]
    token = token if token is not None else request.cookies.get(cookie_name(task))
    if not token or len(token) > 200:
        raise Forbidden
    state = store.rating_state(task, token_hash(token), pair_id)
    if state is None:
        raise Forbidden
    return state


def rater_access(request: Request) -> tuple[RatingTaskInfo, InviteInfo]:
    """The task and live invite behind the request's cookie, without the task's pairs and
    grades (for posts); else 403."""
    store: Store = request.app.state.store
    task = request.path_params["task"]
    token = request.cookies.get(cookie_name(task))
    if not token or len(token) > 200:
        raise Forbidden
    found = store.rating_access(task, token_hash(token))
    if found is None:
        raise Forbidden
    return found


def check_csrf(request: Request, invite: InviteInfo) -> None:
    """A state-changing request must carry the invite's anti-forgery value and be JSON."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json" or not same_secret(request.headers.get(CSRF_HEADER), invite.csrf):
        raise Forbidden
