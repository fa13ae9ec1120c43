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

**Untrusted text.** Query and document text come from files and engines: the templates
autoescape everything, and a strict Content-Security-Policy (scripts and styles from this
server only, no inline script, no frames, no plugins) keeps a hostile document inert even if
escaping were ever missed.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from evalplat.rating.tokens import cookie_name, same_secret, token_hash

if TYPE_CHECKING:
    import jinja2
    from starlette.applications import Starlette
    from starlette.requests import Request
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


class Forbidden(Exception):
    """Answered 403, with a page that says no more than that the link is not valid."""


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
    from evalplat.rating.routes import ROUTES, forbidden, not_found

    app = Starlette(
        routes=ROUTES,
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={Forbidden: forbidden, NotFoundError: not_found},
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
