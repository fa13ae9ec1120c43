"""The HTML body of an alert e-mail, rendered from ``templates/alert_email.html``.

Mail clients show it beside the plain-text body (``multipart/alternative``): a heading per alert
event, its facts as a table, the queries that moved most and a link to the report when the
report is an http(s) URL. Autoescaping is on, so a query such as ``<b> & c`` shows as written.
Styles are inline attributes: most mail clients drop ``<style>`` blocks and never load CSS.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

    from evalplat.alerts.notice import Notice

TEMPLATE = "alert_email.html"
# Heading colours per event, as in the Teams cards.
COLORS = {
    "opened": "#b00020",
    "resolved": "#2e7d32",
    "retired": "#555555",
    "test": "#555555",
}


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    from evalplat.resources import data_dir

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(data_dir("templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(notice: Notice) -> str:
    """The notice as an HTML document (every user-supplied string escaped)."""
    report = notice.report()
    link = report if report and report.startswith(("http://", "https://")) else None
    index = notice.index()
    index = index if index and index.startswith(("http://", "https://")) else None
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(notice=notice, colors=COLORS, link=link, index=index)
    )
