"""``evalplat demo``: see a real regression report in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalplat.cli.common import JsonOption, check_output_folder, print_json


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    folder: Annotated[
        Path,
        typer.Option("--dir", help="Folder for the demo project (created if missing)."),
    ] = Path("evalplat-demo"),
    json_output: JsonOption = False,
) -> None:
    """Build a demo project on the bundled Cranfield set and run the nightly pipeline on it.

    Three configurations of the builtin engine are compared with production (Porter stemming):
    no stemming (a small drop) and the AND operator (a large one). Prints the verdicts and the
    report site. Exits 0: the regressions are what the demo is for. Run it again for a second
    night (unchanged results: no new alerts).
    """
    from evalplat.demo.build import run_demo

    check_output_folder(folder, "--dir")
    typer.echo(
        f"building the demo in {folder} (Cranfield: 225 queries, 1400 documents) ...", err=True
    )
    outcome = run_demo(folder)
    nightly = outcome.nightly
    if json_output:
        print_json(
            {
                "folder": str(outcome.folder),
                "created": outcome.created,
                "report": None if outcome.report is None else str(outcome.report),
                "exit_code": nightly.exit_code,
                "comparisons": nightly.comparisons,
                "alerts": nightly.alerts,
            }
        )
    else:
        _print_summary(outcome.folder, nightly)
    if nightly.exit_code not in (0, 1):
        raise typer.Exit(nightly.exit_code)


def _print_summary(folder: Path, nightly: object) -> None:
    from rich.table import Table

    from evalplat.cli.common import table_console
    from evalplat.nightly.job import NightlyOutcome

    if not isinstance(nightly, NightlyOutcome):
        return
    console = table_console()
    table = Table(
        "config", "metric", "prod", "cand.", "delta", "p", "verdict",
        title="Candidates vs production (bm25-porter); p: Holm-corrected",
    )  # fmt: skip
    for comparison in nightly.comparisons:
        for metric in comparison["metrics"]:
            if not metric["gated"]:
                continue
            p = metric["p_corrected"]
            table.add_row(
                comparison["config"],
                metric["metric"],
                f"{metric['baseline']:.4f}",
                f"{metric['candidate']:.4f}",
                f"{metric['delta']:+.4f}",
                "-" if p is None else f"{p:.4f}",
                _verdict(metric["verdict"]),
            )
    console.print(table)
    for alert in nightly.alerts:
        console.print(
            f"alert {alert['event']} ({alert.get('kind', 'regression').replace('_', ' ')}): "
            f"{alert['config']} {alert['metric']} "
            f"(written to {folder / 'alerts.jsonl'})"
        )
    if nightly.report is not None:
        console.print(f"\nreport: {nightly.report}")
    console.print(
        f"project: {folder / 'evalplat.toml'}  "
        f"(next night: evalplat nightly --project {folder / 'evalplat.toml'})"
    )


def _verdict(verdict: str) -> str:
    marks = {
        "regression": "▼ regression",
        "improvement": "▲ improvement",
        "unchanged": "= unchanged",
        "needs_judgments": "? needs judgments",
    }
    return marks.get(verdict, verdict)
