"""The leaderboard page: many runs on one test set version, per metric the runs best first with
their intervals (a table and a chart of the intervals), their letters, their verdict against
the baseline, and every pair.

``leaderboard_html`` renders a :class:`~evalplat.comparison.leaderboard.Leaderboard` (pure,
deterministic: golden-file tested); ``render_leaderboard`` writes one page (``evalplat
leaderboard --report``); ``write_leaderboard_pages`` writes the report site's pages,
``leaderboard/<test set>.html``: per test set, the latest complete run of every config on its
latest scored version, when there are two or more (``Store.site_leaderboard_runs``).
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from evalplat.reports.axes import padded_range
from evalplat.reports.charts import _f, _open

if TYPE_CHECKING:
    from collections.abc import Callable

    from evalplat.comparison.leaderboard import Leaderboard, MetricBoard
    from evalplat.comparison.verdicts import Gate
    from evalplat.reports.page_keys import PageKeys
    from evalplat.reports.render import Links
    from evalplat.store import Store

_ROW = 18  # height of a run's row in the interval chart
_LEFT = 220  # room for the run names


def interval_chart(board: MetricBoard, width: int = 640) -> str:
    """Each run's mean (a dot) and interval (a line) on one axis, best first; the baseline's
    interval is drawn as a band behind the others."""
    rows = board.standings
    height = _ROW * len(rows) + 30
    out = [_open(width, height, f"{board.metric}: mean and interval of each run", "intervals")]
    values = [v for s in rows for v in (s.ci_low, s.ci_high, s.mean)]
    axis = padded_range(values)
    span = width - _LEFT - 20

    def x(value: float) -> float:
        return _LEFT + span * axis.fraction(value)

    for s in rows:
        if s.delta is None:
            wide = _f(max(x(s.ci_high) - x(s.ci_low), 1.0))
            out.append(f'<rect class="c-neutral" style="fill-opacity: .2" x="{_f(x(s.ci_low))}" '
                       f'y="4" width="{wide}" height="{_ROW * len(rows)}"/>')  # fmt: skip
    for row, s in enumerate(rows):
        y = 4 + _ROW * row + _ROW / 2
        shown = s.verdict in ("improvement", "regression")
        kind = "baseline" if s.delta is None else s.verdict if shown else "run"
        tip = escape(f"{s.run}: {s.mean:.4f} [{s.ci_low:.4f}, {s.ci_high:.4f}] {s.letters}")
        out.append(
            f'<text class="c-tick" x="{_LEFT - 8}" y="{_f(y + 4)}" text-anchor="end">'
            f"{escape(_short(s.run))}</text>"
            f'<line class="c-line" x1="{_f(x(s.ci_low))}" y1="{_f(y)}" x2="{_f(x(s.ci_high))}" '
            f'y2="{_f(y)}"/><circle class="m-{kind}" cx="{_f(x(s.mean))}" cy="{_f(y)}" r="4">'
            f"<title>{tip}</title></circle>"
        )
    base = 4 + _ROW * len(rows) + 16
    for value in (axis.low, axis.high):
        out.append(f'<text class="c-tick" x="{_f(x(value))}" y="{base}" text-anchor="middle">'
                   f"{value:.4g}</text>")  # fmt: skip
    return "".join(out) + "</svg>"


def _short(name: str, most: int = 32) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def leaderboard_html(board: Leaderboard, links: Links | None = None) -> str:
    """The page's HTML (pure): every user text escaped by the template or the chart."""
    from evalplat.reports.render import _render, _safe

    charts = [_safe(interval_chart(m)) for m in board.metrics]
    return _render("leaderboard.html", links, board=board, charts=charts)


def render_leaderboard(board: Leaderboard, out: str | Path) -> Path:
    """Write the page of ``board`` to ``out`` (its folder is created)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(leaderboard_html(board), encoding="utf-8")
    return path


def write_leaderboard_pages(
    store: Store,
    out: Path,
    links: Links,
    keys: PageKeys,
    stamps: Callable[..., tuple[object, ...]],
    gates_of: Callable[[str], list[Gate]] | None = None,
) -> dict[str, str]:
    """The site's leaderboard pages, one per test set with two or more configs' runs on its
    latest scored version; returns their paths relative to the site root by test set.

    A page is keyed by its runs' ``stamps`` (their rows and latest evaluations), the stored
    baselines (which run is production) and which of its runs have a page: while none of them
    changes, the page keeps its file and its scores are not read. ``gates_of``: the gates a
    project states for a test set, which its verdicts are of (``Store.leaderboard``)."""
    from evalplat.errors import EvalplatError
    from evalplat.reports.render import slug

    written: dict[str, str] = {}
    baselines = store.site_stamps().baselines
    for test_set, refs in store.site_leaderboard_runs():
        path = f"leaderboard/{slug(test_set)}.html"
        runs = [int(r) for r in refs]
        gates = None if gates_of is None else tuple(map(repr, gates_of(test_set)))
        material = ("leaderboard", test_set, refs, stamps(*runs), baselines, links.root,
                    links.index, tuple(links.run(r) for r in runs), gates)  # fmt: skip
        if not keys.keep(path, material):
            try:
                board = store.leaderboard(refs, gates_of=gates_of)
            except EvalplatError:  # no metric in common, say: the site goes on without it
                continue
            keys.put(path, material, leaderboard_html(board, links))
        written[test_set] = path
    return written
