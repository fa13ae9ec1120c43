"""``evalplat online agreement | compare | preference``: does offline predict online, across
config versions; one A/B pair on one day; one interleaved experiment per day."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalplat.cli.common import (
    DbOption,
    JsonOption,
    check_output_path,
    open_store,
    print_json,
    writing,
)
from evalplat.comparison.agreement import DEFAULT_PERMUTATIONS

app = typer.Typer(
    help="Online against offline: how offline metrics agree with online KPIs.",
    no_args_is_help=True,
)


AgreementProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="Project file whose [online] agreement pairs are shown (default: ./evalplat.toml "
        "when there is one).",
    ),
]


def project_pairs(
    project: Path | None,
) -> tuple[tuple[tuple[str, str], ...] | None, str | None]:
    """The (offline metric, KPI) pairs of the project file (``--project``, else
    ./evalplat.toml when present) and its control arm (``[online] baseline``, which the A/B
    pairs' deltas are taken against); None, None without a project or an ``[online]`` table."""
    from evalplat.nightly.project import PROJECT_FILE, load_project
    from evalplat.nightly.project_online import agreement_pairs

    if project is None and not Path(PROJECT_FILE).is_file():
        return None, None
    loaded = load_project(project)
    control = None if loaded.online is None else loaded.online.baseline
    return agreement_pairs(loaded) or None, control


@app.command("agreement")
def agreement(
    testset: Annotated[
        str, typer.Option("--testset", "-t", help="Offline test set whose runs are compared.")
    ],
    since: Annotated[
        str | None,
        typer.Option("--since", help="Online days in the last N h, d or w (default: every day)."),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Offline metrics, each against each --kpi (default: the "
            "project's pairs, else nDCG@10).",
        ),
    ] = None,
    kpi: Annotated[
        list[str] | None,
        typer.Option(
            "--kpi",
            "-k",
            help="Online KPIs, e.g. online:CTR (default: the project's pairs, else online:CTR).",
        ),
    ] = None,
    samples: Annotated[
        int,
        typer.Option(
            "--samples",
            help="Random orderings in the permutation test of tau above 8 "
            "versions (up to 8, all of them are counted).",
        ),
    ] = DEFAULT_PERMUTATIONS,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random orderings.")] = 0,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Also write the 'Offline vs online' page to this HTML file (scatter of the "
            "first pair, per-query click-through).",
        ),
    ] = None,
    project: AgreementProjectOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Kendall's tau-b (with the p-value of an exact permutation test) and Spearman's rho of
    each chosen offline metric (latest offline run of each config version on the test set)
    against each chosen online KPI (its online days pooled) across versions, and the share of
    A/B pairs whose offline and online deltas agree. The pairs are the project's `[online]
    agreement` (default: its gated metrics against its gated KPIs); under 5 versions a pair is
    "too few versions (N)". Direction-aware: positive means offline better goes with online
    better."""
    from evalplat.comparison.query_health import parse_since
    from evalplat.errors import InputError
    from evalplat.metrics.numbers import counted
    from evalplat.store.base import utcnow

    if samples < 1:
        raise InputError(f"--samples must be 1 or more, got {samples}")
    if report is not None:
        check_output_path(report, "--report", make_folder=True)
    start = None if since is None else utcnow() - parse_since(since)
    chosen, control = project_pairs(project)
    pairs = None if metric or kpi else chosen
    store = open_store(db, project_file=project)
    outcome = store.online_agreement(
        testset, since=start, metrics=metric, kpis=kpi, pairs=pairs, samples=samples, seed=seed
    )
    written = None
    if report is not None:
        from evalplat.reports.online_page import gather_offline_online, render_offline_online

        page = gather_offline_online(store, testset, since=start, agreement=outcome,
                                     control=control)  # fmt: skip
        with writing(report, "--report"):
            written = render_offline_online(page, report)
    if json_output:
        print_json({**outcome.to_dict(), **({"report": str(written)} if written else {})})
        return
    typer.echo(
        f"offline on {outcome.test_set} against online, "
        f"{counted(len(outcome.versions), 'version')}: " + (" ".join(outcome.versions) or "none")
    )
    for row in outcome.rows:
        head = f"{row.metric}\t{row.kpi}\t{counted(row.versions, 'version')}\t"
        if row.status != "ok":
            typer.echo(head + row.label)
            continue
        share = row.sign_agreement
        ab = "no A/B pairs" if share is None else (
            f"A/B agree {row.agreeing}/{row.pairs - row.ties} ({share:.0%})"
            + (f", {row.ties} tied" if row.ties else "")
        )  # fmt: skip
        test = "exact" if row.exact else f"{row.permutations} random orderings"
        typer.echo(head + f"tau={row.tau:+.2f} (p={row.tau_p:.2g}, {test})\trho={row.rho:+.2f}"
                   f"\t{ab}")  # fmt: skip
    if written is not None:
        typer.echo(f"report: {written}")


@app.command("compare")
def compare(
    baseline: Annotated[str, typer.Argument(help="Arm A: config NAME or NAME@VER.")],
    candidate: Annotated[str, typer.Argument(help="Arm B: config NAME or NAME@VER.")],
    day: Annotated[
        str | None,
        typer.Option("--day", help="UTC day YYYY-MM-DD (default: the latest both were online)."),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", "-m", help="Online measures (default: every one scored)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Compare one A/B pair: the two arms' online runs of one day, with a bootstrap over
    sessions, stored like any comparison (`evalplat compare` of the two run ids)."""
    from datetime import date

    from evalplat.cli.compare_output import print_comparison
    from evalplat.comparison.verdicts import CompareOptions
    from evalplat.errors import InputError

    if day is not None:
        try:
            date.fromisoformat(day)
        except ValueError:
            raise InputError(f"--day: {day!r} is not a date (YYYY-MM-DD)") from None
    store = open_store(db)
    pair = store.online_pair(baseline, candidate, day)
    result = store.compare_runs(
        pair.baseline_run, pair.candidate_run, metrics=metric or None,
        options=CompareOptions(seed=seed),
    )  # fmt: skip
    if json_output:
        print_json({"day": pair.day, **result.to_dict()})
        return
    typer.echo(f"{baseline} against {candidate} on {pair.day} (runs {pair.baseline_run} and "
               f"{pair.candidate_run})")  # fmt: skip
    print_comparison(result)


@app.command("preference")
def preference(
    candidate: Annotated[str, typer.Argument(help="Candidate config: NAME or NAME@VER.")],
    baseline: Annotated[str, typer.Argument(help="Baseline config: NAME or NAME@VER.")],
    day: Annotated[
        str | None, typer.Option("--day", help="Only this UTC day YYYY-MM-DD (default: every day).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Score an interleaved experiment: per UTC day, the sessions the candidate's results won,
    tied and lost against the baseline's in the merged lists, its preference online:Preference
    = (won + tied/2)/sessions - 0.5 and the 95% bootstrap interval over sessions, stored as the
    candidate's online runs (history and pages show them)."""
    from datetime import date

    from evalplat.errors import InputError
    from evalplat.inputs.validation import SEED_MAX, check_number

    check_number(seed, "--seed", minimum=0, maximum=SEED_MAX)
    if day is not None:
        try:
            date.fromisoformat(day)
        except ValueError:
            raise InputError(f"--day: {day!r} is not a date (YYYY-MM-DD)") from None
    store = open_store(db)
    days = [d for d in store.score_preference(candidate, baseline, seed=seed)
            if day is None or d.day == day]  # fmt: skip
    if json_output:
        print_json({"candidate": candidate, "baseline": baseline,
                    "days": [d.to_dict() for d in days]})  # fmt: skip
        return
    if not days:
        typer.echo(f"{candidate} against {baseline}: no interleaved searches"
                   + (f" on {day}" if day else ""))  # fmt: skip
        return
    typer.echo("day\tcandidate\tbaseline\tsessions\tsearches\twon\ttied\tlost\tpreference\t95% CI")
    for d in days:
        interval = f"[{d.low:+.4f}, {d.high:+.4f}]"
        typer.echo(f"{d.day}\t{d.candidate}\t{d.baseline}\t{d.sessions}\t{d.searches}\t{d.wins}"
                   f"\t{d.ties}\t{d.losses}\t{d.preference:+.4f}\t{interval}")  # fmt: skip
