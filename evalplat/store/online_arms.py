"""Which online day speaks for an A/B arm: one rule for the night's comparison and the pages.

An arm's daily online runs are its config's runs with trigger ``online`` and window ``day``
(``Store.score_online``), whichever version served each day. The control of an A/B test
(``[online] baseline``) is read on its latest served day: of the version ``NAME@VER`` names,
or, for ``NAME``, of whichever version served the config's latest day. A rollback makes an
older version current, one that served only older days; the latest day is still the one to
compare, against the version that served it, not the rolled-back-to version's last day.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalplat.store.refs import parse_version_ref

if TYPE_CHECKING:
    from evalplat.store import RunInfo, Store


def day_runs(store: Store, config: str) -> list[RunInfo]:
    """The config's daily online runs, of every version."""
    return [
        run
        for run in store.list_runs(config)
        if run.trigger == "online" and run.options.get("online", {}).get("window") == "day"
    ]


def control_day(store: Store, reference: str) -> RunInfo | None:
    """The control's online run of its latest served day (module doc), None before any."""
    ref = parse_version_ref(reference, "[online] baseline")
    runs = [r for r in day_runs(store, ref.name) if ref.version in (None, r.config_version)]
    return max(runs, key=lambda r: r.started_at, default=None)
