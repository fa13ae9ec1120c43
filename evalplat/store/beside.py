"""What a second process needs to share a job's work: the URL that opens the same store, and
more than one core to run on.

The report site renders its query-health pages in a second process
(``evalplat.reports.health_beside``), and a night compares its configs there while it runs
the next ones (``evalplat.nightly.compare_beside``). Each pays only where the other process
can see what this one wrote, and has a core of its own.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalplat.store import Store


def reopenable_url(store: Store) -> str | None:
    """The URL another process opens ``store`` with (its password kept), or None for an
    SQLite database in memory, which no other process can see, and for a file opened read-only
    (its engine's URL is the read-only form, not the file's)."""
    url = store.engine.url
    if store.read_only or (
        url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")
    ):
        return None
    return url.render_as_string(hide_password=False)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1
