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
    """Build a demo project on the bundled Cranfield set and run one night of its nightly job.

    Three configurations of the builtin engine: production (Porter stemming) and two
    candidates compared with it, no stemming (a small drop) and the AND operator (a large
    one). Each call is the next night: 1 the candidates, 2 a change to production that hurts
    (a regression alert), 3 its rollback (the alert resolved). Prints the night's verdicts,
    the simulated A/B test's arms, the alerts still open and the report site. Exits 0: the
    regressions are what the demo is for.
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
                "night": outcome.night,
                "story": outcome.story,
                "report": None if outcome.report is None else str(outcome.report),
                "exit_code": nightly.exit_code,
                "comparisons": nightly.comparisons,
                "alerts": nightly.alerts,
                "open_alerts": outcome.open_alerts,
            }
        )
    else:
        from evalplat.cli.demo_summary import print_summary

        print_summary(outcome)
    if nightly.exit_code not in (0, 1):
        raise typer.Exit(nightly.exit_code)
