"""``evalplat runs list | show | export``: the stored runs, newest first; one run with its counts,
means, latency and target verdicts; a run written back out as a TREC run file.

A run whose process died is shown as interrupted (``evalplat.store.run_rows.observe_liveness``);
a rescored run's figures name the judgment version they were scored on.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalplat.cli.common import (
    RUN_REF,
    DbOption,
    JsonOption,
    check_output_path,
    echo_err,
    open_store,
    print_json,
    run_ref_note,
    writing,
)
from evalplat.cli.target_views import TargetOption
from evalplat.metrics.numbers import value_text
from evalplat.metrics.run_health import zero_results

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.store.runs import RunInfo

app = typer.Typer(
    help="Stored runs: list them, show one, export one as a TREC run file.", no_args_is_help=True
)


@app.command("list")
def list_command(
    config: Annotated[
        str | None, typer.Argument(help="Only runs of this config.", show_default=False)
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Runs, newest first; a run whose process died shows as interrupted."""
    runs = open_store(db, read_only=True).list_runs(config)
    if json_output:
        print_json([r.to_dict() for r in runs])
        return
    if not runs:
        echo_err("no runs yet: start one with `evalplat run CONFIG --testset NAME`")
        return
    from rich.table import Table

    from evalplat.cli.common import table_console

    # what the figures were scored on (``evalplat.store.run_figures``): a rescored run's
    # version beside its figure, the grades under the table
    grades = sorted({r.grades for r in runs if r.grades and "nDCG@10" in r.means})
    table = Table("id", "status", "config", "test set", "size", "failed", "started", "nDCG@10",
                  caption=f"nDCG@10 on {' or '.join(grades)}" if grades else None)  # fmt: skip
    for r in runs:
        ndcg = r.means.get("nDCG@10")
        table.add_row(
            str(r.id),
            r.status,
            f"{r.config}@{r.config_version}",
            f"{r.test_set}@{r.test_set_version}" if r.online is None else f"{r.test_set} {r.day}",
            r.size_text(),
            "" if r.online is not None else str(r.queries_failed),
            f"{r.started_at:%Y-%m-%d %H:%M}",
            "" if ndcg is None else f"{ndcg:.4f}{scored_on_note(r, ' on v{}')}",
        )
    table_console().print(table)


@app.command("show")
def show_command(
    run: Annotated[str, typer.Argument(help=f"Run: {RUN_REF}.")],
    target: TargetOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """One run: status, counts, means, latency, target verdicts and its failed queries."""
    from evalplat.cli.target_views import parse_targets, print_targets

    targets = parse_targets(target)
    store = open_store(db, read_only=True)
    info = store.run_info(run)
    details = _details(store, info)
    # the verdicts kept by the nightly job, and those of the targets given here (which win)
    checked = {
        (v.target.metric, v.target.segment): v
        for v in store.target_verdicts([info.id]).get(info.id, [])
    }
    checked.update(
        ((v.target.metric, v.target.segment), v) for v in store.check_targets(info.id, targets)
    )
    details["targets"] = [v.to_dict() for v in checked.values()]
    if json_output:
        print_json(details)
        return
    for key in ("id", "status", "config", "config_version", "test_set", "test_set_version",
                "trigger", "depth", "started_at", "finished_at", "error"):  # fmt: skip
        if details[key] is not None:
            typer.echo(f"{key:<18} {details[key]}")
    span = info.online
    if span is None:
        typer.echo(f"{'queries':<18} {info.queries_done}/{info.queries_total} done, "
                   f"{info.queries_failed} failed")  # fmt: skip
    else:
        typer.echo(f"{'window':<18} {info.day}")
        for key in ("sessions", "searches", "events"):
            typer.echo(f"{key:<18} {info.queries_total if key == 'sessions' else span.get(key)}")
    zero = zero_results(store.run_outcomes(info.id))
    if zero.rate is not None:
        typer.echo(f"{'zero results':<18} {zero.rate:.1%} ({zero.empty} of {zero.answered} "
                   "queries)")  # fmt: skip
    latency = details.get("latency_ms")
    if latency:
        typer.echo(f"{'latency ms':<18} p50 {latency['p50']:.1f}  p95 {latency['p95']:.1f}  "
                   f"p99 {latency['p99']:.1f}")  # fmt: skip
    if info.means and info.scored_on:
        typer.echo(f"{'scored on':<18} {info.scored_on}{scored_on_note(info, ' (rescored)')}")
    for name, value in info.means.items():
        typer.echo(f"{name:<18} {value_text(value, name)}")
    print_targets(list(checked.values()))
    for failure in details.get("failed_queries", [])[:20]:
        typer.echo(f"failed {failure['query_id']}: {failure['error']}")
    warning = zero.warning()
    if warning:
        echo_err(f"warning: run {info.id}: {warning}")


@app.command("export")
def export_command(
    run: Annotated[str, typer.Argument(help=f"Run: {RUN_REF}.")],
    format: Annotated[
        str, typer.Option("--format", help="File format: trec (qid Q0 docid rank score tag).")
    ] = "trec",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write here (default: standard output).", show_default=False
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Write a stored run's ranked results as a TREC run file, in the stored order.

    import-run and evaluate read it back to the same scores. A query whose stored scores would
    not reproduce the stored order under trec_eval's ordering (score descending, ties by doc
    id descending) is written with scores from its ranks; stderr says how many.
    """
    from evalplat.errors import InputError
    from evalplat.formats.run_export import write_trec_run
    from evalplat.metrics.numbers import counted

    if format != "trec":
        raise InputError(f"--format must be trec, got {format!r}")
    if out is not None:
        check_output_path(out, "--out")
    store = open_store(db)
    info = store.run_info(run)
    results = store.load_results(info.id)
    tag = f"{info.config}@{info.config_version}"
    if out is None:
        written = write_trec_run(results, sys.stdout, tag)
    else:
        # written beside the target and renamed: a refused run leaves no half file behind
        partial = out.with_name(out.name + ".partial")
        try:
            with writing(out, "--out"):
                with open(partial, "w", encoding="utf-8", newline="\n") as handle:
                    written = write_trec_run(results, handle, tag)
                partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
    note = (
        f"; {written.rescored} with scores from ranks, to keep the stored order"
        if written.rescored
        else ""
    )
    named = run_ref_note(run)
    echo_err(
        f"run {info.id}{named}: {counted(written.lines, 'result')} of "
        f"{counted(written.queries, 'query')}{note}"
    )


def _details(store: Store, info: RunInfo) -> dict[str, Any]:
    if info.online is not None:  # sessions from a log: no searches sent, nothing failed
        return info.to_dict()
    outcomes = store.run_outcomes(info.id)
    ok = outcomes[outcomes["status"] == "ok"]
    latency = ok["latency_ms"].dropna().astype(float)
    data = info.to_dict()
    data["latency_ms"] = (
        {f"p{p}": float(latency.quantile(p / 100)) for p in (50, 95, 99)} if len(latency) else None
    )
    zero = zero_results(outcomes)
    data["zero_result_rate"] = zero.rate
    data["zero_results"] = zero.empty
    data["mostly_empty"] = zero.mostly_empty
    data["failed_queries"] = store.run_failures(info.id)
    return data


def scored_on_note(info: RunInfo, form: str) -> str:
    """``form`` filled with the judgment version the run's figures were scored on, when that is
    not the version it was searched on (a ``rescore`` since); else empty. A figure printed
    beside ``small@1`` names its ``v2`` rather than pass for the first version's."""
    scored = info.scored_against_version
    if info.online is not None or scored is None or scored == info.test_set_version:
        return ""
    return form.format(scored)
