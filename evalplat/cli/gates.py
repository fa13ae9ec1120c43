"""``evalplat gates backtest``: a project file's gates replayed over the stored nights."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import DbOption, JsonOption, echo_err, open_store, print_json

if TYPE_CHECKING:
    from evalplat.nightly.backtest import GateReplay, Suggestion

app = typer.Typer(help="Gates: what they would have done on the stored nights.",
                  no_args_is_help=True)  # fmt: skip


@app.command("backtest")
def backtest(
    project: Annotated[
        Path | None,
        typer.Option(
            "--project",
            "-p",
            help="Project file whose gates to replay, the one the nights read or a proposed "
            "one (default: ./evalplat.toml).",
        ),
    ] = None,
    config: Annotated[
        list[str] | None, typer.Option("--config", help="Only this config (repeatable).")
    ] = None,
    suggest: Annotated[
        bool,
        typer.Option(
            "--suggest",
            help="Also propose, per gate, the smallest threshold that keeps the false alarms "
            "under --target, and replay with it.",
        ),
    ] = False,
    target: Annotated[
        float,
        typer.Option("--target", help="The false-alarm rate --suggest keeps under (0 to 1)."),
    ] = 0.0,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Replay the project's gates over the nights the store holds: per config, test set and
    gate, the alerts they would have opened and resolved, how many lasted more than a night,
    and the false alarms (regressions called on nights whose candidate was a run of the
    baseline's own config version), with their rate's exact 95 % interval.

    Each night's comparison is made again as the night made it, with the project's gates;
    nothing is searched and nothing is written. Exit 0; 2 for an invalid project file or option.
    """
    from evalplat.errors import InputError
    from evalplat.inputs.validation import check_number
    from evalplat.nightly import backtest as replaying
    from evalplat.nightly.project import load_project

    check_number(target, "--target", minimum=0, maximum=1)
    if target and not suggest:
        raise InputError("--target is read with --suggest only")
    loaded = load_project(project)
    configs = tuple(config or ())
    known = {spec.name for spec in loaded.configs}
    unknown = [name for name in configs if name not in known]
    if unknown:
        raise InputError(f"--config {unknown[0]}: no such config in {loaded.path.name}")
    store = open_store(db, project_file=loaded.path, read_only=True)
    if suggest:
        found = replaying.suggest(store, loaded, target, configs)
        if json_output:
            print_json([s.to_dict() for s in found])
            return
        _print_suggestions(found, target)
        return
    replays = replaying.backtest(store, loaded, configs)
    if json_output:
        print_json([r.to_dict() for r in replays])
        return
    _print_replays(replays)


def _print_replays(replays: list[GateReplay]) -> None:
    from rich.table import Table

    from evalplat.cli.common import table_console

    if not replays:
        echo_err("no gated night to replay: run `evalplat nightly` first")
        return
    table = Table("config", "test set", "gate", "nights", "regressed", "alerts", "lasted",
                  "false alarms")  # fmt: skip
    for r in replays:
        table.add_row(r.config, r.test_set, r.gate, str(r.nights), str(r.regressed),
                      _alerts_text(r), str(r.persisted), _false_text(r))  # fmt: skip
    table_console().print(table)
    for r in replays:
        for note in r.skipped:
            echo_err(f"{r.config} on {r.test_set}, {r.gate}: skipped {note}")


def _print_suggestions(found: list[Suggestion], target: float) -> None:
    from rich.table import Table

    from evalplat.cli.common import table_console

    if not found:
        echo_err("no gated night to replay: run `evalplat nightly` first")
        return
    table = Table("config", "test set", "gate", "threshold", "false alarms", "alerts",
                  f"false alarms ≤ {target:g}", "alerts then")  # fmt: skip
    for s in found:
        moved = f"{s.key} {_stated(s)} → {s.value:g}"
        table.add_row(s.before.config, s.before.test_set, s.before.gate, moved,
                      _false_text(s.before), _alerts_text(s.before),
                      _false_text(s.after), _alerts_text(s.after))  # fmt: skip
    table_console().print(table)


def _stated(found: Suggestion) -> str:
    value = found.before.threshold.get(found.key)
    return "none" if value is None else f"{value:g}"


def _alerts_text(replay: GateReplay) -> str:
    """``1 regression (open), 1 needs judgments``: the alerts of each kind, and how many of
    them were still open on the last night."""
    parts = []
    for kind, label in (("regression", "regression"), ("needs_judgments", "needs judgments")):
        alerts = [alert for alert in replay.alerts if alert.kind == kind]
        if not alerts:
            continue
        still = sum(alert.resolved_at is None for alert in alerts)
        shown = f"{len(alerts)} {label}" + ("s" if len(alerts) > 1 and kind == "regression" else "")
        parts.append(
            shown + ("" if not still else " (open)" if len(alerts) == 1 else f" ({still} open)")
        )
    return ", ".join(parts) or "none"


def _false_text(replay: GateReplay) -> str:
    alarms = replay.false_alarms
    if alarms.rate is None or alarms.low is None or alarms.high is None:
        return "no A/A night"
    return (f"{alarms.alarms} of {alarms.nights} "
            f"({alarms.rate:.0%}, {alarms.low:.0%} to {alarms.high:.0%})")  # fmt: skip
