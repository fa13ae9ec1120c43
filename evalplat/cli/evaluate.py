"""``evalplat evaluate``: score a TREC run file against qrels, statelessly, like trec_eval."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import echo_err, print_json
from evalplat.metrics.registry import DEFAULT_METRICS

if TYPE_CHECKING:
    from evalplat.metrics.evaluation import Evaluation


class OutputFormat(StrEnum):
    """How ``evaluate`` prints its result."""

    table = "table"
    json = "json"
    csv = "csv"
    trec = "trec"


def register(app: typer.Typer) -> None:
    """Add the top-level ``evaluate`` command to ``app``."""
    app.command("evaluate")(evaluate_command)


def evaluate_command(
    qrels: Annotated[Path, typer.Option("--qrels", help="TREC qrels file: qid iter docid grade.")],
    run: Annotated[
        Path, typer.Option("--run", help="TREC run file: qid Q0 docid rank score runid.")
    ],
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric name, repeatable, e.g. nDCG@10, P(rel=2)@5, AP "
            f"(default: {', '.join(DEFAULT_METRICS)}). See `evalplat metrics list`.",
            show_default=False,
        ),
    ] = None,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also print the value of every query.")
    ] = False,
    output: Annotated[
        OutputFormat,
        typer.Option("--format", help="table, json, csv, or trec (trec_eval's own layout)."),
    ] = OutputFormat.table,
    skip_missing: Annotated[
        bool,
        typer.Option(
            "--skip-missing",
            help="Average only over queries present in the run (trec_eval 9 without -c); "
            "by default every qrels query counts and a missing one scores 0 (trec_eval -c).",
        ),
    ] = False,
    exclude_no_relevant: Annotated[
        bool,
        typer.Option("--exclude-no-relevant", help="Leave out queries with no relevant judgment."),
    ] = False,
) -> None:
    """Score a run against qrels (trec_eval -c semantics) and print the means.

    Ties in score are broken by doc id descending, as trec_eval does; the rank column is
    ignored. Invalid input exits with status 2 and names the file and line.
    """
    from evalplat.metrics.evaluation import evaluate

    result = evaluate(
        qrels,
        run,
        metric or None,
        missing="skip" if skip_missing else "zero",
        exclude_no_relevant=exclude_no_relevant,
    )
    for warning in result.warnings:
        echo_err(f"warning: {warning}")
    if output is OutputFormat.json:
        print_json(_as_json(result, per_query))
    elif output is OutputFormat.csv:
        _print_csv(result, per_query)
    elif output is OutputFormat.trec:
        typer.echo(format_trec(result, per_query), nl=False)
    else:
        typer.echo(_format_table(result, per_query), nl=False)


def _as_json(result: Evaluation, per_query: bool) -> dict[str, object]:
    data: dict[str, object] = {
        "metrics": [str(m) for m in result.metrics],
        "means": result.means,
        "queries": len(result.query_ids),
        "options": result.options,
        "warnings": result.warnings,
    }
    if per_query:
        data["per_query"] = result.per_query.to_dict(orient="records")
    return data


def _print_csv(result: Evaluation, per_query: bool) -> None:
    import sys

    frame = result.to_frame() if per_query else result.to_frame().query("query_id == 'all'")
    frame.to_csv(sys.stdout, index=False, lineterminator="\n")


def format_trec(result: Evaluation, per_query: bool) -> str:
    """trec_eval's layout: ``%-22s\\t%s\\t%6.4f`` with trec_eval's measure names where they exist;
    per-query blocks (not num_q) then the ``all`` block."""
    names = [(str(m), m.trec_name or str(m), m.aggregate == "sum") for m in result.metrics]
    lines: list[str] = []

    def line(label: str, query_id: str, value: float, integer: bool) -> None:
        text = f"{round(value)}" if integer else f"{value:6.4f}"
        lines.append(f"{label:<22}\t{query_id}\t{text}")

    if per_query:
        for index, query_id in enumerate(result.query_ids):
            for key, label, integer in names:
                if label != "num_q":
                    line(label, query_id, float(result.values[key][index]), integer)
    for key, label, integer in names:
        line(label, "all", result.means[key], integer)
    return "\n".join(lines) + "\n"


def _format_table(result: Evaluation, per_query: bool) -> str:
    names = [str(m) for m in result.metrics]
    width = max(len(n) for n in [*names, "metric"])
    rows = [f"{'metric':<{width}}  {'mean':>10}"]
    for name in names:
        value = result.means[name]
        shown = f"{value:10.0f}" if value.is_integer() and value > 1 else f"{value:10.4f}"
        rows.append(f"{name:<{width}}  {shown}")
    text = "\n".join(rows) + "\n"
    if per_query:
        frame = result.per_query.pivot(index="query_id", columns="metric", values="value")
        text += "\n" + frame[names].round(4).to_string() + "\n"
    return text
