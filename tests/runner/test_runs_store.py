"""The runs part of the store: life cycle, liveness, references and retention, on both backends."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import delete, update

from evalplat.db.evaluations import Baseline
from evalplat.db.models import Config, Run, TestSet
from evalplat.errors import InputError, NotFoundError
from evalplat.store import EvaluationRecord, QueryOutcome, Store
from evalplat.store.base import utcnow

from .helpers import new_run


def _evaluation(version_id: int, value: float) -> EvaluationRecord:
    per_query = [("P@1", f"q{n}", value) for n in range(10)]
    return EvaluationRecord(version_id, per_query, {"P@1": (value, 10)})


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_outcomes_and_final_status_are_stored_with_the_evaluation(store: Store) -> None:
    run_id, version_id = new_run(store)
    store.record_outcomes(
        run_id,
        [
            QueryOutcome("q0", "ok", [("d1", 3.0), ("d0", 2.0)], latency_ms=1.5),
            QueryOutcome("q1", "failed", attempts=4, error="timed out"),
        ],
    )
    running = store.run_info(run_id)
    assert (running.status, running.queries_done, running.queries_failed) == ("running", 2, 1)
    info = store.finish_run(run_id, "partial", evaluation=_evaluation(version_id, 0.5))
    assert info.status == "partial"
    assert info.means == {"P@1": 0.5}
    assert info.scored_against_version == 1
    results = store.load_results(run_id)
    assert results[["doc_id", "rank"]].values.tolist() == [["d1", 1], ["d0", 2]]
    assert store.run_failures(run_id) == [{"query_id": "q1", "attempts": 4, "error": "timed out"}]
    assert len(store.evaluation_scores(run_id)) == 10


def test_a_batch_finished_out_of_order_is_written_in_key_order(store: Store) -> None:
    from evalplat.store.run_rows import result_columns_of

    # finished as the searches came back; the key orders by code point: "Z" < "a" < "é"
    batch = [QueryOutcome(q, "ok", [(f"{q}-d1", 2.0), (f"{q}-d2", 1.0)])
             for q in ("q2", "é", "q10", "Z", "a")]  # fmt: skip
    columns = result_columns_of(7, batch)
    assert columns is not None
    keys = list(zip(columns["query_id"].to_pylist(), columns["rank"].to_pylist(), strict=True))
    assert keys == sorted(keys, key=lambda key: (key[0].encode("utf-8"), key[1]))
    run_id, _ = new_run(store)
    store.record_outcomes(run_id, batch, results=result_columns_of(run_id, batch))
    stored = store.load_results(run_id)
    assert sorted(stored["query_id"].unique().tolist()) == sorted(["q2", "é", "q10", "Z", "a"])
    assert stored.loc[stored["query_id"] == "é", "doc_id"].tolist() == ["é-d1", "é-d2"]


def test_running_run_of_a_dead_process_is_listed_and_persisted_as_interrupted(
    store: Store,
) -> None:
    run_id, _ = new_run(store)
    with store.session() as session:
        session.execute(update(Run).where(Run.id == run_id).values(pid=_dead_pid()))
    assert [r.status for r in store.list_runs()] == ["interrupted"]
    with store.session() as session:
        assert session.get(Run, run_id).status == "interrupted"  # type: ignore[union-attr]


def test_a_read_only_store_shows_a_dead_run_as_interrupted_and_writes_nothing(
    store: Store,
) -> None:
    run_id, _ = new_run(store)
    with store.session() as session:
        session.execute(update(Run).where(Run.id == run_id).values(pid=_dead_pid()))
    reader = Store.open(store.engine.url.render_as_string(hide_password=False), read_only=True)
    try:
        assert [r.status for r in reader.list_runs()] == ["interrupted"]
        shown = reader.run_info(run_id)
        assert shown.status == "interrupted" and "stopped" in (shown.error or "")
    finally:
        reader.close()
    with store.session() as session:
        assert session.get(Run, run_id).status == "running"  # type: ignore[union-attr]


def test_running_run_with_a_stale_heartbeat_is_interrupted(store: Store) -> None:
    run_id, _ = new_run(store)
    assert store.run_info(run_id).status == "running"  # our own, fresh process
    old = utcnow() - timedelta(minutes=10)
    with store.session() as session:
        session.execute(
            update(Run).where(Run.id == run_id).values(heartbeat_at=old, host="elsewhere")
        )
    info = store.run_info(run_id)
    assert info.status == "interrupted"
    assert info.error is not None and "no heartbeat" in info.error


def test_reopen_keeps_ok_outcomes_and_forgets_failed_ones(store: Store) -> None:
    run_id, _ = new_run(store)
    store.record_outcomes(
        run_id, [QueryOutcome("q0", "ok", [("d0", 1.0)]), QueryOutcome("q1", "failed", error="x")]
    )
    store.finish_run(run_id, "partial")
    reopened = store.reopen_run(run_id)
    assert reopened.status == "running"
    assert store.run_outcomes(run_id)["query_id"].tolist() == ["q0"]


def test_reopen_refuses_a_complete_run(store: Store) -> None:
    run_id, _ = new_run(store)
    store.finish_run(run_id, "complete")
    with pytest.raises(InputError, match="already complete"):
        store.reopen_run(run_id)


def test_run_references_resolve_latest_complete_and_baseline(store: Store) -> None:
    first, version_id = new_run(store)
    with pytest.raises(NotFoundError, match="no baseline"):  # no complete run yet
        store.resolve_run("engine@baseline")
    store.finish_run(first, "complete")
    second = store.create_run(
        store.config_version_id("engine"), version_id, depth=10, queries_total=10
    )
    store.finish_run(second, "partial")
    assert store.resolve_run(str(first)) == first
    assert store.resolve_run("engine@latest") == first  # a partial run is never "latest"
    # unpinned, the baseline is the first complete run, found without storing it
    assert store.resolve_run("engine@baseline") == first
    with store.session() as session:
        config = session.query(Config).one()
        test_set = session.query(TestSet).one()
        session.add(Baseline(config_id=config.id, test_set_id=test_set.id, run_id=second,
                             pinned=True, set_at=utcnow()))  # fmt: skip
    assert store.resolve_run("engine@baseline") == second
    with pytest.raises(NotFoundError):
        store.resolve_run("999")
    with pytest.raises(InputError, match="invalid run reference"):
        store.resolve_run("engine@yesterday")


def test_config_version_reference_names_that_versions_latest_complete_run(store: Store) -> None:
    first, version_id = new_run(store)  # engine v1
    store.finish_run(first, "complete")
    store.add_config("engine", "python", {"function": "json:dumps"})  # engine v2
    v2 = store.config_version_id("engine@2")
    second = store.create_run(v2, version_id, depth=10, queries_total=10)
    store.finish_run(second, "complete")
    third = store.create_run(v2, version_id, depth=10, queries_total=10)
    store.finish_run(third, "partial")
    newer_v1 = store.create_run(
        store.config_version_id("engine@1"), version_id, depth=10, queries_total=10
    )
    store.finish_run(newer_v1, "complete")
    assert store.resolve_run("engine@2") == second  # the partial run of v2 is skipped
    assert store.resolve_run("engine@1") == newer_v1
    # @latest is the current version's (v2's) latest complete run, not the newest run of any
    assert store.resolve_run("engine@latest") == second
    assert store.run_info("engine@2").config_version == 2
    with pytest.raises(NotFoundError, match=r"no version 3 \(has 1, 2\)"):
        store.resolve_run("engine@3")
    with pytest.raises(InputError, match="CONFIG@VERSION"):
        store.resolve_run("engine@v2")
    store.add_config("engine", "python", {"function": "json:load"})  # v3, never run
    with pytest.raises(NotFoundError, match="version 3 has no complete run"):
        store.resolve_run("engine@3")
    with pytest.raises(NotFoundError, match="no complete run of its current version 3"):
        store.resolve_run("engine@latest")


def test_retention_prunes_results_but_keeps_scores(store: Store) -> None:
    baseline, version_id = new_run(store)  # the first complete run: the baseline, kept
    store.finish_run(baseline, "complete", evaluation=_evaluation(version_id, 0.5))
    run_id, _ = new_run(store)
    store.record_outcomes(run_id, [QueryOutcome("q0", "ok", [("d0", 1.0), ("d1", 0.5)])])
    store.finish_run(run_id, "complete", evaluation=_evaluation(version_id, 0.25))
    assert store.prune_results(30) == []  # too recent
    pruned = store.prune_results(30, now=utcnow() + timedelta(days=31))
    assert pruned == [run_id]
    assert store.run_info(baseline).results_pruned_at is None
    info = store.run_info(run_id)
    assert info.results_pruned_at is not None
    assert info.means == {"P@1": 0.25}
    assert len(store.evaluation_scores(run_id)) == 10
    with pytest.raises(InputError, match="pruned"):
        store.load_results(run_id)


def test_import_config_version_adds_an_import_version_per_new_label(store: Store) -> None:
    first = store.import_config_version("anserini", "abc123")
    assert store.import_config_version("anserini", "abc123") == first
    second = store.import_config_version("anserini", "def456")
    assert second != first
    assert store.import_config_version("anserini") == second  # no label: the latest
    assert store.config_version("anserini@1").searcher == "import"


def test_results_of_some_queries_are_read_alone_or_taken_from_a_kept_run(db_url: str) -> None:
    """A comparison page reads the results of the twenty queries it shows, not of all: read
    through the key's prefix in groups of 500, or filtered from a run read whole already."""
    from ..compare.helpers import content, good_rankings, store_run

    queries = content(queries=620, relevant=2)
    with Store.open(db_url) as store:
        store.import_test_set("wide", queries)
        run_id = store_run(store, "engine", "wide", good_rankings(queries, hits=2))
    some = ["q611", "q07", "q300", "nowhere"]
    many = [f"q{n:02d}" for n in range(0, 620, 1) if n % 7]  # 531 queries: two groups
    with Store.open(db_url) as store:  # nothing kept: read alone
        alone = {len(q): store.load_results(run_id, queries=q) for q in (some, many)}
        whole = store.load_results(run_id)  # now kept
        kept = {len(q): store.load_results(run_id, queries=q) for q in (some, many)}
    for chosen in (some, many):
        mine = whole[whole["query_id"].isin(chosen)]
        expected = mine.sort_values(["query_id", "rank"]).reset_index(drop=True)
        assert sorted(set(expected["query_id"])) == sorted(set(chosen) - {"nowhere"})
        for got in (alone[len(chosen)], kept[len(chosen)]):
            by_key = got.sort_values(["query_id", "rank"]).reset_index(drop=True)
            assert by_key.astype(str).values.tolist() == expected.astype(str).values.tolist()
    assert alone[len(some)]["rank"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] * 3


def _behind_the_stores_back(db_url: str, run_id: int) -> None:
    """Delete the run's results through another store: only a kept frame still has them."""
    from evalplat.db.models import Result

    with Store.open(db_url) as other, other.session() as session:
        session.execute(delete(Result).where(Result.run_id == run_id))


@pytest.mark.parametrize("batch_after_read", [False, True])
def test_results_read_to_score_a_run_are_kept_for_its_comparison(
    db_url: str, batch_after_read: bool
) -> None:
    """The runner reads a running run's results whole to score it; finishing the run keeps
    them, so the comparison that follows does not read a million rows again, unless a batch
    was stored after that read."""
    ok = [QueryOutcome(f"q{n}", "ok", [(f"d{n}", 1.0)]) for n in range(9)]
    with Store.open(db_url) as store:
        run_id, version_id = new_run(store)
        store.record_outcomes(run_id, ok)
        scored = store.load_results(run_id)
        assert len(scored) == 9
        if batch_after_read:
            store.record_outcomes(run_id, [QueryOutcome("q9", "ok", [("d9", 1.0)])])
        store.finish_run(run_id, "complete", evaluation=_evaluation(version_id, 1.0))
        _behind_the_stores_back(db_url, run_id)
        after = store.load_results(run_id)
    if batch_after_read:
        assert after.empty  # read again, from the database
    else:
        assert after["doc_id"].tolist() == [f"d{n}" for n in range(9)]
