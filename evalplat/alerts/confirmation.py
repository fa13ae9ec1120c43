"""Confirmation rules: when a condition seen night after night opens an alert, and when it ends.

A gate's verdict (or a target's, or an online day's) is noisy; an alert that followed each
night's verdict alone would open, resolve and open again on one real problem. A rule of three
whole numbers decides instead, over the key's recent outcomes (True = the condition held:
regressed, missed), oldest first, the latest last:

- **open** (a key without an open alert): the latest outcome held and at least ``k`` of the
  last ``n`` did ("regressed 2 nights of 3");
- **resolve** (a key with an open or acknowledged alert): the last ``clear`` outcomes all did
  not hold ("clear 2 nights in a row"); a clear night short of that leaves the alert open, so
  ``T, F, T`` under ``clear = 2`` is one alert, never a reopening;
- otherwise **stay**: the alert, open or not, is left as it is.

``k = n = N, clear = 1`` is the rule of ``consecutive = N``: N regressed nights in a row open,
the first clear night resolves. Where the store keeps a key's outcomes (nights), those older
than its current alert do not count: an alert that resolved needs ``k`` fresh regressed nights
of ``n`` to open again. An online gate's judged days are read whole each night, so there the
days before a resolution still count in the window (with ``clear`` at least ``n - k + 1`` this
makes no difference: the days before the clear run can then never make up the ``k``).

Pure: the store keeps each key's recent outcomes and applies ``step``
(``evalplat.store.alerts``), and a replay of stored verdicts can walk the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from evalplat.errors import InputError

Step = Literal["open", "resolve", "stay"]
# The longest window and clear run a rule may ask for: the outcomes a key keeps
# (``alert.recent``, one character each).
MOST = 60


@dataclass(frozen=True)
class Confirmation:
    """Open on ``k`` of the last ``n`` outcomes (the latest among them), resolve after ``clear``
    clear outcomes in a row (module doc). The defaults follow each outcome alone."""

    k: int = 1
    n: int = 1
    clear: int = 1

    def __post_init__(self) -> None:
        for name in ("k", "n", "clear"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MOST:
                raise InputError(f"{name} must be a whole number from 1 to {MOST}, got {value!r}")
        if self.k > self.n:
            raise InputError(f"{self.k} of {self.n}: the window must hold at least k outcomes")

    @property
    def keeps(self) -> int:
        """How many of the latest outcomes the rule ever reads."""
        return max(self.n, self.clear)

    def step(self, recent: Sequence[bool], is_open: bool) -> Step:
        """What the alert does after the latest of ``recent`` (oldest first)."""
        if not recent:
            return "stay"
        if is_open:
            last = recent[-self.clear :]
            return "resolve" if len(last) == self.clear and not any(last) else "stay"
        if recent[-1] and sum(recent[-self.n :]) >= self.k:
            return "open"
        return "stay"

    def watching(self, recent: Sequence[bool]) -> bool:
        """Whether a key without an open alert must keep ``recent``: some night of the next
        ``n - 1`` could open it sooner with them than from a fresh start. False for
        ``k = n`` after a clear night, as a streak that breaks starts again from zero."""
        return any(sum(recent[-(self.n - later) :]) + later >= self.k for later in range(1, self.k))

    def ends(
        self, recent: Sequence[bool], is_open: bool, step: Step, *, elsewhere: bool = False
    ) -> bool:
        """Whether the key's alert row ends with the night whose ``step`` followed ``recent``
        (the row open or not before it): a resolved alert, or a pending one whose outcomes can
        no longer open it, or any not opened when the outcomes are kept ``elsewhere`` (an
        online gate's judged days). The next night then starts from no outcome."""
        if step == "resolve":
            return True
        return not is_open and step != "open" and (elsewhere or not self.watching(recent))

    def says(self, recent: Sequence[bool], unit: str = "night") -> str:
        """The rule as it stands after the latest outcome: "regressed 2 nights of 3 (opens at
        2 of 3, resolves after 2 clear nights)"; for the default rule only the first part."""
        window = recent[-self.n :]
        held = sum(window)
        text = f"regressed {held} {_plural(unit, held)} of {len(window)}"
        if self == Confirmation(self.k, self.k, 1):
            return text if self.k == 1 else f"{text} (opens after {self.k} in a row)"
        return (
            f"{text} (opens at {self.k} of {self.n}, resolves after {self.clear} clear "
            f"{_plural(unit, self.clear)})"
        )

    def keep(self, recent: Sequence[bool]) -> str:
        """``recent`` as the store keeps it: its last ``keeps`` outcomes, ``1`` held, ``0`` not."""
        return "".join("1" if held else "0" for held in recent[-self.keeps :])


def outcomes(kept: str | None) -> list[bool]:
    """The outcomes of ``Confirmation.keep``'s text, oldest first."""
    return [char == "1" for char in kept or ""]


def _plural(unit: str, count: int) -> str:
    return unit if count == 1 else f"{unit}s"
