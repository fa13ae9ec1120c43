"""``evalplat alerts list | ack | resolve | deliver | test | channels``: alerts and their
channels."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import DbOption, JsonOption, echo_err, open_store, print_json

if TYPE_CHECKING:
    from evalplat.alerts import AlertMessage

app = typer.Typer(
    help="Regression alerts (open → acknowledged → resolved, or retired) and their channels.",
    no_args_is_help=True,
)

# How the metric column shows each alert kind.
KIND_LABELS = {
    "regression": "{}",
    "needs_judgments": "{} (needs judgments)",
    "operational": "run failed",
}
# Kinds that can be tried with an ad-hoc --url (the others need more than a URL).
URL_KINDS = ("webhook", "slack", "teams")


@app.command("list")
def list_alerts(
    state: Annotated[
        str | None,
        typer.Option(
            "--state",
            help="Only alerts in this state: pending, open, acknowledged, resolved, retired.",
        ),
    ] = None,
    config: Annotated[str | None, typer.Option("--config", help="Only this config's.")] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Alerts, newest first, with their state, and how many nights regressed for those whose
    gate has a confirmation rule."""
    alerts = open_store(db, read_only=True).list_alerts(state, config=config)
    if json_output:
        print_json([a.to_dict() for a in alerts])
        return
    if not alerts:
        echo_err("no alerts" + (f" in state {state}" if state else ""))
        return
    from rich.table import Table

    from evalplat.cli.common import table_console

    notes = any(a.note for a in alerts)
    # the confirmation rule as it stood ("regressed 2 nights of 3"), for an alert that has one
    rules = [str((a.details or {}).get("confirmation") or "").split(" (")[0] for a in alerts]
    columns = ["id", "state", "config", "test set", "metric", "baseline → candidate", "since"]
    table = Table(*columns, *(["confirmed"] if any(rules) else []), *(["note"] if notes else []))
    for a, rule in zip(alerts, rules, strict=True):
        details = a.details or {}
        left, right = details.get("baseline"), details.get("candidate")
        numbers = isinstance(left, int | float) and isinstance(right, int | float)
        change = f"{left:.4f} → {right:.4f}" if numbers else ""
        table.add_row(
            str(a.id),
            a.state,
            a.config if a.engine is None else f"engine {a.engine}",
            a.test_set,
            KIND_LABELS.get(a.kind, "{}").format(a.metric),
            change,
            a.opened_at.strftime("%Y-%m-%d %H:%M"),
            *([rule] if any(rules) else []),
            *([a.note or ""] if notes else []),
        )
    table_console().print(table)


@app.command("ack")
def ack(
    alert_id: Annotated[
        int,
        typer.Argument(help="Alert id (see `evalplat alerts list`).", min=1, max=2**31 - 1),
    ],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Acknowledge an open alert: someone is on it (its resolution is still announced)."""
    info = open_store(db).ack(alert_id)
    if json_output:
        print_json(info.to_dict())
        return
    typer.echo(f"alert {info.id} ({info.metric} of {info.config} on {info.test_set}): {info.state}")


@app.command("resolve")
def resolve(
    alert_id: Annotated[
        int,
        typer.Argument(help="Alert id (see `evalplat alerts list`).", min=1, max=2**31 - 1),
    ],
    note: Annotated[
        str, typer.Option("--note", help="Why it is resolved (stored, shown and announced).")
    ],
    project: Annotated[
        Path | None,
        typer.Option("--project", help="Project file (default: ./evalplat.toml)."),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Close an open or acknowledged alert by hand, with a note saying why.

    The event "resolved" is queued for the project file's channels and sent by the next
    `nightly` or `alerts deliver`. A regression still there the next night opens a new alert.
    Exit 2 for a pending, resolved or retired alert, or an unknown id.
    """
    from evalplat.alerts import channels_from_tables
    from evalplat.metrics.numbers import counted
    from evalplat.nightly.project import load_project
    from evalplat.store import Store

    loaded = load_project(project)
    names = [channel.name for channel in channels_from_tables(loaded.alerts)]
    store = Store.open(db, project_file=loaded.path)
    try:
        event = store.resolve(alert_id, note, names)
    finally:
        store.close()
    info = event.alert
    if json_output:
        print_json(info.to_dict())
        return
    told = (
        f"the next `nightly` or `alerts deliver` announces it to {counted(len(names), 'channel')}"
        if names
        else "the project file names no alert channel to announce it to"
    )
    subject = KIND_LABELS.get(info.kind, "{}").format(info.metric)
    typer.echo(f"alert {info.id} ({subject} of {info.config} on {info.test_set}): resolved; {told}")


@app.command("deliver")
def deliver_pending(
    project: Annotated[
        Path | None,
        typer.Option("--project", help="Project file (default: ./evalplat.toml)."),
    ] = None,
    attempts: Annotated[
        int, typer.Option("--attempts", min=1, help="Attempts per channel before giving up.")
    ] = 3,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Deliver the alerts still waiting in the outbox; exit 3 when some still wait.

    A night delivers its own alerts; this retries those a night could not deliver (a channel
    down, a killed process), through the project file's channels, one message per channel.
    Exit 0: everything was delivered, or nothing waited, or what waits is being delivered by
    another deliverer (a night, another `alerts deliver`: each batch is claimed before it is
    sent, so none goes out twice); 2: invalid project file; 3: a channel of the project file did
    not accept its message (it stays in the outbox for the next night or the next try). Events
    waiting for a channel the file no longer names are reported on stderr and wait for it to come
    back; they do not fail the command.
    """
    from evalplat.alerts import DeliveryPolicy, channels_from_tables
    from evalplat.metrics.numbers import counted
    from evalplat.nightly.delivery import ReportLinks, deliver_outbox, undelivered
    from evalplat.nightly.project import load_project
    from evalplat.store import Store

    loaded = load_project(project)
    channels = channels_from_tables(loaded.alerts)
    store = Store.open(db, project_file=loaded.path)
    try:
        outcomes = deliver_outbox(
            store,
            channels,
            links=ReportLinks(loaded.reports_dir, loaded.reports_base_url),
            policy=DeliveryPolicy(attempts=attempts),
        )
    finally:
        store.close()
    if json_output:
        print_json([o.to_dict() for o in outcomes])
    elif not outcomes:
        typer.echo("nothing to deliver: the outbox is empty")
    for o in outcomes:
        if o.ok and not json_output:
            typer.echo(
                f"sent {counted(len(o.events), 'alert event')} to {o.channel} "
                f"({counted(o.attempts, 'attempt')})"
            )
        elif o.status == "claimed" and not json_output:
            events = counted(len(o.events), "alert event")
            typer.echo(f"skipped {events} for {o.channel}: {o.error}")
        elif not o.ok and o.status != "claimed":
            waiting = counted(len(o.events), "alert event")
            echo_err(f"error: {o.channel}: {o.error} ({waiting} still waiting)")
    if undelivered(outcomes):
        raise typer.Exit(3)


@app.command("test")
def test(
    channel: Annotated[
        str | None,
        typer.Argument(
            help="Channel name or type from the project file's alerts tables; with --url, the "
            "type to post as (webhook, slack or teams; default webhook).",
            show_default=False,
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option("--url", help="Send to this URL instead of a channel of the project file."),
    ] = None,
    project: Annotated[
        Path | None,
        typer.Option("--project", help="Project file (default: ./evalplat.toml)."),
    ] = None,
    attempts: Annotated[
        int, typer.Option("--attempts", min=1, help="Delivery attempts before giving up.")
    ] = 3,
    json_output: JsonOption = False,
) -> None:
    """Send a sample alert through one channel; exit 3 when it could not be delivered."""
    from evalplat.alerts import DeliveryPolicy, build_channel, channels_from_tables, find_channel
    from evalplat.errors import InputError
    from evalplat.metrics.numbers import counted
    from evalplat.nightly.project import load_project

    if url is not None:
        kind = channel or "webhook"
        if kind not in URL_KINDS:
            raise InputError(f"--url works with {', '.join(URL_KINDS)}, not '{kind}'")
        target = build_channel({"type": kind, "url": url})
    elif channel is None:
        raise InputError("name a channel from the project file's [[alerts]] tables, or give --url")
    else:
        target = find_channel(channels_from_tables(load_project(project).alerts), channel)
    from evalplat.alerts import deliver

    result = deliver(target, sample_message(), DeliveryPolicy(attempts=attempts))
    if json_output:
        print_json(result.to_dict())
    elif result.ok:
        typer.echo(f"sent a test alert to {result.channel} ({counted(result.attempts, 'attempt')})")
    if not result.ok:
        echo_err(
            f"error: could not deliver to {result.channel} after "
            f"{counted(result.attempts, 'attempt')}: {result.error}"
        )
        raise typer.Exit(3)


@app.command("channels")
def channels(json_output: JsonOption = False) -> None:
    """The alert channel types and their parameters (for the alerts tables of evalplat.toml)."""
    from evalplat.alerts import CHANNEL_KINDS

    if json_output:
        print_json(
            [
                {
                    "type": kind.name,
                    "description": kind.description,
                    "params": [
                        {
                            "name": p.name,
                            "required": p.required,
                            "default": p.default,
                            "choices": list(p.choices) if p.choices else None,
                            "help": p.help,
                        }
                        for p in kind.params
                    ],
                }
                for kind in CHANNEL_KINDS.values()
            ]
        )
        return
    for kind in CHANNEL_KINDS.values():
        typer.echo(f"{kind.name}: {kind.description}")
        for p in kind.params:
            note = " (required)" if p.required else ""
            if p.default is not None:
                note = f" (default {p.default!r})"
            typer.echo(f"  {p.name}{note}: {p.help}")


def sample_message() -> AlertMessage:
    """A made-up regression, clearly labelled as a test, showing every field a channel renders."""
    from evalplat.alerts import AlertMessage, QueryMove

    return AlertMessage(
        event="test",
        config="example-config",
        test_set="example-testset",
        metric="nDCG@10",
        baseline=0.4120,
        candidate=0.3870,
        delta=-0.0250,
        relative_delta=-0.0250 / 0.4120,
        p_value=0.0031,
        test="randomization",
        worst_queries=(
            QueryMove("q12", "boundary layer transition", 0.8000, 0.2000),
            QueryMove("q7", "heat transfer in slip flow", 0.6500, 0.3100),
        ),
    )
