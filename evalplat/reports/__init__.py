"""Static HTML reports: comparison, run, history pages and the site index.

Every page is one self-contained file (inline CSS, server-drawn SVG, a little inline script for
the per-query table) rendered with Jinja2 from ``templates/``. ``data`` and ``compared`` build
plain page data, ``gather`` fetches it from the store, ``charts`` draws SVG, ``render`` writes
the files.
"""

from __future__ import annotations

from evalplat.reports.history_render import history_html
from evalplat.reports.render import (
    comparison_html,
    index_html,
    render_comparison,
    render_history,
    render_run,
    render_site,
    run_html,
)

__all__ = [
    "comparison_html",
    "history_html",
    "index_html",
    "render_comparison",
    "render_history",
    "render_run",
    "render_site",
    "run_html",
]
