"""A gate replayed over stored nights: the alerts it would have opened and resolved, and how
often it called an unchanged config a regression.

The input is one gate's condition night by night (``Night``: did the gate say regression, was
the pair an A/A pair of one config version, how large was the change), decided by the very
comparison a night makes (``evalplat.nightly.backtest`` replays it with ``record=False``). The
alerts follow the gate's confirmation rule (``evalplat.alerts.confirmation``), walked as the
alert state machine walks it (``evalplat.store.alerts``); a verdict that needs judgments opens
its own kind of alert by the same rule.

**False alarms.** A night whose candidate is a run of the baseline's own config version changed
nothing a team controls; a regression there is a false alarm. Their rate is the share of such
nights the gate called a regression, with its exact (Clopper-Pearson) 95 % interval, SciPy's
``binomtest``. Relevance measures of a deterministic engine never differ on such a pair; timing
measures and engines whose index moves under them do.

**Thresholds.** :func:`suggested_threshold` gives the smallest threshold under which at most
``target`` of the A/A nights regress, from each A/A night's change as decided with no threshold
(``Night.size``: the absolute change for ``max_drop``, the relative change for
``max_relative_drop``, the typical timing ratio less one for a timing measure). A change at or
under a threshold does not regress (``evalplat.comparison.thresholds.beyond``), so the threshold
is the largest change it must silence, rounded up to three significant digits; the caller
replays with it to show what the gate then opens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from evalplat.alerts.confirmation import Confirmation
from evalplat.comparison.options import ALERTING_VERDICTS

INTERVAL_LEVEL = 0.95


@dataclass(frozen=True)
class Night:
    """One night of one gate: its verdict, whether the pair was A/A, and the size of change."""

    at: datetime
    run_id: int  # the candidate run
    verdict: str | None  # the gate's verdict; None when the metric was not gated that night
    unchanged: bool  # the candidate is a run of the baseline's config version
    size: float | None = None  # the change the threshold is held against (module doc)

    @property
    def regressed(self) -> bool:
        return self.verdict == "regression"


@dataclass(frozen=True)
class ReplayedAlert:
    kind: str  # regression | needs_judgments, as the night's alerts (``nightly.notify``)
    opened_at: datetime
    opened_run: int
    resolved_at: datetime | None  # None: still open on the last night
    nights: int  # nights it was open, the opening one included
    false_alarm: bool  # opened on an A/A night

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["opened_at"] = self.opened_at.isoformat()
        data["resolved_at"] = None if self.resolved_at is None else self.resolved_at.isoformat()
        return data


@dataclass(frozen=True)
class FalseAlarms:
    nights: int  # A/A nights
    alarms: int  # of them, called a regression
    rate: float | None  # None without A/A nights
    low: float | None  # the exact 95 % interval of the rate
    high: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def replay(nights: Sequence[Night], confirm: Confirmation) -> list[ReplayedAlert]:
    """The alerts of the gate over ``nights`` (oldest first), as the store opens and resolves
    them under the gate's confirmation rule: of each kind, in the order they opened."""
    alerts = [a for kind in ALERTING_VERDICTS for a in _replay_kind(nights, confirm, kind)]
    return sorted(alerts, key=lambda alert: alert.opened_at)


def _replay_kind(nights: Sequence[Night], confirm: Confirmation, kind: str) -> list[ReplayedAlert]:
    """One kind's alerts: the outcomes an alert row would keep, stepped night by night by the
    rule ``Store.observe`` applies (``step``, then ``ends``: a fresh start after a resolved
    alert or a pending one that can no longer open)."""
    alerts: list[ReplayedAlert] = []
    kept: list[bool] = []
    opened: tuple[Night, int] | None = None  # the opening night and the nights open so far
    for night in nights:
        recent = [*kept, night.verdict == kind]
        was_open = opened is not None
        step = confirm.step(recent, was_open)
        if step == "resolve" and opened is not None:
            alerts.append(_alert(kind, opened, night.at))
            opened = None
        elif step == "open":
            opened = (night, 1)
        elif opened is not None:
            opened = (opened[0], opened[1] + 1)
        kept = [] if confirm.ends(recent, was_open, step) else recent[-confirm.keeps :]
    if opened is not None:
        alerts.append(_alert(kind, opened, None))
    return alerts


def _alert(kind: str, opened: tuple[Night, int], resolved_at: datetime | None) -> ReplayedAlert:
    night, count = opened
    return ReplayedAlert(kind, night.at, night.run_id, resolved_at, count, night.unchanged)


def false_alarms(nights: Sequence[Night]) -> FalseAlarms:
    """How many A/A nights the gate called a regression, with the rate's exact interval."""
    from scipy.stats import binomtest

    same = [night for night in nights if night.unchanged]
    alarms = sum(night.regressed for night in same)
    if not same:
        return FalseAlarms(0, 0, None, None, None)
    interval = binomtest(alarms, len(same)).proportion_ci(INTERVAL_LEVEL, method="exact")
    return FalseAlarms(len(same), alarms, alarms / len(same), interval.low, interval.high)


def suggested_threshold(nights: Sequence[Night], target: float) -> float:
    """The smallest threshold under which at most ``target`` of the A/A nights regress, from
    their changes decided with no threshold (0.0 when none needs silencing)."""
    same = [night for night in nights if night.unchanged]
    allowed = math.floor(target * len(same) + 1e-9)
    sizes = sorted(
        (n.size for n in same if n.regressed and n.size is not None and math.isfinite(n.size)),
        reverse=True,
    )
    if len(sizes) <= allowed:
        return 0.0
    return _round_up(sizes[allowed])


def _round_up(value: float, digits: int = 3) -> float:
    """``value`` rounded up to ``digits`` significant digits (never below it)."""
    if value <= 0:
        return 0.0
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(value)))
    rounded = math.ceil(value * scale - 1e-9) / scale
    return rounded if rounded >= value else math.ceil(value * scale) / scale
