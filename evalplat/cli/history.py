"""``evalplat history``: a config's runs over time, one metric (per segment if asked), the
verdict of each night, and where the metric stepped (``Store.change_points``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from evalplat.cli.common import DbOption, JsonOption, open_store, print_json
from evalplat.metrics.numbers import value_text

if TYPE_CHECKING:
    from evalplat.comparison.change_points import ChangePoint
    from evalplat.store.history import HistoryPoint


def register(app: typer.Typer) -> None:
    app.command("history")(history_command)


def history_command(
    config: Annotated[str, typer.Argument(help="Config name.")],
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to show over time (default: nDCG@10; online:CTR on --testset online).",
            show_default=False,
        ),
    ] = None,
    testset: Annotated[
        str | None,
        typer.Option("--testset", "-t", help="Only runs on this test set.", show_default=False),
    ] = None,
    segment: Annotated[
        list[str] | None,
        typer.Option(
            "--segment",
            "-s",
            help="Also show the metric over the queries carrying this tag, repeatable "
            "(weighted like a comparison's segment rows).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Runs of a config over time: a metric's mean, per segment if asked, the verdict
    against the baseline, and where the metric stepped (change points, the test set's or the
    config's)."""
    from evalplat.errors import InputError
    from evalplat.metrics.names import parse
    from evalplat.store.testsets import ONLINE_TEST_SET

    online = testset is not None and testset.strip() == ONLINE_TEST_SET
    name = str(parse(metric or ("online:CTR" if online else "nDCG@10")))
    if online and segment:
        raise InputError("--segment: online runs are scored per session; sessions carry no tags")
    store = open_store(db, read_only=True)
    points = store.history(config, testset)
    wanted = list(dict.fromkeys(segment or []))
    by_run: dict[int, list[dict[str, object]]] = {}
    if wanted:
        frame, known = store.history_segments(points, name)
        unknown = [tag for tag in wanted if tag not in known]
        if unknown:
            raise InputError(
                f"--segment {unknown[0]!r}: no query of these runs carries this tag "
                f"(known tags: {', '.join(known) if known else 'none'})"
            )
        frame = frame[frame["segment"].isin(wanted)]
        for row in frame.to_dict("records"):
            by_run.setdefault(int(row["run_id"]), []).append(
                {
                    "segment": str(row["segment"]),
                    "metric": name,
                    "value": float(row["value"]),
                    "queries": int(row["queries"]),
                }
            )
    # where the metric stepped, each change point at the first run after it
    steps: dict[int, ChangePoint] = {}
    for test_set in sorted({p.test_set for p in points}):
        found = store.change_points(test_set, [name]).get(config, {}).get(name, [])
        steps.update((point.run_id, point) for point in found)
    if as_json:
        print_json(
            [
                p.to_dict()
                | {"unit": "session" if p.test_set == ONLINE_TEST_SET else "query"}
                | ({"segments": by_run.get(p.run_id, [])} if wanted else {})
                | {"change_point": _change_json(steps.get(p.run_id))}
                for p in points
            ]
        )
        return
    from rich.table import Table

    from evalplat.cli.common import table_console
    from evalplat.reports.data import new_judgments

    table = Table("run", "started", "status", "config", "test set",
                  "window" if online else "judgments", name)  # fmt: skip
    for tag in wanted:
        table.add_column(f"{name} [{tag}]")
    table.add_column("verdict")
    table.add_column("change point")
    changed: dict[int, bool] = {}  # a run scored on new judgments, per test set's runs
    for test_set in {p.test_set for p in points}:
        same = [p for p in points if p.test_set == test_set]
        marks = new_judgments([p.judgment_version for p in same])
        changed.update(zip([p.run_id for p in same], marks, strict=True))
    for p in points:
        value = p.means.get(name)
        by_sessions = p.test_set == ONLINE_TEST_SET  # a day of a log: no judgments to change
        seg_values = {str(r["segment"]): r for r in by_run.get(p.run_id, [])}
        table.add_row(
            str(p.run_id) + (" *" if p.is_baseline else ""),
            f"{p.started_at:%Y-%m-%d %H:%M}",
            p.status,
            f"v{p.config_version}" + (f" {p.label}" if p.label else ""),
            p.test_set if by_sessions else f"{p.test_set}@{p.test_set_version}",
            f"{p.started_at:%Y-%m-%d}" if by_sessions else _judgments_cell(p, changed[p.run_id]),
            "" if value is None else value_text(value, name),
            *(_segment_cell(seg_values.get(tag)) for tag in wanted),
            p.verdict or "",
            "" if p.run_id not in steps else steps[p.run_id].text(),
        )
    # the grades the figures were scored on (``evalplat.store.run_figures``)
    grades = sorted({p.grades for p in points if p.grades and name in p.means})
    console = table_console()
    console.print(table)
    console.print(
        ("* baseline · one row per UTC day of the log, its sessions' mean" if online else
         "* baseline · ◆ new judgments: not comparable with the rows above")
        + (f" · {name} on {' or '.join(grades)}" if grades else "")
        + (" · [tag]: over the queries carrying that tag" if wanted else "")
        + (" · change point ▲/▼: the metric stepped from this run on; test set: every config"
           " stepped that night or its version changed, config: this config alone"
           if steps else ""),
        highlight=False,
    )  # fmt: skip


def _judgments_cell(point: HistoryPoint, new: bool) -> str:
    """``v3``, ``v4 ◆`` (scored on new judgments), or ``not scored`` for a run without scores
    (a failed night), which has no judgment version to show."""
    if point.judgment_version is None:
        return "not scored"
    return f"v{point.judgment_version}" + (" ◆" if new else "")


def _change_json(point: ChangePoint | None) -> dict[str, object] | None:
    return None if point is None else point.to_dict()


def _segment_cell(row: dict[str, object] | None) -> str:
    return "" if row is None else value_text(float(str(row["value"])), str(row["metric"]))
