"""Zero-result rate of a run, and when a run is flagged for returning nothing.

A search that returns nothing for most queries is almost never a relevance result: it is a
query-syntax problem (an engine that ANDs every word of a natural-language question), an empty
index, or a wrong field. Such a run still completes and scores, so it is flagged instead of
silently being compared: ``run``, ``runs show`` and the run page say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# flagged when more than this share of the answered queries returned no result
MOSTLY_EMPTY_SHARE = 0.5


@dataclass(frozen=True)
class ZeroResults:
    """``empty`` of the ``answered`` (ok) queries returned no result."""

    empty: int
    answered: int

    @property
    def rate(self) -> float | None:
        return self.empty / self.answered if self.answered else None

    @property
    def mostly_empty(self) -> bool:
        rate = self.rate
        return rate is not None and rate > MOSTLY_EMPTY_SHARE

    def warning(self) -> str | None:
        """One line for a flagged run, naming the likely cause; None otherwise."""
        if not self.mostly_empty or self.rate is None:
            return None
        return (
            f"{self.rate:.0%} of the queries ({self.empty} of {self.answered}) returned no "
            "result: check the engine's query syntax (does it require every word?) and index"
        )


def zero_results(outcomes: pd.DataFrame) -> ZeroResults:
    """From a run's outcomes (``status``, ``results_count``): the ok queries with no result."""
    ok = outcomes[outcomes["status"] == "ok"]
    return ZeroResults(int((ok["results_count"] == 0).sum()), len(ok))
