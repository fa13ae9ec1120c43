"""Online measures: what users did with the results a config version showed them.

The unit is the **session**: each kernel returns one value per session of one config version in
one window (day), and the run's figure is the mean over sessions, so every session weighs the
same however many searches it ran. Comparisons of two versions test the difference of those
means over sessions (``evalplat.comparison.sessions``), never over raw events.

Per search s (a UBI query record) with its events:

- clicked(s) = some ``click`` event (within the top k for ``@k``);
- rr(s) = 1 / the smallest position of its clicks, 0 without a positioned click;
- abandoned(s) = no event of any action;
- zero(s) = no hits shown.

A session's value of CTR, MRR, Abandonment and ZeroResult is the mean of these over its searches.
SessionSuccess, Rating and Conversion are read from the session's events as a whole.

``online:Preference`` is not computed from one config version's log but from interleaved
searches, where two configs' hits are merged into one list (``evalplat.events.interleaved_days``):
the candidate's share of the sessions it won (a tie counting half) minus one half.

The module holds the declarations and the kernels; NumPy is imported inside the kernels only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalplat.metrics.model import Measure, Param

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

CLICK = "click"
DEFAULT_SUCCESS = "click"
DEFAULT_CONVERSION = "purchase"
RATING = "rating"


@dataclass(frozen=True)
class OnlineLog:
    """Searches and events of one config version in one window, coded by session.

    Searches: ``search_session`` (session code), ``search_time`` (epoch seconds),
    ``search_hits`` (hits shown). Events: ``event_search`` (index of their search),
    ``event_action`` (action names), ``event_position`` (1-based, NaN unknown), ``event_value``
    (NaN when none), ``event_time`` (epoch seconds). ``sessions`` names each session code.
    """

    sessions: list[str]
    search_session: NDArray[np.int64]
    search_time: NDArray[np.float64]
    search_hits: NDArray[np.int64]
    event_search: NDArray[np.int64]
    event_action: NDArray[np.str_]
    event_position: NDArray[np.float64]
    event_value: NDArray[np.float64]
    event_time: NDArray[np.float64]

    @property
    def n_sessions(self) -> int:
        return len(self.sessions)

    @property
    def n_searches(self) -> int:
        return len(self.search_session)


def _per_session(log: OnlineLog, per_search: NDArray[np.float64]) -> NDArray[np.float64]:
    """Mean of a per-search value over each session's searches."""
    import numpy as np

    n = log.n_sessions
    total = np.bincount(log.search_session, weights=per_search, minlength=n)
    count = np.bincount(log.search_session, minlength=n).astype(np.float64)
    result: NDArray[np.float64] = np.divide(total, count, out=np.zeros(n), where=count > 0)
    return result


def _searches_with(log: OnlineLog, chosen: NDArray[np.bool_]) -> NDArray[np.float64]:
    """1.0 for each search that has at least one of the ``chosen`` events, else 0.0."""
    import numpy as np

    hit = np.zeros(log.n_searches, dtype=np.float64)
    hit[log.event_search[chosen]] = 1.0
    return hit


def ctr(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """Per session: share of its searches with a click (at a position <= k for ``CTR@k``)."""
    chosen = events.event_action == CLICK
    if metric.cutoff is not None:
        chosen &= events.event_position <= metric.cutoff
    return _per_session(events, _searches_with(events, chosen))


def mrr(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """Per session: mean over its searches of 1 / position of the first click (0: no click)."""
    import numpy as np

    clicks = (events.event_action == CLICK) & ~np.isnan(events.event_position)
    best = np.full(events.n_searches, np.inf)
    np.minimum.at(best, events.event_search[clicks], events.event_position[clicks])
    rr = np.where(np.isfinite(best), 1.0 / best, 0.0)
    return _per_session(events, rr)


def abandonment(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """Per session: share of its searches with no event at all."""
    import numpy as np

    acted = _searches_with(events, np.ones(len(events.event_search), dtype=bool))
    return _per_session(events, 1.0 - acted)


def zero_result(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """Per session: share of its searches that showed no hits."""
    return _per_session(events, (events.search_hits == 0).astype("float64"))


def session_success(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """1 for a session with a success action not followed, within ``window`` seconds, by
    another search of the session (a reformulation), else 0."""
    import numpy as np

    action = str(metric.param("action") or DEFAULT_SUCCESS).lower()
    window = float(metric.param("window"))  # type: ignore[arg-type]
    chosen = np.flatnonzero(events.event_action == action)
    session = events.search_session[events.event_search[chosen]]
    success = np.zeros(events.n_sessions, dtype=np.float64)
    if not chosen.size:
        return success
    # One sorted key per search, (session, time) as session * span + time offset, so the
    # first search after each event is one searchsorted away.
    t0 = min(events.search_time.min(), events.event_time[chosen].min())
    span = max(events.search_time.max(), events.event_time[chosen].max()) - t0 + window + 1.0
    keys = np.sort(events.search_session * span + (events.search_time - t0))
    when = events.event_time[chosen] - t0
    base = session * span
    following = np.searchsorted(keys, base + when, side="right")
    limit = np.append(keys, np.inf)[following]
    reformulated = limit <= base + when + window
    success[session[~reformulated]] = 1.0
    return success


def rating(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """Per session: mean value of its ``rating`` events; NaN (unknown) for a session without."""
    import numpy as np

    chosen = (events.event_action == RATING) & ~np.isnan(events.event_value)
    session = events.search_session[events.event_search[chosen]]
    n = events.n_sessions
    total = np.bincount(session, weights=events.event_value[chosen], minlength=n)
    count = np.bincount(session, minlength=n).astype(np.float64)
    result: NDArray[np.float64] = np.divide(total, count, out=np.full(n, np.nan), where=count > 0)
    return result


def conversion(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """1 for a session with at least one conversion action (``purchase`` by default)."""
    import numpy as np

    action = str(metric.param("action") or DEFAULT_CONVERSION).lower()
    chosen = events.event_action == action
    result = np.zeros(events.n_sessions, dtype=np.float64)
    result[events.search_session[events.event_search[chosen]]] = 1.0
    return result


def preference(events: OnlineLog, metric: Metric) -> NDArray[np.float64]:
    """Not a measure of one arm's log: scored from interleaved searches (module doc)."""
    from evalplat.errors import InputError

    raise InputError(f"{metric} is scored from interleaved searches ([[online.interleaving]]), "
                     "not from one config's searches")  # fmt: skip


ONLINE_PARAMS: tuple[Param, ...] = (
    Param("action", "name", None, "the event action that counts: SessionSuccess's success "
          "(default `click`), Conversion's conversion (default `purchase`)"),
    Param("window", "int", 60, "seconds after a success in which another search of the "
          "session counts as a reformulation (default 60)", minimum=0),
)  # fmt: skip

_SESSIONS = (
    "Computed per config version and day from imported events (`evalplat events score`), "
    "one value per session; the figure is the mean over sessions.",
    "Compared with an unpaired bootstrap over sessions (docs/online.md); a side with fewer "
    "sessions than the minimum is shown but never gated.",
)


def _online(
    name: str, notes: tuple[str, ...] = (), per_arm: bool = True, **fields: object
) -> Measure:
    notes = notes + _SESSIONS if per_arm else notes
    values: dict[str, object] = {
        "compute": f"online:{fields.pop('kernel')}",
        "inputs": ("events",),
        "unit": "session",
        "test": "bootstrap",
        "notes": notes,
    }
    values.update(fields)
    return Measure(name=f"online:{name}", **values)  # type: ignore[arg-type]


ONLINE: tuple[Measure, ...] = (
    _online(
        "CTR",
        description="Share of a session's searches with a click (at a position <= k for @k).",
        formula="CTR@k(session) = |searches with a click at position <= k| / |searches|",
        kernel="ctr",
        cutoff="optional",
        notes=("A click without a position counts for `online:CTR` but not for `@k`.",),
    ),
    _online(
        "MRR",
        description="Mean reciprocal rank of the first click of each search.",
        formula="MRR(session) = mean over its searches of 1 / min position of a click; "
        "0 for a search without a positioned click",
        kernel="mrr",
        cutoff="none",
    ),
    _online(
        "Abandonment",
        description="Share of a session's searches with no event of any kind.",
        formula="Abandonment(session) = |searches without any event| / |searches|",
        kernel="abandonment",
        cutoff="none",
        higher_is_better=False,
    ),
    _online(
        "ZeroResult",
        description="Share of a session's searches that showed no hits.",
        formula="ZeroResult(session) = |searches with no hit ids| / |searches|",
        kernel="zero_result",
        cutoff="none",
        higher_is_better=False,
    ),
    _online(
        "SessionSuccess",
        description="1 when the session has a success action not followed by a reformulation.",
        formula="SessionSuccess(action=a, window=w) = [ some event a at time t with no search "
        "of the session in (t, t + w] ]",
        kernel="session_success",
        cutoff="none",
        params=("action", "window"),
    ),
    _online(
        "Rating",
        description="Mean value of a session's rating events.",
        formula="Rating(session) = mean value of its `rating` events; unknown without any",
        kernel="rating",
        cutoff="none",
        bounded=False,
        unknown_values=True,
        notes=("Sessions without a rating take no part in the mean or the comparison.",),
    ),
    _online(
        "Conversion",
        description="1 when the session has a conversion action (purchase by default).",
        formula="Conversion(action=a) = [ some event a in the session ]",
        kernel="conversion",
        cutoff="none",
        params=("action",),
    ),
    _online(
        "Preference",
        description="Interleaving: how much more the candidate's hits drew the clicks than the "
        "baseline's, in the lists merged from both.",
        formula="Preference(candidate) = (sessions won + ties / 2) / sessions - 0.5; a session "
        "is won by the config whose hits won more of its searches' clicks",
        kernel="preference",
        cutoff="none",
        bounded=False,
        per_arm=False,
        notes=(
            "Scored per experiment and day from interleaved searches ([[online.interleaving]]), "
            "with a bootstrap interval over sessions; its gate alerts when the interval lies "
            "wholly below -max_drop (docs/online.md, Interleaved logs).",
        ),
    ),
)
