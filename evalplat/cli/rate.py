"""``evalplat rate task | invite | revoke | serve | status | close``: judgments graded in the
browser by invited raters, closed into a new test set version (docs/rating.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalplat.cli.common import DbOption, JsonOption, echo_err, open_store, print_json

app = typer.Typer(
    help="Rate (query, document) pairs in the browser: tasks, invites, the server.",
    no_args_is_help=True,
)

DEFAULT_PORT = 8300


@app.command("task")
def task(
    name: Annotated[
        str,
        typer.Argument(
            help="Task name, part of its URLs: ASCII letters, digits, '.', '_' and '-', "
            "starting with a letter or digit."
        ),
    ],
    testset: Annotated[str, typer.Option("--testset", "-t", help="Test set the grades go to.")],
    from_run: Annotated[
        str | None,
        typer.Option("--from-run", help="Grade the unjudged top k of this run (as `unjudged`)."),
    ] = None,
    k: Annotated[int, typer.Option("--k", help="With --from-run: the top k of each query.")] = 10,
    pairs: Annotated[
        Path | None,
        typer.Option(
            "--pairs",
            help="CSV of query_id,doc_id[,rank] to grade, each pair once (e.g. `unjudged` "
            "output or `queries --judge-csv`).",
        ),
    ] = None,
    scale: Annotated[
        str | None,
        typer.Option(
            "--scale", help="Grades LOW-HIGH (default: the test set's).", show_default=False
        ),
    ] = None,
    raters_per_pair: Annotated[
        int, typer.Option("--raters-per-pair", help="How many raters grade each pair.")
    ] = 1,
    show_rank: Annotated[
        bool,
        typer.Option("--show-rank", help="Show raters each document's rank (hidden by default)."),
    ] = False,
    grades: Annotated[
        str,
        typer.Option(
            "--grades", help="Rule for several raters' grades: mean, max, majority, source:NAME."
        ),
    ] = "mean",
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge", help="Show this judge's grade (source llm:NAME) after a rater grades."
        ),
    ] = None,
    guidelines: Annotated[
        Path | None,
        typer.Option("--guidelines", help="Markdown guidelines for the test set's raters."),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Create a rating task from a run's unjudged top k or a CSV of pairs."""
    from evalplat.metrics.numbers import counted
    from evalplat.rating.tasks import create_task

    info = create_task(
        open_store(db),
        name,
        testset,
        run=from_run,
        k=k,
        pair_file=pairs,
        scale=scale,
        raters_per_pair=raters_per_pair,
        show_rank=show_rank,
        grade_rule=grades,
        judge=judge,
        guidelines=guidelines,
    )
    if json_output:
        print_json(info.to_dict())
        return
    low, high = info.scale
    typer.echo(
        f"task {info.name}: {counted(info.pairs, 'pair')} of {info.test_set}@{info.base_version}, "
        "grades "
        f"{low}-{high}, {counted(info.raters_per_pair, 'rater')} per pair"
    )


@app.command("invite")
def invite(
    task_name: Annotated[str, typer.Argument(metavar="TASK", help="Rating task.")],
    rater: Annotated[str, typer.Argument(metavar="NAME", help="Rater name: their grades' source.")],
    role: Annotated[
        str, typer.Option("--role", help="rater, or lead (settles disagreements).")
    ] = "rater",
    days: Annotated[
        float, typer.Option("--days", help="The link expires after this many days.")
    ] = 14,
    base_url: Annotated[
        str, typer.Option("--base-url", help="Where raters reach the server (your proxy's URL).")
    ] = f"http://127.0.0.1:{DEFAULT_PORT}",
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print an invite link for NAME: its token is shown once and stored hashed."""
    from datetime import UTC, datetime, timedelta
    from urllib.parse import quote

    from evalplat.errors import InputError
    from evalplat.inputs.validation import CONTROL, check_number
    from evalplat.rating.tasks import ROLES, check_rater
    from evalplat.rating.tokens import new_csrf, new_token, token_hash

    check_rater(rater)
    if role not in ROLES:
        raise InputError(f"--role must be rater or lead, got {role[:40]!r}")
    check_number(days, "--days", above=0, maximum=366)
    if not base_url.startswith(("http://", "https://")):
        raise InputError(f"--base-url must start with http:// or https://, got {base_url[:60]!r}")
    if CONTROL.search(base_url) or any(c.isspace() for c in base_url):
        raise InputError(
            f"--base-url must hold no space or control character, got {base_url[:60]!r}"
        )
    token = new_token()
    expires = datetime.now(UTC) + timedelta(days=days)
    open_store(db).add_rating_invite(task_name, rater, role, token_hash(token), new_csrf(), expires)
    link = f"{base_url.rstrip('/')}/tasks/{quote(task_name, safe='')}/enter/{token}"
    if json_output:
        print_json(
            {
                "task": task_name,
                "rater": rater,
                "role": role,
                "link": link,
                "expires_at": expires.isoformat(),
            }
        )
        return
    typer.echo(link)
    echo_err(f"{role} {rater} invited to {task_name} until {expires:%Y-%m-%d %H:%M} UTC")


@app.command("revoke")
def revoke(
    task_name: Annotated[str, typer.Argument(metavar="TASK", help="Rating task.")],
    rater: Annotated[str, typer.Argument(metavar="NAME", help="Rater whose links stop working.")],
    db: DbOption = None,
) -> None:
    """Revoke every link of NAME to TASK (their grades stay)."""
    from evalplat.metrics.numbers import counted

    count = open_store(db).revoke_rating_invites(task_name, rater)
    typer.echo(f"revoked {counted(count, 'invite')} of {rater} to {task_name}")


@app.command("serve")
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (only this machine by default).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = DEFAULT_PORT,
    root_path: Annotated[
        str, typer.Option("--root-path", help="Path prefix the reverse proxy serves under.")
    ] = "",
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(
            "--forwarded-allow-ips",
            help="Proxies whose X-Forwarded-Proto/For headers are trusted (comma separated).",
        ),
    ] = "127.0.0.1",
    db: DbOption = None,
) -> None:
    """Serve the rating pages until interrupted (Ctrl-C)."""
    from evalplat.errors import InputError
    from evalplat.inputs.validation import check_number
    from evalplat.rating.app import create_app

    check_number(port, "--port", minimum=1, maximum=65535)
    if root_path and (not root_path.startswith("/") or root_path.endswith("/")):
        raise InputError(f"--root-path must start with / and not end with one, got {root_path!r}")
    import uvicorn

    store = open_store(db)
    echo_err(f"serving rating tasks on http://{host}:{port}{root_path}/ (Ctrl-C stops)")
    uvicorn.run(
        create_app(store),
        host=host,
        port=port,
        root_path=root_path,
        proxy_headers=True,
        forwarded_allow_ips=forwarded_allow_ips,
        log_level="warning",
    )


@app.command("status")
def status(
    task_name: Annotated[str, typer.Argument(metavar="TASK", help="Rating task.")],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Progress per rater and agreement of a task."""
    from dataclasses import asdict

    from evalplat.metrics.numbers import counted
    from evalplat.rating.screen import task_overview

    store = open_store(db)
    info = store.rating_task(task_name)
    overview = task_overview(store, info)
    if json_output:
        print_json({**info.to_dict(), **asdict(overview)})
        return
    pairs = counted(overview.pairs, "pair")
    typer.echo(f"task {info.name} ({info.status}): {pairs} of {info.test_set}")
    for p in overview.progress:
        typer.echo(f"  {p.rater}: {p.graded} graded, {p.unsure} unsure, {p.assigned} on the list")
    for a in overview.agreement:
        kappa = "n/a" if a.kappa is None else f"{a.kappa:.3f}"
        alpha = "n/a" if a.alpha is None else f"{a.alpha:.3f}"
        typer.echo(
            f"  {a.rater_a} / {a.rater_b}: weighted kappa {kappa}, alpha {alpha}, "
            f"{counted(a.pairs, 'pair')}"
        )
    for j in overview.judge:
        kappa = "n/a" if j.kappa is None else f"{j.kappa:.3f}"
        pairs = counted(j.pairs, "pair")
        typer.echo(f"  judge {info.judge} / {j.rater}: weighted kappa {kappa}, {pairs}")
    if overview.disagreements:
        typer.echo(f"  {counted(overview.disagreements, 'pair')} graded differently")


@app.command("close")
def close(
    task_name: Annotated[str, typer.Argument(metavar="TASK", help="Rating task.")],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Close a task: its grades become a new version of its test set (each rater a source)."""
    from evalplat.metrics.numbers import counted
    from evalplat.rating.tasks import close_task

    outcome = close_task(open_store(db), task_name)
    info = outcome.version
    if json_output:
        print_json({**info.to_dict(), "created": outcome.created, "task": task_name})
        return
    judgments = counted(info.judgments, "judgment")
    typer.echo(f"closed {task_name}: {info.name}@{info.version}, {judgments}")
