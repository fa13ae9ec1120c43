"""The SQL engine (DuckDB, or inside PostgreSQL) and the NumPy kernels give the same values."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from evalplat.events.synthetic import Arm, ubi_records
from evalplat.store import Store

METRICS = [
    "online:CTR",
    "online:CTR@2",
    "online:MRR",
    "online:Abandonment",
    "online:ZeroResult",
    "online:SessionSuccess",
    "online:SessionSuccess(action=purchase,window=100)",
    "online:Rating",
    "online:Conversion",
    "online:Conversion(action=rating)",
]


def _log(path: Path) -> Path:
    """A cascade-model log over two arms and two days, plus ratings, zero-hit searches, clicks
    without a position, clicks outside their search's span (after the session's next search,
    before their own) and an event after midnight of its search's day."""
    rankings = {"wing": ["d1", "d2", "d3", "d4"], "flow": ["d5", "d1", "d6"], "none": []}
    grades = {"wing": {"d1": 3, "d3": 1}, "flow": {"d6": 2, "d1": 1}}
    arms = [Arm("web@1", rankings, attention=0.9), Arm("web@2", rankings, attention=0.7)]
    records = list(ubi_records(arms, grades, sessions=300, seed=11, days=2, max_searches=4))
    late = datetime(2026, 3, 1, 23, 59, 50, tzinfo=UTC)
    records.append({"query_id": "late", "client_id": "c-late", "user_query": "wing",
                    "timestamp": late.isoformat(), "query_response_hit_ids": ["d1"],
                    "query_attributes": {"session_id": "late", "variant": "web@1"}})  # fmt: skip
    extra = [("late", "click", late + timedelta(seconds=30), None, None)]
    for n, record in enumerate(r for r in records if "action_name" not in r):
        if n % 7 == 0:
            when = datetime.fromisoformat(record["timestamp"]) + timedelta(seconds=40)
            extra.append((record["query_id"], "rating", when, None, float(n % 5 + 1)))
        if n % 11 == 0:
            when = datetime.fromisoformat(record["timestamp"]) + timedelta(seconds=1)
            extra.append((record["query_id"], "click", when, None, None))
        # clicks after the session's next search began, and before their own search
        for every, seconds in ((13, 100), (17, -5), (19, 95)):
            if n % every == 0:
                when = datetime.fromisoformat(record["timestamp"]) + timedelta(seconds=seconds)
                extra.append((record["query_id"], "click", when, 2, None))
    session = {r["query_id"]: r["query_attributes"]["session_id"] for r in records
               if "action_name" not in r}  # fmt: skip
    for query_id, action, when, position, value in extra:
        attributes: dict[str, object] = {"object": {"object_id": "d1"}}
        if value is not None:
            attributes["value"] = value
        if position is not None:
            attributes["position"] = {"ordinal": position}
        records.append({"action_name": action, "query_id": query_id,
                        "session_id": session[query_id], "timestamp": when.isoformat(),
                        "event_attributes": attributes})  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("window", ["day", "all"])
def test_sql_and_numpy_give_equal_per_session_values(
    store: Store, tmp_path: Path, window: str
) -> None:
    store.add_config("web", "builtin")
    store.add_config("web", "builtin", {"operator": "and"})
    store.import_events([_log(tmp_path / "log.jsonl")])
    numpy = store.online_scores(window=window, metrics=METRICS, engine="pandas")
    sql = store.online_scores(window=window, metrics=METRICS, engine="sql")
    assert [(v, s.window) for v, s in sql] == [(v, s.window) for v, s in numpy]
    assert len(numpy) == (4 if window == "day" else 2)
    for (_, a), (_, b) in zip(numpy, sql, strict=True):
        assert (a.sessions, a.searches, a.events) == (b.sessions, b.searches, b.events)
        expected = {(m, s): v for m, s, v in a.per_session}
        frame = b.per_session
        found = {(m, s): v for m, s, v in frame.itertuples(index=False)}
        assert found.keys() == expected.keys()
        for key, value in expected.items():
            assert found[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
        for name, (figure, count) in a.means.items():
            assert b.means[name][1] == count
            assert b.means[name][0] == pytest.approx(figure, rel=1e-12), name
    # the log has what each measure looks at
    means = dict(numpy[0][1].means)
    assert 0 < means["online:ZeroResult"][0] < 1 and means["online:Rating"][1] > 0
    assert 0 < means["online:Conversion"][0] < means["online:CTR"][0]
