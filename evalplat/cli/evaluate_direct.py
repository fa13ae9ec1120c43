"""``evalplat evaluate`` without Typer: the command's body, and a parser for its plain command
lines that the entry point tries first.

``evaluate`` is the command a script or a CI job runs on a file, many times, and Typer's parse
of a command line imports pydantic and Rich, a large share of a whole evaluation's time (see
docs/performance.md, "`evaluate` without Typer"). :func:`parse` reads the command lines that
need no help and no error message: the command's own options, each once (``--metric``
repeated), as ``--name value``, ``--name=value`` or ``-m value``/``-mvalue``. Anything else
(``--help``, an unknown or repeated option, a missing ``--qrels``, a value that starts with
``-``) returns ``None`` and the command line goes to Typer, whose messages and exit codes stay
the only ones a user sees.
:func:`run` is the body both parsers call; ``evalplat.cli.evaluate`` declares the Typer command.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.errors import EvalplatError

if TYPE_CHECKING:
    from evalplat.metrics.evaluation import Evaluation


class OutputFormat(StrEnum):
    """How ``evaluate`` prints its result."""

    table = "table"
    json = "json"
    csv = "csv"
    trec = "trec"


@dataclass(frozen=True)
class EvaluateOptions:
    """One ``evaluate`` command line, as both parsers read it."""

    qrels: Path
    run: Path
    metrics: tuple[str, ...] = ()
    per_query: bool = False
    output: OutputFormat = OutputFormat.table
    skip_missing: bool = False
    exclude_no_relevant: bool = False
    strict_topics: bool = False
    max_results: int | None = None
    zscores: Path | None = None


_VALUED = {
    "--qrels": "qrels",
    "--run": "run",
    "--format": "output",
    "--metric": "metric",
    "--max-results": "max_results",
    "--zscores": "zscores",
}
_FLAGS = {
    "--per-query": "per_query",
    "-q": "per_query",
    "--skip-missing": "skip_missing",
    "--exclude-no-relevant": "exclude_no_relevant",
    "--strict-topics": "strict_topics",
}


def parse(args: Sequence[str]) -> EvaluateOptions | None:
    """The options of ``evalplat evaluate ARGS``, or ``None`` when Typer must read them."""
    values: dict[str, str] = {}
    metrics: list[str] = []
    flags: set[str] = set()
    pending = list(args)
    while pending:
        token = pending.pop(0)
        if token in _FLAGS and _FLAGS[token] not in flags:
            flags.add(_FLAGS[token])
            continue
        name, value = _split_valued(token, pending)
        if name is None or value is None or value == "" or value.startswith("-"):
            return None
        if name == "metric":
            metrics.append(value)
        elif name in values:
            return None
        else:
            values[name] = value
    if "qrels" not in values or "run" not in values:
        return None
    output = values.get("output", OutputFormat.table.value)
    if output not in OutputFormat.__members__:
        return None
    max_results = values.get("max_results")
    if max_results is not None and not (max_results.isascii() and max_results.isdigit()):
        return None
    return EvaluateOptions(
        qrels=Path(values["qrels"]),
        run=Path(values["run"]),
        metrics=tuple(metrics),
        per_query="per_query" in flags,
        output=OutputFormat(output),
        skip_missing="skip_missing" in flags,
        exclude_no_relevant="exclude_no_relevant" in flags,
        strict_topics="strict_topics" in flags,
        max_results=None if max_results is None else int(max_results),
        zscores=Path(values["zscores"]) if "zscores" in values else None,
    )


def _split_valued(token: str, pending: list[str]) -> tuple[str | None, str | None]:
    """(option, value) of a valued option written ``--name value``, ``--name=value``,
    ``-m value`` or ``-mvalue``, taking the value from ``pending`` when it is the next token."""
    if token.startswith("--"):
        option, sep, value = token.partition("=")
        if option not in _VALUED:
            return None, None
        if sep:
            return _VALUED[option], value
    elif token == "-m":
        option = "--metric"
    elif token.startswith("-m"):
        return "metric", token[2:]
    elif token == "-M":
        option = "--max-results"
    elif token.startswith("-M"):
        return "max_results", token[2:]
    elif token == "-Z":
        option = "--zscores"
    elif token.startswith("-Z"):
        return "zscores", token[2:]
    else:
        return None, None
    return _VALUED[option], pending.pop(0) if pending else None


def main(args: Sequence[str]) -> int | None:
    """Run ``evalplat evaluate ARGS`` and return its exit code, or ``None`` without doing
    anything when :func:`parse` leaves the command line to Typer. Errors end as the Typer
    command's do: ``error: message`` on stderr and the error's exit code."""
    options = parse(args)
    if options is None:
        return None
    try:
        run(options)
    except EvalplatError as error:
        sys.stderr.write(f"error: {error}\n")
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    return 0


def run(options: EvaluateOptions) -> None:
    """Score the run against the qrels and print the result in the chosen format."""
    from evalplat.metrics.evaluation import evaluate
    from evalplat.metrics.zscores import read_zscores

    zscores = None if options.zscores is None else read_zscores(options.zscores)
    result = evaluate(
        options.qrels,
        options.run,
        list(options.metrics) or None,
        missing="skip" if options.skip_missing else "zero",
        exclude_no_relevant=options.exclude_no_relevant,
        strict_topics=options.strict_topics,
        max_results=options.max_results,
        zscores=zscores,
    )
    for warning in result.warnings:
        sys.stderr.write(f"warning: {warning}\n")
    if options.output is OutputFormat.json:
        data = _as_json(result, options.per_query)
        sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")
    elif options.output is OutputFormat.csv:
        _print_csv(result, options.per_query)
    elif options.output is OutputFormat.trec:
        sys.stdout.write(format_trec(result, options.per_query))
    else:
        sys.stdout.write(_format_table(result, options.per_query))
    sys.stdout.flush()


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
    frame = result.to_frame() if per_query else result.to_frame().query("query_id == 'all'")
    frame.to_csv(sys.stdout, index=False, lineterminator="\n")


def format_trec(result: Evaluation, per_query: bool) -> str:
    """trec_eval's layout: ``%-22s\\t%s\\t%6.4f`` with trec_eval's measure names where they exist;
    per-query blocks (not num_q, nor the geometric means, which trec_eval shows only over all
    topics) then the ``all`` block. Standardised values (``-Z``) are printed as trec_eval
    prints them: the name after a ``Z``, every value with four decimals."""
    standard = "zscores" in result.options
    names = [
        (str(m), m.trec_name or str(m), m.aggregate == "sum" and not standard, m.aggregate)
        for m in result.metrics
    ]
    lines: list[str] = []

    def line(label: str, query_id: str, value: float, integer: bool) -> None:
        text = f"{round(value)}" if integer else f"{value:6.4f}"
        lines.append(f"{'Z' if standard else ''}{label:<22}\t{query_id}\t{text}")

    if per_query:
        for index, query_id in enumerate(result.query_ids):
            for key, label, integer, how in names:
                if label != "num_q" and how != "geomean":
                    line(label, query_id, float(result.values[key][index]), integer)
    for key, label, integer, _ in names:
        line(label, "all", result.means[key], integer)
    return "\n".join(lines) + "\n"


def _format_table(result: Evaluation, per_query: bool) -> str:
    names = [str(m) for m in result.metrics]
    width = max(len(n) for n in [*names, "metric"])
    heading = "z-score" if "zscores" in result.options else "mean"
    rows = [f"{'metric':<{width}}  {heading:>10}"]
    for name in names:
        value = result.means[name]
        whole = value.is_integer() and value > 1 and heading == "mean"
        shown = f"{value:10.0f}" if whole else f"{value:10.4f}"
        rows.append(f"{name:<{width}}  {shown}")
    text = "\n".join(rows) + "\n"
    if per_query:
        frame = result.per_query.pivot(index="query_id", columns="metric", values="value")
        text += "\n" + frame[names].round(4).to_string() + "\n"
    return text
