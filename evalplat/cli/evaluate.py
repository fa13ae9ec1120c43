"""``evalplat evaluate``: score a TREC run file against qrels, statelessly, like trec_eval.

The Typer declaration of the command; its body, and the parser that the entry point tries
before Typer, are in ``evalplat.cli.evaluate_direct``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalplat.cli.evaluate_direct import EvaluateOptions, OutputFormat
from evalplat.cli.evaluate_direct import run as run_evaluation
from evalplat.metrics.registry import DEFAULT_METRICS


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
    max_results: Annotated[
        int | None,
        typer.Option(
            "--max-results",
            "-M",
            min=1,
            help="Score only the first N results of each query, after ordering (trec_eval -M).",
        ),
    ] = None,
    strict_topics: Annotated[
        bool,
        typer.Option(
            "--strict-topics",
            help="Refuse a run whose query ids are not exactly the qrels' (ranx's default): "
            "exit 2 naming the first differing ids, instead of scoring a missing query 0 and "
            "ignoring a run-only one.",
        ),
    ] = False,
    zscores: Annotated[
        Path | None,
        typer.Option(
            "--zscores",
            "-Z",
            help="Print each value standardised, (value - mean) / stddev, by the means and "
            "standard deviations of a Z file of lines 'qid measure mean stddev' (trec_eval -Z); "
            "a topic or measure the file lacks gets -1000000.",
        ),
    ] = None,
) -> None:
    """Score a run against qrels (trec_eval -c semantics) and print the means.

    Ties in score are broken by doc id descending, as trec_eval does; the rank column is
    ignored. Invalid input exits with status 2 and names the file and line.
    """
    run_evaluation(
        EvaluateOptions(
            qrels=qrels,
            run=run,
            metrics=tuple(metric or ()),
            per_query=per_query,
            output=output,
            skip_missing=skip_missing,
            exclude_no_relevant=exclude_no_relevant,
            strict_topics=strict_topics,
            max_results=max_results,
            zscores=zscores,
        )
    )
