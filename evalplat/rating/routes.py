"""The rating application's pages and posts (who gets in: ``evalplat.rating.app``).

GET  /tasks/T/enter/TOKEN          an invite link: a page naming the task and the rater
POST /tasks/T/enter/TOKEN          its button (same origin, nonce): sets the task's cookie
GET  /tasks/T/                     the rater's next ungraded pair (or "all done")
GET  /tasks/T/pairs/ID             the rating screen for one pair
POST /tasks/T/pairs/ID/grade       {"grade": 2, "note": str} or {"grade": null, "unsure": true}
GET  /tasks/T/progress             progress per rater, agreement (and the judge's)
GET  /tasks/T/disagreements        a lead's list of pairs the raters disagree on
POST /tasks/T/pairs/ID/settle      a lead's final grade {"grade": 2}
GET  /tasks/T/guidelines           the test set's guidelines (Markdown, HTML disabled)
GET  /static/rate.js | rate.css    the page's only script and style
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from evalplat.errors import InputError
from evalplat.inputs.validation import check_free_text
from evalplat.rating.app import (
    Forbidden,
    check_csrf,
    json_body,
    rater_access,
    rater_state,
    read_body,
)
from evalplat.rating.tokens import cookie_name, new_csrf, same_secret
from evalplat.store.rating import RatingConflictError

if TYPE_CHECKING:
    from starlette.requests import Request

    from evalplat.store import Store
    from evalplat.store.rating import InviteInfo, RatingTaskInfo

NOTE_MAX = 2000
# the bodies the routes take: the enter form's nonce, and a grade with the longest note, each
# of its characters escaped as a surrogate pair (12 bytes); BODY_MAX is the largest
ENTER_BODY_MAX = 1000
GRADE_BODY_MAX = 1000 + 12 * NOTE_MAX
BODY_MAX = max(ENTER_BODY_MAX, GRADE_BODY_MAX)
ENTER_COOKIE = "evalplat_enter"
ENTER_SECONDS = 60 * 30  # the enter page's nonce: long enough to read the page and click
STATIC = {"rate.js": "application/javascript", "rate.css": "text/css"}


def _page(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    page = request.app.state.templates.get_template(template)
    static = str(request.url_for("static", name="rate.css")).rsplit("/", 1)[0]
    return HTMLResponse(page.render(static=static, **values), status_code=status)


def forbidden(request: Request, _error: Exception) -> Response:
    return _page(request, "forbidden.html", status=403)


def not_found(request: Request, _error: Exception) -> Response:
    """A pair that is not on the rater's list (another rater took it): back to the task."""
    task = request.path_params.get("task")
    if task is None:
        return Response("not found", status_code=404, media_type="text/plain")
    return RedirectResponse(str(request.url_for("home", task=task)), status_code=303)


def enter(request: Request) -> Response:
    """The invite link shows which task and name it is for, and sets nothing but a nonce: a
    crafted link cannot log anyone in as another person's invite (login CSRF)."""
    token = request.path_params["token"]
    state = rater_state(request, token=token)
    nonce = new_csrf()
    enter_url = request.url_for("enter", task=state.task.name, token=token)
    response = _page(request, "enter.html", task=state.task, invite=state.invite,
                     nonce=nonce, enter_url=str(enter_url))  # fmt: skip
    response.set_cookie(
        ENTER_COOKIE, nonce, path=enter_url.path, httponly=True, samesite="strict",
        secure=request.url.scheme == "https", max_age=ENTER_SECONDS,
    )  # fmt: skip
    return response


async def enter_post(request: Request) -> Response:
    """The enter page's button: a same-origin form post carrying the nonce its cookie holds
    (double submit; the cookie is ``SameSite=Strict``), then the task's cookie is set."""
    token = request.path_params["token"]
    if request.headers.get("sec-fetch-site", "same-origin") != "same-origin":
        raise Forbidden
    body = await read_body(request, ENTER_BODY_MAX)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Forbidden
    given = parse_qs(body.decode("ascii", "replace")).get("nonce", [None])[0]
    if not same_secret(given, request.cookies.get(ENTER_COOKIE, "")) or not given:
        raise Forbidden
    state = await run_in_threadpool(rater_state, request, None, token)
    home = request.url_for("home", task=state.task.name)
    response = RedirectResponse(str(home), status_code=303)
    response.delete_cookie(
        ENTER_COOKIE, path=request.url_for("enter", task=state.task.name, token=token).path
    )
    response.set_cookie(
        cookie_name(state.task.name),
        token,
        path=home.path,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        max_age=60 * 60 * 24 * 90,
    )
    return response


def _state(request: Request) -> tuple[Store, RatingTaskInfo, InviteInfo]:
    state = rater_state(request)
    return request.app.state.store, state.task, state.invite


def home(request: Request) -> Response:
    from evalplat.rating.screen import next_pair

    state = rater_state(request)
    task, invite = state.task, state.invite
    pair_id = next_pair(state)
    if pair_id is None:
        return _page(request, "done.html", task=task, invite=invite)
    return RedirectResponse(str(request.url_for("pair", task=task.name, pair_id=pair_id)), 303)


def pair(request: Request) -> Response:
    from evalplat.rating.screen import screen

    state = rater_state(request, _pair_id(request))
    task, invite = state.task, state.invite
    view = screen(request.app.state.store, state)
    urls = {
        name: None if to is None else str(request.url_for("pair", task=task.name, pair_id=to))
        for name, to in (("prev", view.prev_id), ("next", view.next_id))
    }
    return _page(
        request,
        "pair.html",
        task=task,
        invite=invite,
        view=view,
        prev_url=urls["prev"],
        next_url=urls["next"],
        home_url=str(request.url_for("home", task=task.name)),
        grade_url=str(request.url_for("grade", task=task.name, pair_id=view.pair.pair_id)),
        progress_url=str(request.url_for("progress", task=task.name)),
        guidelines_url=str(request.url_for("guidelines", task=task.name)),
    )


async def grade(request: Request) -> Response:
    from evalplat.rating.screen import judge_grade

    store = request.app.state.store
    task, invite = await run_in_threadpool(rater_access, request)
    check_csrf(request, invite)
    try:
        value, unsure, note = _grade_body(await json_body(request, GRADE_BODY_MAX), task.scale)
        pair_id = _pair_id(request)
        await run_in_threadpool(
            store.record_rating_grade, task.name, pair_id, invite.rater, value, unsure, note
        )
    except RatingConflictError as error:
        return JSONResponse({"error": error.problem}, status_code=409)
    except InputError as error:
        return JSONResponse({"error": error.problem}, status_code=400)
    judged = await run_in_threadpool(judge_grade, store, task, pair_id)
    return JSONResponse({"saved": True, "grade": value, "unsure": unsure, "judge_grade": judged})


async def settle(request: Request) -> Response:
    store = request.app.state.store
    task, invite = await run_in_threadpool(rater_access, request)
    check_csrf(request, invite)
    if invite.role != "lead":
        raise Forbidden
    try:
        value, _, _ = _grade_body(await json_body(request, GRADE_BODY_MAX), task.scale)
        if value is None:
            raise InputError("a settled pair needs a grade")
        pair_id = _pair_id(request)
        await run_in_threadpool(store.settle_rating_pair, task.name, pair_id, value, invite.rater)
    except RatingConflictError as error:
        return JSONResponse({"error": error.problem}, status_code=409)
    except InputError as error:
        return JSONResponse({"error": error.problem}, status_code=400)
    return JSONResponse({"settled": True, "grade": value})


def progress(request: Request) -> Response:
    from evalplat.rating.screen import task_overview

    store, task, invite = _state(request)
    overview = task_overview(store, task)
    return _page(
        request,
        "progress.html",
        task=task,
        invite=invite,
        overview=overview,
        home_url=str(request.url_for("home", task=task.name)),
        disagreements_url=str(request.url_for("disagreements", task=task.name)),
    )


def disagreements(request: Request) -> Response:
    from evalplat.rating.screen import disagreement_rows

    store, task, invite = _state(request)
    if invite.role != "lead":
        raise Forbidden
    rows = disagreement_rows(store, task)
    settle_urls = {
        row.pair.pair_id: str(request.url_for("settle", task=task.name, pair_id=row.pair.pair_id))
        for row in rows
    }
    return _page(
        request,
        "disagreements.html",
        task=task,
        invite=invite,
        rows=rows,
        settle_urls=settle_urls,
        progress_url=str(request.url_for("progress", task=task.name)),
    )


def guidelines(request: Request) -> Response:
    from markupsafe import Markup

    from evalplat.rating.screen import render_markdown

    store, task, invite = _state(request)
    html = Markup(render_markdown(store.rating_guidelines(task.name)))
    return _page(
        request,
        "guidelines.html",
        task=task,
        invite=invite,
        guidelines=html,
        home_url=str(request.url_for("home", task=task.name)),
    )


def static(request: Request) -> Response:
    from evalplat.resources import data_dir

    name = request.path_params["name"]
    if name not in STATIC:
        return Response("not found", status_code=404, media_type="text/plain")
    body = (data_dir("templates") / "rate" / name).read_bytes()
    # the script and style change only with evalplat: cached for an hour, not fetched per pair
    return Response(body, media_type=STATIC[name], headers={"cache-control": "max-age=3600"})


def _pair_id(request: Request) -> int:
    text = request.path_params["pair_id"]
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise Forbidden
    return int(text)


def _grade_body(body: Any, scale: tuple[int, int]) -> tuple[int | None, bool, str | None]:
    """``grade`` (in the scale, or null with ``unsure``), ``unsure`` and ``note``."""
    if not isinstance(body, dict):
        raise InputError("the body must be a JSON object")
    value, unsure, note = body.get("grade"), body.get("unsure", False), body.get("note")
    if not isinstance(unsure, bool):
        raise InputError("unsure must be true or false")
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int) or not scale[0] <= value <= scale[1]
    ):
        raise InputError(f"grade must be a whole number from {scale[0]} to {scale[1]}")
    if value is None and not unsure:
        raise InputError("give a grade, or unsure")
    if value is not None and unsure:
        raise InputError("give a grade or unsure, not both")
    if note is not None:
        if not isinstance(note, str) or len(note) > NOTE_MAX:
            raise InputError(f"note must be text of at most {NOTE_MAX} characters")
        note = check_free_text(note, "note").strip() or None
    return value, unsure, note


ROUTES = [
    Route("/tasks/{task}/enter/{token}", enter, name="enter"),
    Route("/tasks/{task}/enter/{token}", enter_post, methods=["POST"], name="enter_post"),
    Route("/tasks/{task}/", home, name="home"),
    Route("/tasks/{task}/pairs/{pair_id}", pair, name="pair"),
    Route("/tasks/{task}/pairs/{pair_id}/grade", grade, methods=["POST"], name="grade"),
    Route("/tasks/{task}/pairs/{pair_id}/settle", settle, methods=["POST"], name="settle"),
    Route("/tasks/{task}/progress", progress, name="progress"),
    Route("/tasks/{task}/disagreements", disagreements, name="disagreements"),
    Route("/tasks/{task}/guidelines", guidelines, name="guidelines"),
    Route("/static/{name}", static, name="static"),
]
