"""The "Interleaved experiments" page: per experiment and day, who won the merged lists.

One row per stored day of each interleaved experiment (``Store.preference_days``): the
candidate and the baseline, the sessions and searches, the sessions won, tied and lost by the
candidate, its preference ``online:Preference`` with the 95% bootstrap interval over sessions,
and the night's gate verdict; newest day first, each candidate linking its history page on
test set ``online``. The site writes it as ``online/interleaved.html`` when there is a day.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalplat.reports.page_keys import PageKeys
    from evalplat.reports.render import Links
    from evalplat.store import PreferenceDay, Store

PAGE = "online/interleaved.html"


def interleaved_html(days: Sequence[PreferenceDay], links: Links | None = None) -> str:
    """The page's HTML (pure): every name escaped by the template."""
    from evalplat.reports.render import _render, slug

    rows = sorted(days, key=lambda d: (d.day, d.candidate), reverse=True)
    root = None if links is None or not links.index else links.root  # only inside a site
    history = {d.candidate: None if root is None else
               f"{root}history/{slug(d.candidate.partition('@')[0])}--{slug('online')}.html"
               for d in rows}  # fmt: skip
    return _render("interleaved.html", links, days=rows, history=history)


def write_interleaved_page(store: Store, out: Path, links: Links, keys: PageKeys) -> str | None:
    """Write the site's page when an experiment has a stored day; its path under the site.
    Keyed by its days (a night's gate verdict is kept on an evaluation, not stamped)."""
    days = store.preference_days()
    if not days:
        return None
    material = ("interleaved", tuple(days), links.root, links.index)
    keys.write(PAGE, material, lambda: interleaved_html(days, links))
    return PAGE
