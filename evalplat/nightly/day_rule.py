"""The day rule of online alerts: opened when a regression holds over days, resolved when gone.

An online gate (an A/B gate on an arm's measure, or the interleaving gate on
``online:Preference``) judges one UTC day at a time, and a day's interval touches zero now and
then by chance alone. Fed day by day to an alert, such verdicts open, resolve and open again
one condition. So the alert of an online key follows its **judged days** (days with enough
sessions; "insufficient data" days are not judged and do not count), oldest first, by one rule:

- **open** when the latest judged day regressed and at least ``open_days`` of the last
  ``open_window`` judged days did ("regressed 2 days of 3");
- **resolve** an open alert only when the last ``resolve_days`` judged days all did not regress
  ("clear 2 days in a row");
- otherwise the alert stays as it is: an open alert stays open through a clear day, and a
  single regressed day opens nothing.

``[online] open_days``, ``open_window`` and ``resolve_days`` set the rule (2, 3 and 2 by default;
1, 1 and 1 follow each day's verdict). Pure computation: the nights read the days' verdicts from
what they stored (``evalplat.nightly.online``, ``evalplat.nightly.interleaved``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evalplat.errors import InputError
from evalplat.store.testsets import ONLINE_TEST_SET

if TYPE_CHECKING:
    from evalplat.store import Store
    from evalplat.store.alerts import AlertEvent

Decision = Literal["open", "resolve", "hold"]
OPEN_DAYS, OPEN_WINDOW, RESOLVE_DAYS = 2, 3, 2


@dataclass(frozen=True)
class DayRule:
    """When an online alert opens and resolves over its judged days (module doc)."""

    open_days: int = OPEN_DAYS
    open_window: int = OPEN_WINDOW
    resolve_days: int = RESOLVE_DAYS

    def __post_init__(self) -> None:
        if not 1 <= self.open_days <= self.open_window:
            raise InputError(f"open_days ({self.open_days}) must be from 1 to open_window "
                             f"({self.open_window})")  # fmt: skip
        if self.resolve_days < 1:
            raise InputError(f"resolve_days must be 1 or more, got {self.resolve_days}")

    def decide(self, regressed: Sequence[bool], is_open: bool) -> Decision:
        """What the alert does after the latest of ``regressed`` (one per judged day, oldest
        first): ``open`` (when not open), ``resolve`` (when open), or ``hold``."""
        if not regressed:
            return "hold"
        if is_open:
            last = regressed[-self.resolve_days :]
            clear = len(last) == self.resolve_days and not any(last)
            return "resolve" if clear else "hold"
        window = regressed[-self.open_window :]
        if regressed[-1] and sum(window) >= self.open_days:
            return "open"
        return "hold"

    def says(self, regressed: Sequence[bool]) -> str:
        """The rule as it stands on the latest day: "regressed 2 days of 3" (of the last
        ``open_window`` judged days), and the rule itself."""
        window = regressed[-self.open_window :]
        return (
            f"regressed {sum(window)} {_days(sum(window))} of {len(window)} (opens at "
            f"{self.open_days} of {self.open_window}, resolves after {self.resolve_days} clear "
            f"{_days(self.resolve_days)})"
        )


def _days(count: int) -> str:
    return "day" if count == 1 else "days"


def follow(
    store: Store,
    rule: DayRule,
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
    is_open = any(
        alert.test_set == ONLINE_TEST_SET and alert.metric == metric
        and alert.kind == "regression" and alert.state in ("open", "acknowledged")
        for alert in store.list_alerts(config=config)
    )  # fmt: skip
    decision = rule.decide(regressed, is_open)
    said = {**details, "changes": [*details.get("changes", []), rule.says(regressed)]}
    if decision == "hold" and not (is_open and regressed and regressed[-1]):
        return []  # nothing to record: no alert, or an open one through a clear day
    return store.observe(config, ONLINE_TEST_SET, metric, None, comparison_id,
                         regressed=decision != "resolve", consecutive=1, details=said,
                         kind="regression", channels=channels)  # fmt: skip
