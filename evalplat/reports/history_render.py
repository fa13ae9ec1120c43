"""The history page of a config on a test set: a chart per metric over the runs, and the runs.

Split from ``evalplat.reports.render``, whose template environment (``_render``) and SVG
marking (``_safe``) it uses.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from evalplat.reports import charts
from evalplat.reports.data import HistoryPage, TargetLine

if TYPE_CHECKING:
    from evalplat.comparison.change_points import ChangePoint
    from evalplat.reports.render import Links


def history_html(page: HistoryPage, links: Links | None = None) -> str:
    from evalplat.reports.render import _render, _safe

    kinds = {"regression": "regression", "improvement": "improvement"}
    changes = [
        i
        for i in range(1, len(page.runs))
        if page.runs[i].run.config_version != page.runs[i - 1].run.config_version
    ]
    from evalplat.metrics.names import parse

    dates = run_dates([h.run.started_at for h in page.runs], [h.run.id for h in page.runs])
    judgments = [i for i, new in enumerate(page.new_judgments) if new]

    index_of = {h.run.id: i for i, h in enumerate(page.runs)}

    def chart(
        name: str,
        values: list[float | None],
        label: str,
        target: TargetLine | None,
        steps: tuple[ChangePoint, ...] = (),
    ) -> Any:
        verdicts = {} if target is None else target.verdicts
        points = [
            charts.LinePoint(
                label=date,
                value=value,
                kind="baseline" if h.is_baseline else kinds.get(h.verdict or "", "run"),
                note=f"run #{h.run.id} · {h.run.started_at} · config v{h.run.config_version}"
                + (f" · {h.verdict}" if h.verdict else "")
                + (f" · target {verdicts[h.run.id]}" if h.run.id in verdicts else ""),
            )
            for h, date, value in zip(page.runs, dates, values, strict=True)
        ]
        return _safe(
            charts.line_chart(
                points,
                label=label,
                version_changes=changes,
                judgment_changes=judgments,
                width=540,
                height=190,
                # most measures are never below 0; the axis still widens to a lower value (a
                # rank correlation can be negative)
                floor=0.0,
                ceiling=1.0 if parse(name).spec.bounded else None,
                target=None if target is None else (target.bound, target.value),
                change_points=[(index_of[c.run_id], c.text()) for c in steps],
            )
        )

    # a chart per metric (the run means, with its target on all queries), then one per segment
    # target (the segment's figure and its target line)
    figures = [
        (
            name,
            chart(
                name, [h.means.get(name) for h in page.runs], f"{name} over time",
                page.targets.get(name), page.change_points.get(name, ()),
            ),
        )
        for name in page.metrics
    ]  # fmt: skip
    for key, target in page.targets.items():
        if target.segment is not None:
            values = [target.figures.get(h.run.id) for h in page.runs]
            finite = [v if v is not None and math.isfinite(v) else None for v in values]
            figures.append((key, chart(target.metric, finite, f"{key} over time", target)))
    by_segment = []
    if page.segment_metric is not None:
        name = page.segment_metric
        for tag, values_by_run in page.segments.items():
            line = [values_by_run.get(h.run.id) for h in page.runs]
            label = f"{name} over time, segment {tag}"
            # a target on all queries is not the segment's: its chart draws none
            by_segment.append((tag, chart(name, line, label, None)))
    return _render("history.html", links, page=page, charts=figures, segment_charts=by_segment)


def run_dates(started: list[str], run_ids: list[int]) -> list[str]:
    """x-axis labels of runs started at ``started`` (``2026-05-01 03:00 UTC``), never two
    alike: the date; date and time (``05-01 03:00``) when two runs share a day; date and run
    id (``05-01 #12``) when two share a minute."""
    for labels in (
        [moment[:10] for moment in started],
        [moment[5:16] for moment in started],
    ):
        if len(set(labels)) == len(labels):
            return labels
    return [f"{moment[5:10]} #{run_id}" for moment, run_id in zip(started, run_ids, strict=True)]
