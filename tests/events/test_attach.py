"""Parquet logs read in place: checked up front, scored with the stored events."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalplat.errors import InputError
from evalplat.store import Store

from .logs import cascade_records, write_jsonl, write_parquet

METRICS = ["online:CTR", "online:CTR@2", "online:MRR", "online:Abandonment",
           "online:ZeroResult", "online:SessionSuccess", "online:Conversion"]  # fmt: skip


def _arms(store: Store) -> None:
    store.add_config("web", "builtin")
    store.add_config("web", "builtin", {"operator": "and"})


def _per_session(scored: list) -> dict[tuple[int, str, str, str], float]:
    values = {}
    for version, scores in scored:
        day = scores.window.start.isoformat()
        rows = scores.per_session
        items = rows.itertuples(index=False) if hasattr(rows, "columns") else rows
        for metric, session, value in items:
            values[(version, day, metric, session)] = value
    return values


def test_attached_parquet_scores_as_the_imported_log(store: Store, tmp_path: Path) -> None:
    _arms(store)
    records = cascade_records()
    queries, events = write_parquet(tmp_path, records)
    attached = store.attach_events([queries, events])
    searches = sum(1 for r in records if "action_name" not in r)
    assert [(a.searches, a.events) for a in attached] == [
        (searches, 0), (0, len(records) - searches)
    ]  # fmt: skip
    assert attached[0].configs.keys() == {"web@1", "web@2"}
    from_files = store.online_scores(metrics=METRICS)
    assert len(from_files) == 4  # two arms, two days
    # the same log imported and scored by the NumPy kernels gives the same values
    with Store.init(f"sqlite:///{tmp_path / 'imported.db'}") as imported:
        _arms(imported)
        imported.import_events([write_jsonl(tmp_path / "log.jsonl", records)])
        expected = _per_session(imported.online_scores(metrics=METRICS, engine="pandas"))
    found = _per_session(from_files)
    assert found.keys() == expected.keys()
    assert all(found[k] == pytest.approx(v, rel=1e-12) for k, v in expected.items())


def test_scoring_reads_attached_and_stored_events_together(store: Store, tmp_path: Path) -> None:
    _arms(store)
    records = cascade_records(sessions=60, days=1)
    searches = [r for r in records if "action_name" not in r]
    first = {r["query_id"] for r in searches[: len(searches) // 2]}
    stored = [r for r in records if r["query_id"] in first]
    store.import_events([write_jsonl(tmp_path / "half.jsonl", stored)])
    store.attach_events(list(write_parquet(tmp_path, [r for r in records if r not in stored])))
    runs = store.score_online(metrics=["online:CTR"])
    assert sum(r.queries_total for r in runs) == len({r["query_attributes"]["session_id"]
                                                      for r in searches})  # fmt: skip
    with Store.init(f"sqlite:///{tmp_path / 'all.db'}") as whole:
        _arms(whole)
        whole.import_events([write_jsonl(tmp_path / "all.jsonl", records)])
        expected = whole.score_online(metrics=["online:CTR"], engine="pandas")
    figures = [r.means["online:CTR"] for r in runs]
    assert figures == pytest.approx([r.means["online:CTR"] for r in expected], rel=1e-12)


def _table(tmp_path: Path, name: str, **columns: pa.Array | list) -> Path:
    path = tmp_path / name
    pq.write_table(pa.table(columns), path)
    return path


def test_bad_files_are_refused_naming_the_file_and_nothing_is_attached(
    store: Store, tmp_path: Path
) -> None:
    _arms(store)
    good, _ = write_parquet(tmp_path, cascade_records(sessions=5, days=1))
    when = [datetime(2026, 3, 1, 9, tzinfo=UTC)] * 2
    naive = _table(tmp_path, "naive.parquet", query_id=["a", "b"], session_id=["s", "s"],
                   timestamp=pa.array([w.replace(tzinfo=None) for w in when], pa.timestamp("us")),
                   config=["web", "web"], hits=[1, 2])  # fmt: skip
    text = _table(tmp_path, "text.parquet", query_id=["a"], session_id=["s"],
                  timestamp=["2026-03-01T09:00:00Z"], config=["web"], hits=[1])  # fmt: skip
    position = _table(tmp_path, "position.parquet", query_id=["a", "a"], action=["click"] * 2,
                      timestamp=pa.array(when, pa.timestamp("us", tz="UTC")),
                      position=[1, 0])  # fmt: skip
    nothing = tmp_path / "nothing.parquet"
    nothing.write_text("not parquet", encoding="utf-8")
    cases = [
        (naive, "column timestamp has no time zone"),
        (text, "column timestamp must be a timestamp with a time zone or epoch milliseconds"),
        (position, "row 2: position must be an integer from 1"),
        (nothing, "not a Parquet file"),
        (tmp_path / "missing.parquet", "no such file"),
    ]
    for path, message in cases:
        with pytest.raises(InputError, match=message) as caught:
            store.attach_events([good, path])
        assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(InputError, match="no column 'sid' \\(mapped to session_id\\)"):
        store.attach_events([good], mapping={"session_id": "sid"})
    assert store.event_attachments() == []


def test_a_file_changed_since_it_was_attached_is_refused(store: Store, tmp_path: Path) -> None:
    _arms(store)
    queries, events = write_parquet(tmp_path, cascade_records(sessions=10, days=1))
    store.attach_events([queries, events])
    assert store.online_scores(metrics=["online:CTR"])
    write_parquet(tmp_path, cascade_records(sessions=12, days=1, seed=9))
    with pytest.raises(InputError, match="changed since it was attached"):
        store.online_scores(metrics=["online:CTR"])
    store.attach_events([queries, events])  # attached again: read as it is now
    assert sum(s.sessions for _, s in store.online_scores(metrics=["online:CTR"])) == 24
    assert len(store.event_attachments()) == 2


def test_unknown_configs_in_a_file_are_counted(store: Store, tmp_path: Path) -> None:
    store.add_config("web", "builtin")
    records = cascade_records(sessions=10, days=1)
    queries, _ = write_parquet(tmp_path, records)
    (attached,) = store.attach_events([queries])
    second = sum(1 for r in records if r.get("query_attributes", {}).get("variant") == "web@2")
    assert attached.unknown_configs == {"web@2": second} and list(attached.configs) == ["web@1"]
