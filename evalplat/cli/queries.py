"""``evalplat queries CONFIG --testset NAME``: the monthly read of a config's queries.

Per query over a window (``--since 30d``): mean, last value, slope, flips, zero-result rate,
unjudged share in the top k, weight and tags; then the weakest and strongest queries, the
content or judgment gaps, the unstable and never-answered queries, and the ranked *fix these*
and *judge these* lists (``--fix-csv`` / ``--judge-csv`` write them for annotators, in the
columns of ``evalplat unjudged``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import (
    DbOption,
    JsonOption,
    check_output_path,
    echo_err,
    open_store,
    print_json,
    writing,
)

if TYPE_CHECKING:
    from evalplat.comparison.query_health import QueryHealth

_TABLE_COLUMNS = [
    "query_id", "query", "weight", "tags", "runs", "mean", "last", "slope", "flips",
    "zero_result_rate", "unjudged_share", "best_config", "best_value", "gap",
]  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("queries")(queries_command)


def queries_command(
    config: Annotated[
        str,
        typer.Argument(
            help="Config: NAME reads the runs of every version in the window; NAME@VERSION "
            "those of that version alone (NAME@latest: the current version)."
        ),
    ],
    testset: Annotated[str, typer.Option("--testset", "-t", help="Test set name.")],
    since: Annotated[
        str, typer.Option("--since", help="Window: runs started in the last N h, d or w.")
    ] = "30d",
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to read (default: the first the latest run was scored with).",
            show_default=False,
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Top k for unjudged shares and pairs.")] = 10,
    floor: Annotated[
        float, typer.Option("--floor", help="A query no config scores above this is a gap.")
    ] = 0.0,
    good: Annotated[
        float, typer.Option("--good", help="A value at least this is good (flips count sides).")
    ] = 0.5,
    fix_csv: Annotated[
        Path | None,
        typer.Option("--fix-csv", help="Write the fix-these list as CSV.", show_default=False),
    ] = None,
    judge_csv: Annotated[
        Path | None,
        typer.Option("--judge-csv", help="Write the judge-these pairs as CSV.", show_default=False),
    ] = None,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print the per-query table as CSV.")
    ] = False,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help='Measure "fix these" against this target of the metric, e.g. "nDCG@10>=0.85" '
            "(default: the target the latest run was checked against, if any).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Query health over a window: weakest, unstable, never answered, what to fix and judge."""
    from evalplat.comparison.query_health import parse_since, query_health
    from evalplat.comparison.targets import parse_target
    from evalplat.inputs.validation import DEPTH_MAX, check_number

    for path, option in ((fix_csv, "--fix-csv"), (judge_csv, "--judge-csv")):
        if path is not None:
            check_output_path(path, option)
    check_number(k, "--k", minimum=1, maximum=DEPTH_MAX)
    check_number(floor, "--floor")
    check_number(good, "--good")
    window = parse_since(since)
    given = None if target is None else parse_target(target)
    store = open_store(db)
    inputs = store.query_health_inputs(
        config, testset, window, metric, k, window=since.strip(), target=given
    )
    health = query_health(inputs, floor=floor, good=good)
    for path, which, option in ((fix_csv, "fix", "--fix-csv"), (judge_csv, "judge", "--judge-csv")):
        if path is not None:
            with writing(path, option):
                path.write_text(health.annotation_csv(which), encoding="utf-8")
    if as_json:
        print_json(health.to_dict())
    elif as_csv:
        table = health.table[_TABLE_COLUMNS].copy()
        table["tags"] = [";".join(t) for t in table["tags"]]
        table.to_csv(sys.stdout, index=False)
    else:
        _print(health)


def _print(health: QueryHealth) -> None:
    from rich.table import Table

    from evalplat.cli.common import table_console

    console = table_console(highlight=False)
    console.print(
        f"{health.config} on {health.test_set}: {health.metric} over "
        f"{len(health.runs)} runs in the last {health.window}"
    )
    for note in health.notes:
        console.print(note)
    console.print(f"fix these: {health.fix_basis}")
    text = dict(zip(health.table["query_id"], health.table["query"], strict=True))
    for title, ids in (
        ("weakest", health.weakest[:10]),
        ("content or judgment gaps (no config scores above the floor)", health.gaps),
        ("unstable", health.unstable),
        ("never answered", health.never_answered),
    ):
        shown = ", ".join(f"{q} ({text.get(q, '')[:30]})" for q in ids[:10])
        more = f" and {len(ids) - 10} more" if len(ids) > 10 else ""
        console.print(f"{title}: {shown or 'none'}{more}")
    table = Table("fix these", "query", "gain to the mean", "reason")
    for row in health.fix.head(10).itertuples():
        table.add_row(str(row.query_id), str(row.query)[:40],
                      f"{row.contribution:+.4f}", str(row.reason))  # fmt: skip
    console.print(table)
    judge = Table("judge these", "doc", "rank", "impact", "reason")
    for row in health.judge.head(10).itertuples():
        judge.add_row(str(row.query_id), str(row.doc_id), str(row.rank),
                      f"{row.impact:.4f}", str(row.reason))  # fmt: skip
    console.print(judge)
    echo_err(f"{len(health.table)} queries; --json or --csv for every column")
