"""Importing interaction logs and scoring online measures as runs, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from evalplat.comparison import Gate
from evalplat.db.events import OnlineEvent, OnlineQuery
from evalplat.errors import InputError
from evalplat.store import Store

from .ubi import write_ubi_log


def _counts(store: Store) -> tuple[int, int]:
    with store.session() as session:
        return (
            session.scalar(select(func.count()).select_from(OnlineQuery)) or 0,
            session.scalar(select(func.count()).select_from(OnlineEvent)) or 0,
        )


def _arms(store: Store) -> None:
    store.add_config("web", "builtin")
    store.add_config("web", "builtin", {"operator": "and"})  # web@2: the candidate arm


def test_planted_ctr_drop_is_a_regression_over_sessions(store: Store, tmp_path: Path) -> None:
    _arms(store)
    log = write_ubi_log(tmp_path / "ab.jsonl", {"web@1": 0.50, "web@2": 0.45}, sessions=2500,
                        seed=7)  # fmt: skip
    outcome = store.import_events([log])
    assert (outcome.searches, outcome.unknown_configs, outcome.duplicates) == (5000, {}, 0)
    runs = store.score_online(["web"], metrics=["online:CTR", "online:MRR"])
    assert [(r.config_version, r.trigger, r.test_set) for r in runs] == [
        (1, "online", "online"), (2, "online", "online")
    ]  # fmt: skip
    a, b = runs
    assert a.queries_total == b.queries_total == 2500
    result = store.compare_runs(a.id, b.id, gates=[Gate("online:CTR", max_relative_drop=0.05)])
    ctr = result.metric("online:CTR")
    assert ctr.test == "bootstrap" and ctr.gated and ctr.p_value is not None
    assert ctr.verdict == "regression" and result.verdict == "regression"
    assert (
        ctr.ci_low is not None
        and ctr.ci_high is not None
        and ctr.ci_low < ctr.delta < ctr.ci_high < 0
    )
    assert ctr.relative_delta == pytest.approx(-0.1, abs=0.04)
    assert not result.metric("online:MRR").gated  # only the gated metric decides


def test_an_a_a_log_raises_no_regression(store: Store, tmp_path: Path) -> None:
    _arms(store)
    log = write_ubi_log(tmp_path / "aa.jsonl", {"web@1": 0.5, "web@2": 0.5}, sessions=1500,
                        seed=3)  # fmt: skip
    store.import_events([log])
    a, b = store.score_online(metrics=["online:CTR", "online:Abandonment"])
    result = store.compare_runs(a.id, b.id)
    assert {m.verdict for m in result.metrics} == {"unchanged"}
    assert all(m.gated and m.p_value is not None and m.p_value > 0.05 for m in result.metrics)


def test_each_day_is_an_online_run_in_history(store: Store, tmp_path: Path) -> None:
    _arms(store)
    log = write_ubi_log(tmp_path / "d.jsonl", {"web@1": 0.4}, sessions=40, seed=1, days=3)
    store.import_events([log])
    store.score_online(metrics=["online:CTR"])
    again = store.score_online(metrics=["online:CTR"])  # a new evaluation, not a new run
    points = store.history("web", "online")
    assert [p.run_id for p in points] == [r.id for r in again]
    assert [p.started_at.day for p in points] == [1, 2, 3]
    assert all(0.0 < p.means["online:CTR"] < 1.0 for p in points)
    with pytest.raises(Exception, match="no complete run"):  # CONFIG@latest is a search run
        store.resolve_run("web@latest")


def test_importing_twice_adds_nothing(store: Store, tmp_path: Path) -> None:
    _arms(store)
    log = write_ubi_log(tmp_path / "x.jsonl", {"web": 0.5}, sessions=50, seed=2)
    first = store.import_events([log])
    stored = _counts(store)
    second = store.import_events([log, log])
    assert (second.searches, second.events) == (0, 0)
    assert second.duplicates == 2 * (first.searches + first.events)
    assert _counts(store) == stored == (first.searches, first.events)


def test_unknown_configs_and_orphan_events_are_counted(store: Store, tmp_path: Path) -> None:
    _arms(store)
    path = tmp_path / "mixed.jsonl"
    records = [
        {"query_id": "k1", "session_id": "s1", "timestamp": "2026-03-01T10:00:00Z",
         "config": "web@2"},
        {"query_id": "k2", "session_id": "s2", "timestamp": "2026-03-01T10:00:00Z",
         "config": "ghost"},
        {"query_id": "k3", "session_id": "s3", "timestamp": "2026-03-01T10:00:00Z",
         "query_attributes": {"variant": "ghost"}},
        {"query_id": "k4", "session_id": "s4", "timestamp": 1772359200000},
        {"action_name": "click", "query_id": "elsewhere", "session_id": "s9",
         "timestamp": "2026-03-01T10:00:01+01:00"},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    outcome = store.import_events([path])
    assert outcome.searches == 1 and outcome.events == 1
    assert outcome.unknown_configs == {"ghost": 2} and outcome.unattributed == 1
    assert outcome.events_without_search == 1
    # the unattributed search is placed once a config is given for the import
    assert store.import_events([path], config="web").searches == 1


def test_a_bad_line_writes_nothing(store: Store, tmp_path: Path) -> None:
    _arms(store)
    good = write_ubi_log(tmp_path / "good.jsonl", {"web": 0.5}, sessions=20, seed=2)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "z", "session_id": "s", "timestamp": "2026-03-01 10:00"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl line 1: timestamp .* has no time zone"):
        store.import_events([good, bad])
    assert _counts(store) == (0, 0)
