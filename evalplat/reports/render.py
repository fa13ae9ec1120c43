"""Render report pages with Jinja2 from ``templates/`` and write them to disk.

Two layers: ``*_html(page, links)`` turn page data into one self-contained HTML string (pure,
deterministic: golden-file tested), and ``render_*`` fetch the data from a store and write files.

Site layout written by :func:`render_site` (``evalplat.reports.site``; every link relative, so
the folder can be moved)::

    index.html
    health/<config>--<test set>.html   (query health over the last 30 days)
    online/<test set>.html   (offline vs online, when versions were also online)
    leaderboard/<test set>.html   (every config's latest run, ranked: reports.leaderboard_page)
    runs/run-<id>.html
    history/<config>--<test set>.html   (evalplat.reports.history_render)
    compare/compare-<comparison id>.html

Escaping: autoescape is on for every template; SVG charts are built with ``html.escape`` and
marked safe; the per-query JSON is embedded in a ``<script type="application/json">`` with every
``<`` written ``\\u003c``, so no text can close the script element.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalplat.reports import charts
from evalplat.reports.compared import ComparisonPage, comparison_page
from evalplat.reports.data import QueryTable, RunHeader, RunPage
from evalplat.reports.history_render import history_html
from evalplat.reports.index_data import SiteIndex

if TYPE_CHECKING:
    import jinja2

    from evalplat.comparison.targets import Target
    from evalplat.comparison.verdicts import ComparisonResult, Gate
    from evalplat.reports.page_keys import PageAhead
    from evalplat.store import Store

DASH = "\u2013"  # shown for a missing value
MINUS = "\u2212"  # a real minus sign: as wide as "+", so columns of deltas line up
RUN_PAGES_PER_HISTORY = 30  # older runs stay in the history table, without a page of their own
_VERDICT_SYMBOLS = {"regression": "▼", "improvement": "▲", "unchanged": "=", "needs_judgments": "?",
                    "watching": "◇"}  # fmt: skip
_VERDICT_TITLES = {
    "watching": "Regressed on its latest day; the day rule has not opened an alert",
    "regression": "Regression",
    "improvement": "Improvement",
    "unchanged": "No significant change",
    "needs_judgments": "Needs judgments",
}


@dataclass(frozen=True)
class Links:
    """Where a page's links go. Outside a site (a single written file) nothing is linked."""

    root: str = ""  # from this page to the site root, e.g. "../"
    runs: frozenset[int] = frozenset()
    comparisons: Mapping[int, str] = field(default_factory=dict)  # candidate run → site path
    history: str | None = None  # site path of the relevant history page
    index: bool = False

    def run(self, run_id: int) -> str | None:
        return f"{self.root}runs/run-{run_id}.html" if run_id in self.runs else None

    def comparison(self, run_id: int) -> str | None:
        path = self.comparisons.get(run_id)
        return None if path is None else self.root + path

    def context(self) -> dict[str, Any]:
        return {
            "link_run": self.run,
            "link_comparison": self.comparison,
            "history_link": None if self.history is None else self.root + self.history,
            "index_link": f"{self.root}index.html" if self.index else None,
        }


# ── formatting filters ───────────────────────────────────────────────────────────────────────


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def fmt_num(value: float | None, digits: int = 4) -> str:
    """Four decimals; whole numbers of 100 or more (sums such as NumRet) without decimals."""
    if value is None or _missing(value):
        return DASH
    if abs(value) >= 100 and float(value).is_integer():
        return f"{value:.0f}"
    return f"{value:.{digits}f}"


def fmt_signed(value: float | None, digits: int = 4) -> str:
    """``+0.0123``, ``\u22120.0123`` (a real minus sign, U+2212), ``0.0000``."""
    if value is None or _missing(value):
        return DASH
    text = f"{abs(value):.{digits}f}"
    if float(text) == 0:
        return text
    return ("+" if value > 0 else MINUS) + text


def fmt_pct(value: float | None, signed: bool = False) -> str:
    if value is None or _missing(value):
        return DASH
    return (fmt_signed(value * 100, 1) if signed else f"{value * 100:.1f}") + " %"


def fmt_pvalue(value: float | None) -> str:
    """Two significant digits, below 0.001 scientific (``evalplat.metrics.numbers``)."""
    from evalplat.metrics.numbers import p_text

    return p_text(value, missing=DASH)


def fmt_value(value: float | None, metric: str) -> str:
    """A metric's figure of its kind: ``0.4312``, ``22500`` (a count), ``182.4 ms``."""
    from evalplat.metrics.numbers import value_text

    return value_text(value, metric, missing=DASH)


def fmt_change(value: float | None, metric: str) -> str:
    """A metric's signed change of its kind, with a real minus sign (U+2212): ``+35.2 ms``."""
    from evalplat.metrics.numbers import delta_text

    return delta_text(value, metric, missing=DASH).replace("-", MINUS, 1)


def why_text(row: Any, result: Any) -> str:
    """Why a metric row of ``result`` got its verdict (``evalplat.comparison.explain``)."""
    from evalplat.comparison import explain

    return explain.why(row, explain.gating(result)["family"])


def fmt_ms(value: float | None) -> str:
    return DASH if value is None or _missing(value) else f"{value:.1f}"


def fmt_cell(value: Any, kind: str) -> str:
    """A numeric table cell, as the page's script formats it (first page and later pages
    must look the same)."""
    if _missing(value):
        return DASH
    if kind == "int":
        return str(round(value))
    if kind == "ms":
        return fmt_ms(value)
    return fmt_num(value)


def delta_class(delta: float | None, higher_is_better: bool) -> str:
    """``better``/``worse`` in the metric's direction, ``same`` within 1e-12."""
    if delta is None or _missing(delta) or abs(delta) < 1e-12:
        return "same"
    return "better" if (delta > 0) == higher_is_better else "worse"


def script_json(data: Any) -> str:
    """JSON safe inside ``<script>``: ``<`` escaped so ``</script>`` or ``<!--`` cannot occur."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace(
        "<", "\\u003c"
    )


@functools.cache
def environment() -> jinja2.Environment:
    import jinja2

    from evalplat.metrics.numbers import counted
    from evalplat.resources import data_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=fmt_num,
        counted=counted,
        signed=fmt_signed,
        pct=fmt_pct,
        pvalue=fmt_pvalue,
        value=fmt_value,
        change=fmt_change,
        why=why_text,
        ms=fmt_ms,
        cell=fmt_cell,
        delta_class=delta_class,
        delta_symbol=lambda cls: {"better": "▲", "worse": "▼"}.get(cls, "="),
        verdict_symbol=lambda v: _VERDICT_SYMBOLS.get(v, "·"),
        verdict_title=lambda v: _VERDICT_TITLES.get(v, str(v)),
    )
    return env


def _render(template: str, links: Links | None, **context: Any) -> str:
    from markupsafe import Markup

    for key, value in list(context.items()):
        if isinstance(value, QueryTable):
            context[key + "_json"] = Markup(script_json(value.to_json_data()))
    html = environment().get_template(template).render(**(links or Links()).context(), **context)
    return html if html.endswith("\n") else html + "\n"


def _safe(svg: str) -> Any:
    from markupsafe import Markup

    return Markup(svg)  # built by evalplat.reports.charts, which escapes every text it writes


# ── pages (pure) ─────────────────────────────────────────────────────────────────────────────


def comparison_html(page: ComparisonPage, links: Links | None = None) -> str:
    deltas = [c - b for b, c in zip(page.baseline_values, page.candidate_values, strict=True)]
    hib = page.primary_higher_is_better
    figures = {
        "delta": _safe(
            charts.delta_histogram(
                deltas, label=f"Distribution of per-query Δ {page.primary}", higher_is_better=hib
            )
        ),
        "scatter": _safe(
            charts.scatter(
                page.baseline_values,
                page.candidate_values,
                label=f"{page.primary} per query: baseline vs candidate",
                higher_is_better=hib,
            )
        ),
    }
    return _render("comparison.html", links, page=page, charts=figures, table=page.table)


def run_html(page: RunPage, links: Links | None = None) -> str:
    figures = [
        (name, _safe(charts.value_histogram(values, label=f"Distribution of {name} per query")))
        for name, values in page.distributions
    ]
    if page.latencies:
        label = "Distribution of latency (ms) per answered query"
        figures.append(("Latency (ms)", _safe(charts.value_histogram(page.latencies, label=label))))
    return _render("run.html", links, page=page, charts=figures, table=page.table)


def index_html(index: SiteIndex) -> str:
    sparks = [
        _safe(charts.sparkline(e.trend, label=f"{e.primary} trend of {e.latest.config}"))
        for e in index.entries
    ]
    return _render("index.html", None, index=index, sparklines=sparks)


# ── writing files from the store ─────────────────────────────────────────────────────────────


def _write(path: Path, html: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def render_comparison(
    result: ComparisonResult, out: str | Path, store: Store | None = None, *, k: int = 10
) -> Path:
    """Write the comparison page of ``result`` to the file ``out``.

    With the ``store`` the page has query texts, both runs' details and the moved queries'
    top-k results side by side. Without it (a result computed from files) it shows the metrics,
    charts and per-query table only.
    """
    from evalplat.reports.gather import gather_comparison

    if store is not None:
        page = gather_comparison(store, result, k=k)
    else:
        page = _storeless_page(result, k)
    return _write(Path(out), comparison_html(page))


def _storeless_page(result: ComparisonResult, k: int) -> ComparisonPage:
    import pandas as pd

    def header(label: str, run_id: int | None) -> RunHeader:
        return RunHeader(run_id or 0, label, 0, None, "", result.test_set or "", 0, "", "",
                         "", None, result.queries, 0)  # fmt: skip

    empty = pd.DataFrame({"query_id": [], "doc_id": [], "grade": []})
    return comparison_page(
        result,
        baseline=header(result.baseline_label, result.baseline_run_id),
        candidate=header(result.candidate_label, result.candidate_run_id),
        query_text={},
        judgments=empty,
        baseline_results=None,
        candidate_results=None,
        k=k,
    )


def render_run(store: Store, run_ref: str | int, out: str | Path) -> Path:
    """Write the page of one run (summary, distributions, failures, per-query table)."""
    from evalplat.reports.gather import gather_run

    return _write(Path(out), run_html(gather_run(store, run_ref)))


def render_history(
    store: Store, config: str, out: str | Path, *, test_set: str | None = None
) -> Path:
    """Write the history page of ``config`` (on ``test_set``, needed when it ran on several)."""
    from evalplat.errors import InputError
    from evalplat.reports.gather import gather_history

    pages = gather_history(store, config, test_set)
    if len(pages) != 1:
        names = ", ".join(p.test_set for p in pages) or "none"
        raise InputError(f"config '{config}' ran on several test sets ({names}): name one")
    return _write(Path(out), history_html(pages[0]))


SLUG_LENGTH = 80


def slug(text: str) -> str:
    """A file-name-safe form of a config or test set name, at most ``SLUG_LENGTH`` characters.

    A safe name that fits is its own slug. Any other gets a short hash of the whole name after
    its safe form, cut to fit: names that differ only in unsafe characters, or only after their
    first 80 characters, get files of their own, and a name's file stays the same night after
    night."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"
    if safe == text and len(safe) <= SLUG_LENGTH:
        return safe
    digest = "-" + hashlib.sha256(text.encode()).hexdigest()[:6]
    return safe[: SLUG_LENGTH - len(digest)] + digest


def render_site(
    store: Store,
    out_dir: str | Path,
    agreement: Sequence[tuple[str, str]] | None = None,
    ahead: Iterable[PageAhead] = (),
    targets: Sequence[Target] | None = None,
    control: str | None = None,
    gates_of: Callable[[str], list[Gate]] | None = None,
) -> Path:
    """Write the whole report site into ``out_dir`` (``evalplat.reports.site``); ``agreement``
    is the (offline metric, KPI) pairs of its "Offline vs online" pages and ``control`` the
    control arm their A/B deltas are taken against, ``ahead`` pages rendered before
    (``evalplat.reports.site.comparison_page_ahead``), ``targets`` the project's, whose lines
    in force the history pages draw, ``gates_of`` the project's stated gates of a test set,
    which its leaderboard page gates by (``Project.stated_gates``)."""
    from evalplat.reports.site import write_site

    return write_site(store, out_dir, agreement, ahead, targets, control, gates_of)
