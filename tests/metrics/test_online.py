"""Online measures on a hand-computed log, and their range property on random logs.

The worked example (times in seconds from the first search):

| session | search | time | hits | events |
|---|---|---|---|---|
| A | a1 | 0 | 3 | click at position 2 (t=5) |
| A | a2 | 30 | 0 | none |
| B | b1 | 100 | 2 | click at 1 (t=105), purchase (t=110), rating 4 (t=120) |
| B | b2 | 200 | 3 | click at 3 (t=210) |

- CTR: A 1/2, B 2/2 → 0.75; CTR@2: A 1/2, B 1/2 → 0.5.
- MRR: A (1/2 + 0)/2 = 0.25, B (1 + 1/3)/2 = 2/3 → 11/24.
- Abandonment: A 1/2 (a2), B 0 → 0.25; ZeroResult: A 1/2, B 0 → 0.25.
- SessionSuccess (window 60): A's click at 5 is followed by a2 at 30 ≤ 65 → 0; B's click at 105
  has no search in (105, 165] → 1 → 0.5. With window=10, A's click succeeds too → 1.0.
- Rating: A unknown, B 4 → 4.0 over 1 session. Conversion: A 0, B 1 → 0.5.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.events.sessions import Window, online_log, score_window
from evalplat.metrics import FAMILIES, parse

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _log(searches: list[tuple], events: list[tuple]) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = pd.DataFrame(searches, columns=["query_id", "session_id", "seconds", "hits"])
    frame["timestamp"] = [T0 + timedelta(seconds=s) for s in frame.pop("seconds")]
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    ev = pd.DataFrame(events, columns=["query_id", "action", "seconds", "position", "value"])
    ev["timestamp"] = pd.to_datetime([T0 + timedelta(seconds=s) for s in ev.pop("seconds")],
                                     utc=True)  # fmt: skip
    ev["position"] = ev["position"].astype("float64")
    ev["value"] = ev["value"].astype("float64")
    return frame, ev


WORKED = _log(
    [("a1", "A", 0, 3), ("a2", "A", 30, 0), ("b1", "B", 100, 2), ("b2", "B", 200, 3)],
    [
        ("a1", "click", 5, 2, None),
        ("b1", "click", 105, 1, None),
        ("b1", "purchase", 110, None, None),
        ("b1", "rating", 120, None, 4.0),
        ("b2", "click", 210, 3, None),
    ],
)

EXPECTED = {
    "online:CTR": (0.75, 2),
    "online:CTR@2": (0.5, 2),
    "online:MRR": (11 / 24, 2),
    "online:Abandonment": (0.25, 2),
    "online:ZeroResult": (0.25, 2),
    "online:SessionSuccess": (0.5, 2),
    "online:SessionSuccess(window=10)": (1.0, 2),
    "online:SessionSuccess(action=purchase)": (0.5, 2),
    "online:Rating": (4.0, 1),
    "online:Conversion": (0.5, 2),
    "online:Conversion(action=rating)": (0.5, 2),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_online_measure_matches_the_worked_example(name: str) -> None:
    log = online_log(*WORKED)
    scores = score_window(Window(T0, T0 + timedelta(days=1)), log, [parse(name)])
    value, sessions = scores.means[str(parse(name))]
    assert (value, sessions) == (pytest.approx(EXPECTED[name][0]), EXPECTED[name][1])


def test_per_session_values_are_stored_by_session_id() -> None:
    log = online_log(*WORKED)
    scores = score_window(Window(T0, T0), log, [parse("online:MRR"), parse("online:Rating")])
    assert sorted(scores.per_session) == sorted(
        [("online:MRR", "A", 0.25), ("online:MRR", "B", pytest.approx(2 / 3)),
         ("online:Rating", "B", 4.0)]
    )  # fmt: skip
    assert (scores.sessions, scores.searches, scores.events) == (2, 4, 5)


def test_online_measures_are_session_measures_with_a_direction() -> None:
    online = [f for f in FAMILIES.values() if f.namespace == "online"]
    assert {f.name for f in online} >= {"online:CTR", "online:MRR", "online:SessionSuccess"}
    assert all(f.unit == "session" and f.inputs == ("events",) for f in online)
    lower = {f.name for f in online if not f.higher_is_better}
    assert lower == {"online:Abandonment", "online:ZeroResult"}
    assert parse("online:CTR").test == "bootstrap"  # never the paired test: sessions do not pair


def test_an_offline_measure_is_refused_as_online() -> None:
    from evalplat.errors import InputError

    with pytest.raises(InputError, match="not an online measure"):
        score_window(Window(T0, T0), online_log(*WORKED), [parse("nDCG@10")])


_ACTIONS = st.sampled_from(["click", "purchase", "rating", "add_to_cart"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 500), st.integers(0, 5)),
             min_size=1, max_size=20),
    st.lists(st.tuples(st.integers(0, 19), _ACTIONS, st.integers(0, 600),
                       st.one_of(st.none(), st.integers(1, 5))), max_size=30),
)  # fmt: skip
def test_bounded_online_measures_stay_in_0_1(searches: list, events: list) -> None:
    rows = [(f"q{i}", f"s{s}", t, h) for i, (s, t, h) in enumerate(searches)]
    evs = [(f"q{q % len(rows)}", a, t, p, 3.0 if a == "rating" else None)
           for q, a, t, p in events]  # fmt: skip
    log = online_log(*_log(rows, evs))
    bounded = [parse(f.name) for f in FAMILIES.values() if f.namespace == "online" and f.bounded]
    scores = score_window(Window(T0, T0), log, [*bounded, parse("online:CTR@2")])
    for name, (value, _) in scores.means.items():
        assert 0.0 <= value <= 1.0, name
    assert all(0.0 <= v <= 1.0 for _, _, v in scores.per_session)
    ctr, ctr2 = (np.array([v for m, _, v in sorted(scores.per_session) if m == name])
                 for name in ("online:CTR", "online:CTR@2"))  # fmt: skip
    assert (ctr2 <= ctr + 1e-12).all()
