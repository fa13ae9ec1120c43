"""What a comparison is asked: the gates (``[[gates]]``) and the options it is computed with.

Both are frozen and checked on construction; a comparison stores its options so that every
number it shows can be reproduced (``evalplat.comparison.results`` holds what it says).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from evalplat.alerts.confirmation import Confirmation
from evalplat.errors import InputError

# "bootstrap" is never chosen by a user: measures whose test is the bootstrap use it.
TestName = Literal["randomization", "t-test", "wilcoxon", "bootstrap"]
TESTS: tuple[str, ...] = ("randomization", "t-test", "wilcoxon")
Verdict = Literal["regression", "improvement", "unchanged", "needs_judgments"]
VERDICTS: tuple[str, ...] = ("regression", "improvement", "unchanged", "needs_judgments")
# The verdicts of a gate that open an alert, each of its own kind (``evalplat.nightly.notify``).
ALERTING_VERDICTS: tuple[str, ...] = ("regression", "needs_judgments")
# How a gate treats unjudged documents (docs/regression-detection.md, "Unjudged documents").
# ``judge`` and ``grade`` let a judge's model grades in (docs/judging.md, "Gates"); the other
# modes leave them out.
UNJUDGED_MODES: tuple[str, ...] = ("bound", "needs_judgments", "ignore", "judge", "grade")
MODEL_MODES: tuple[str, ...] = ("judge", "grade")


@dataclass(frozen=True)
class Gate:
    """A regression gate on one metric (``[[gates]]`` in evalplat.toml).

    ``max_drop`` is absolute (0.01 = one point of nDCG), ``max_relative_drop`` relative to the
    baseline mean (0.02 = 2 %). With neither, any credible drop regresses. ``consecutive``,
    ``within`` and ``clear`` are for the nightly job (``confirmation``): ``consecutive``
    nights with a regression verdict open an alert, in a row or among the last ``within``
    nights, and ``clear`` nights in a row without one resolve it.
    ``unjudged`` says how unjudged documents weigh on the verdict: ``bound`` (decide in both
    the pessimistic scores and the optimistic bound, ``needs_judgments`` when they disagree),
    ``needs_judgments`` (a drop while Judged@k fell needs judgments) or ``ignore``.
    ``segment`` (a query tag) gates the metric over the queries carrying that tag only; without
    it the gate is on all queries.

    Model grades (``source = "llm:<judge>"``) count only when ``unjudged`` lets them in, from
    the judge named ``judge``: ``judge`` decides as ``bound`` on the people's grades and, when
    that needs judgments, again with the judge's grades filling the unjudged documents;
    ``grade`` counts the judge's grades as ordinary grades (the bound covers what is still
    unjudged). Every other mode scores on the people's grades alone.
    """

    metric: str
    max_drop: float | None = None
    max_relative_drop: float | None = None
    test: str = "randomization"
    alpha: float = 0.05
    consecutive: int = 1
    unjudged: str = "bound"
    segment: str | None = None
    judge: str | None = None
    within: int | None = None
    clear: int = 1

    @property
    def confirmation(self) -> Confirmation:
        """When the gate's alerts open and resolve (``evalplat.alerts.confirmation``)."""
        return Confirmation(self.consecutive, self.within or self.consecutive, self.clear)

    def __post_init__(self) -> None:
        if self.segment is not None and (not isinstance(self.segment, str) or not self.segment):
            raise InputError(f"gate on {self.metric}: segment must be a non-empty tag")
        if self.test not in TESTS:
            raise InputError(f"gate on {self.metric}: test must be one of {', '.join(TESTS)}, "
                             f"got {self.test!r}")  # fmt: skip
        if not 0.0 < self.alpha < 1.0:
            raise InputError(f"gate on {self.metric}: alpha must be in (0, 1), got {self.alpha}")
        for name in ("max_drop", "max_relative_drop"):
            value = getattr(self, name)
            if value is not None and (not math.isfinite(value) or value < 0):
                raise InputError(f"gate on {self.metric}: {name} must be 0 or more, got {value}")
        try:
            Confirmation(self.consecutive, self.within or self.consecutive, self.clear)
        except InputError as error:
            raise InputError(f"gate on {self.metric}: {error}") from None
        if self.unjudged not in UNJUDGED_MODES:
            raise InputError(f"gate on {self.metric}: unjudged must be one of "
                             f"{', '.join(UNJUDGED_MODES)}, got {self.unjudged!r}")  # fmt: skip
        if self.unjudged in MODEL_MODES and not self.judge:
            raise InputError(f'gate on {self.metric}: unjudged = "{self.unjudged}" needs the '
                             "judge whose grades to use")  # fmt: skip


@dataclass(frozen=True)
class CompareOptions:
    """How a comparison is computed; stored with it so that every number can be reproduced.

    ``test``/``alpha`` apply to ungated metrics (a gate carries its own). ``judged_drop`` is the
    fall of mean Judged@k (absolute, 0.05 = 5 points) beyond which a drop needs judgments.
    ``tie_tolerance``: per-query deltas within it count as ties. A segment (the queries carrying
    one tag) with fewer than ``min_segment_queries`` queries is reported but never gated, and an
    online measure with fewer than ``min_sessions`` sessions on a side is "insufficient data".
    """

    test: str = "randomization"
    alpha: float = 0.05
    seed: int = 0
    permutations: int = 10_000
    bootstrap: int = 2_000
    ci_level: float = 0.95
    tie_tolerance: float = 1e-9
    judged_drop: float = 0.05
    movers: int = 10
    allow_partial: bool = False
    min_segment_queries: int = 20
    min_sessions: int = 30

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise InputError(f"test must be one of {', '.join(TESTS)}, got {self.test!r}")
        if not 0.0 < self.alpha < 1.0:
            raise InputError(f"alpha must be in (0, 1), got {self.alpha}")
        if not 0.0 < self.ci_level < 1.0:
            raise InputError(f"ci_level must be in (0, 1), got {self.ci_level}")
        if self.permutations < 1 or self.bootstrap < 1:
            raise InputError("permutations and bootstrap resamples must be 1 or more")
        if self.tie_tolerance < 0 or self.judged_drop < 0 or self.movers < 0:
            raise InputError("tie_tolerance, judged_drop and movers must be 0 or more")
        if isinstance(self.min_segment_queries, bool) or self.min_segment_queries < 1:
            raise InputError(
                f"min_segment_queries must be 1 or more, got {self.min_segment_queries}"
            )
        if isinstance(self.min_sessions, bool) or self.min_sessions < 1:
            raise InputError(f"min_sessions must be 1 or more, got {self.min_sessions}")
