"""The day rule of online alerts: opened when a regression holds over days, resolved when gone.

An online gate (an A/B gate on an arm's measure, or the interleaving gate on
``online:Preference``) judges one UTC day at a time, and a day's interval touches zero now and
then by chance alone. Fed day by day to an alert, such verdicts open, resolve and open again
one condition. So the alert of an online key follows its **judged days** (days with enough
sessions; "insufficient data" days are not judged and do not count), oldest first, by the
confirmation rule every alert follows (``evalplat.alerts.confirmation``), counted in days:
open when the latest judged day regressed and ``open_days`` of the last ``open_window`` did,
resolve after ``resolve_days`` clear judged days in a row.

``[online] open_days``, ``open_window`` and ``resolve_days`` set the rule of every online gate
(2, 3 and 2 by default; 1, 1 and 1 follow each day's verdict); a gate on an online measure that
states ``consecutive``, ``within`` or ``clear`` has its own, counted in days. The judged days
are the stored days' verdicts, read again each night (``evalplat.nightly.online``,
``evalplat.nightly.interleaved``): a day that grew is judged again, and a second night on one
day does not count it twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evalplat.alerts.confirmation import Confirmation
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    from evalplat.comparison.options import Gate
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent

OPEN_DAYS, OPEN_WINDOW, RESOLVE_DAYS = 2, 3, 2
DAY_RULE = Confirmation(OPEN_DAYS, OPEN_WINDOW, RESOLVE_DAYS)
# the keys of a gate that state its own rule; an online gate without them takes [online]'s
CONFIRMATION_KEYS = {"consecutive", "within", "clear"}


def with_rule(gate: Gate, rule: Confirmation) -> Gate:
    """``gate`` confirmed by ``rule`` (k = ``consecutive``, n = ``within``, ``clear``)."""
    return replace(gate, consecutive=rule.k, within=rule.n, clear=rule.clear)


def follow(
    store: Store,
    rule: Confirmation,
    config: str,
    metric: str,
    regressed: Sequence[bool],
    details: dict[str, Any],
    channels: Sequence[str],
    comparison_id: int | None = None,
) -> list[AlertEvent]:
    """Feed the ``regression`` alert of (``config``, ``online``, ``metric``) by ``rule`` over
    its judged days ``regressed`` (oldest first, the night's day last); the alert's message
    says the rule as it stands. Returns the events to deliver (0 or 1)."""
    if not regressed:
        return []
    return store.observe(config, ONLINE_TEST_SET, metric, None, comparison_id,
                         regressed=regressed[-1], confirm=rule, details=details,
                         kind="regression", channels=channels, recent=regressed,
                         unit="day")  # fmt: skip
