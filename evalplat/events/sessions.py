"""From stored searches and events to the per-session values of online measures.

Searches are cut into windows by their own time (``day``: the UTC calendar day; ``all``: one
window), and each search's events go with it, even when they come after midnight. Within a
window, a session is the searches that share a session id. :func:`score_window` computes every
online measure for one config version in one window through the metric model
(``evalplat.metrics.compute`` with the ``events`` input), so online measures are scored like
every other measure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from evalplat.errors import InputError
from evalplat.metrics.online import OnlineLog

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from numpy.typing import NDArray

    from evalplat.metrics.registry import Metric

WINDOWS = ("day", "all")
DEFAULT_ONLINE_METRICS = (
    "online:CTR",
    "online:CTR@3",
    "online:MRR",
    "online:Abandonment",
    "online:ZeroResult",
    "online:SessionSuccess",
    "online:Rating",
    "online:Conversion",
)


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime  # exclusive

    @property
    def label(self) -> str:
        return f"{self.start.isoformat()}/{self.end.isoformat()}"


@dataclass(frozen=True)
class WindowScores:
    """One config version's online measures over one window: per session and the means."""

    window: Window
    sessions: int
    searches: int
    events: int
    # (metric, session id, value) rows, or a frame of columns metric, query_id (the session), value
    per_session: list[tuple[str, str, float]] | pd.DataFrame
    means: dict[str, tuple[float, int]]  # metric -> (figure, sessions with a known value)


def windows(searches: pd.DataFrame, window: str) -> Iterator[tuple[Window, pd.DataFrame]]:
    """(window, its searches) in time order; ``searches`` has a UTC ``timestamp`` column."""
    if window not in WINDOWS:
        raise InputError(f"window must be one of {', '.join(WINDOWS)}, got {window!r}")
    if searches.empty:
        return
    if window == "all":
        first, last = searches["timestamp"].min(), searches["timestamp"].max()
        yield Window(first.to_pydatetime(), last.to_pydatetime() + timedelta(seconds=1)), searches
        return
    days = searches["timestamp"].dt.floor("D")
    for day, part in searches.groupby(days, sort=True):
        start = day.to_pydatetime().astimezone(UTC)
        yield Window(start, start + timedelta(days=1)), part


def online_log(searches: pd.DataFrame, events: pd.DataFrame) -> OnlineLog:
    """Code one window's searches by session; keep the events of these searches."""
    import numpy as np
    import pandas as pd

    codes, sessions = pd.factorize(searches["session_id"], sort=True)
    position = pd.Series(np.arange(len(searches)), index=searches["query_id"].to_numpy())
    mine = events[events["query_id"].isin(position.index)]
    return OnlineLog(
        sessions=[str(s) for s in sessions],
        search_session=codes.astype(np.int64),
        search_time=_seconds(searches["timestamp"]),
        search_hits=searches["hits"].to_numpy(dtype=np.int64),
        event_search=position.loc[mine["query_id"]].to_numpy(dtype=np.int64),
        event_action=mine["action"].to_numpy(dtype=str),
        event_position=mine["position"].to_numpy(dtype=np.float64, na_value=np.nan),
        event_value=mine["value"].to_numpy(dtype=np.float64, na_value=np.nan),
        event_time=_seconds(mine["timestamp"]),
    )


def _seconds(times: pd.Series) -> NDArray[np.float64]:
    import numpy as np

    values = times.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[us]")
    seconds: NDArray[np.float64] = values.astype(np.int64).astype(np.float64) / 1e6
    return seconds


def score_window(window: Window, log: OnlineLog, metrics: Sequence[Metric]) -> WindowScores:
    """Every metric of ``metrics`` over ``log``, one value per session and the figure."""
    import numpy as np

    from evalplat.metrics import compute
    from evalplat.metrics.aggregate import aggregate
    from evalplat.metrics.sources import MeasureInputs

    inputs = MeasureInputs(n_topics=log.n_sessions, events=log)
    per_session: list[tuple[str, str, float]] = []
    means: dict[str, tuple[float, int]] = {}
    for metric in metrics:
        if metric.spec.unit != "session":
            raise InputError(f"{metric} is not an online measure (online:...)")
        values = compute(metric, inputs)
        known = ~np.isnan(values)
        name = str(metric)
        per_session.extend((name, log.sessions[i], float(values[i])) for i in np.flatnonzero(known))
        figure = aggregate(metric, values[known]) if known.any() else float("nan")
        means[name] = (figure, int(known.sum()))
    return WindowScores(
        window=window,
        sessions=log.n_sessions,
        searches=log.n_searches,
        events=len(log.event_search),
        per_session=per_session,
        means=means,
    )
