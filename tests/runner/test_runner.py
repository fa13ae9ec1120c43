"""The runner through the Python API and the CLI, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from evalplat.errors import InputError
from evalplat.running import runner
from evalplat.searchers import BackendUnavailableError, RetryPolicy
from evalplat.store import Store
from evalplat.testsets.content import load_testset

from .helpers import QUERY_IDS, es_params, search_server, small_content

FAST_RETRY = RetryPolicy(retries=2, backoff=0.01, max_backoff=0.05)
# nDCG@2 of every query: the server ranks grade 1 above grade 2 (trec_eval's linear gain)
NDCG_2_SWAPPED = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))


def _setup(store: Store, url: str, mode: str, **params: object) -> None:
    store.import_test_set("small", small_content())
    store.add_config("es", "http", es_params(url, mode, **params))


def test_shed_load_is_retried_and_the_run_completes(store: Store, tmp_path: Path) -> None:
    with search_server() as server:
        _setup(store, server.url, "flaky")
        settings = runner.RunSettings(depth=5, concurrency=3, retry=FAST_RETRY, cache_dir=tmp_path)
        info = runner.run(store, "es", "small", metrics=["P@1", "nDCG@2"], settings=settings)
        assert all(server.count(q) == 2 for q in QUERY_IDS)  # one 503, then an answer
    assert (info.status, info.queries_done, info.queries_failed) == ("complete", 10, 0)
    assert info.means["P@1"] == pytest.approx(1.0)
    assert info.means["nDCG@2"] == pytest.approx(NDCG_2_SWAPPED)
    outcomes = store.run_outcomes(info.id)
    assert set(outcomes["attempts"]) == {2}
    assert (outcomes["latency_ms"] > 0).all()
    results = store.load_results(info.id)
    assert results[results["query_id"] == "q4"]["doc_id"].tolist() == ["d5", "d4", "d6", "d7", "d8"]


def test_broken_backend_gives_a_partial_run_and_exit_3(
    db_url: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    with Store.open(db_url) as store, search_server() as server:
        # q3 never answers; the healthy queries get 2 s, a margin for a loaded machine.
        _setup(store, server.url, "broken", timeout=2.0, retries=1)
        result = cli("run", "es", "--testset", "small", "--db", db_url, "--json")
    assert result.exit_code == 3  # type: ignore[attr-defined]
    assert "3 of 10 queries failed" in result.stderr  # type: ignore[attr-defined]
    run = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert run["status"] == "partial"
    assert "nDCG@10" in run["means"]
    shown = cli("runs", "show", str(run["id"]), "--db", db_url, "--json")
    failures = {f["query_id"]: f for f in json.loads(shown.stdout)["failed_queries"]}  # type: ignore[attr-defined]
    assert sorted(failures) == ["q3", "q5", "q7"]
    assert "timed out" in failures["q3"]["error"]
    assert "not JSON" in failures["q5"]["error"]
    assert "503" in failures["q7"]["error"]
    assert failures["q7"]["attempts"] == 2  # retried once
    assert failures["q5"]["attempts"] == 1  # malformed JSON is not worth retrying


def test_unreachable_backend_fails_fast_and_marks_the_run_failed(
    store: Store, tmp_path: Path
) -> None:
    with search_server() as server:
        url = server.url  # the port is closed once the server is gone
    _setup(store, url, "ok", timeout=1.0)
    with pytest.raises(BackendUnavailableError, match="marked failed"):
        runner.run(store, "es", "small", settings=runner.RunSettings(cache_dir=tmp_path))
    [info] = store.list_runs()
    assert info.status == "failed"
    assert info.queries_done == 0


def test_rescore_uses_the_other_judgments_without_searching(store: Store, tmp_path: Path) -> None:
    with search_server() as server:
        _setup(store, server.url, "ok")
        settings = runner.RunSettings(depth=5, cache_dir=tmp_path)
        first = runner.run(store, "es", "small", metrics=["P@1"], settings=settings)
        requests = sum(server.count(q) for q in QUERY_IDS)
        # version 2: the documents the engine puts first are judged not relevant any more
        regraded = {(f"q{n}", f"d{n + 1}"): 0 for n in range(10)}
        store.import_test_set("small", small_content(regraded))
        rescored = runner.rescore(store, first.id, "small@2")
        assert sum(server.count(q) for q in QUERY_IDS) == requests
    assert first.means["P@1"] == pytest.approx(1.0)
    assert rescored.means["P@1"] == pytest.approx(0.0)
    assert rescored.scored_against_version == 2
    with pytest.raises(InputError, match="same test set"):
        store.import_test_set("other", small_content())
        runner.rescore(store, first.id, "other")


def test_import_run_orders_ties_by_doc_id_descending(
    db_url: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.import_test_set("small", small_content())
    run_file = tmp_path / "bm25.run"
    # q0: d0 (grade 2) and d1 (grade 1) tie; trec_eval puts d1 first whatever the rank column says
    run_file.write_text(
        "q0 Q0 d0 1 5.0 bm25\nq0 Q0 d1 2 5.0 bm25\nq0 Q0 d9 3 7.0 bm25\n"
        "q1 Q0 d1 1 2.0 bm25\nzz Q0 d1 1 2.0 bm25\n"
    )
    result = cli("import-run", str(run_file), "--config", "anserini", "--label", "v1",
                 "--testset", "small", "--metric", "P@2", "--db", db_url, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "1 query of bm25.run not in the test set" in result.stderr  # type: ignore[attr-defined]
    run = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert run["status"] == "complete" and run["trigger"] == "import"
    with Store.open(db_url) as store:
        results = store.load_results(run["id"])
        assert results[results["query_id"] == "q0"]["doc_id"].tolist() == ["d9", "d1", "d0"]
        assert store.run_info(run["id"]).queries_done == 10  # test set queries, run-only dropped
    # P@2: q0 has d9 (unjudged), d1 (relevant) = 0.5; q1 has d1 = 0.5; 8 queries without results
    assert run["means"]["P@2"] == pytest.approx((0.5 + 0.5) / 10)


def test_import_run_with_a_bad_line_writes_nothing(
    db_url: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.import_test_set("small", small_content())
    run_file = tmp_path / "bad.run"
    run_file.write_text("q0 Q0 d0 1 5.0 bm25\nq0 Q0 d1 2 high bm25\n")
    result = cli("import-run", str(run_file), "--config", "x", "--testset", "small", "--db", db_url)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert "bad.run line 2" in result.stderr  # type: ignore[attr-defined]
    with Store.open(db_url) as store:
        assert store.list_runs() == []
        assert store.list_configs() == []


def test_builtin_searcher_on_cranfield_lands_near_the_reference_ndcg(
    store: Store, tmp_path: Path, trec_eval_reference: Callable[..., dict[str, float]]
) -> None:
    folder = Path(__file__).resolve().parents[2] / "testsets" / "cranfield"
    content = load_testset(
        folder / "qrels.txt", queries=folder / "queries.tsv", docs=folder / "docs.jsonl"
    )
    store.import_test_set("cranfield", content)
    store.add_config("bm25", "builtin", {})
    settings = runner.RunSettings(depth=100, concurrency=2, cache_dir=tmp_path)
    info = runner.run(store, "bm25", "cranfield", metrics=["nDCG@10"], settings=settings)
    assert info.status == "complete"
    assert info.queries_done == 225
    # Regression pin: evalplat's own figure when the searcher was written, not a reference.
    assert info.means["nDCG@10"] == pytest.approx(0.36, abs=0.015)
    # The stored run scored independently by trec_eval's code agrees to four decimals.
    theirs = trec_eval_reference(content.judgments, store.load_results(info.id), "nDCG@10")
    assert len(theirs) == 225
    assert round(info.means["nDCG@10"], 4) == round(sum(theirs.values()) / len(theirs), 4)
    stored = store.evaluation_scores(info.id)
    assert {q: round(v, 4) for q, v in zip(stored["query_id"], stored["value"], strict=True)} == {
        q: round(v, 4) for q, v in theirs.items()
    }


def test_runs_list_filters_by_config_and_names_unknown_ones(
    db_url: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    run_file = tmp_path / "a.run"
    run_file.write_text("q0 Q0 d0 1 5.0 a\n")
    with Store.open(db_url) as store:
        store.import_test_set("small", small_content())
    for config in ("alpha", "beta"):
        imported = cli("import-run", str(run_file), "--config", config, "--testset", "small",
                       "--db", db_url)  # fmt: skip
        assert imported.exit_code == 0  # type: ignore[attr-defined]
    listed = json.loads(cli("runs", "list", "beta", "--db", db_url, "--json").stdout)  # type: ignore[attr-defined]
    assert [(r["config"], r["status"]) for r in listed] == [("beta", "complete")]
    table = cli("runs", "list", "--db", db_url)
    assert "alpha@1" in table.stdout and "beta@1" in table.stdout  # type: ignore[attr-defined]
    shown = cli("runs", "show", "alpha@latest", "--db", db_url)
    assert "status             complete" in shown.stdout  # type: ignore[attr-defined]
    missing = cli("runs", "list", "gamma", "--db", db_url)
    assert missing.exit_code == 2  # type: ignore[attr-defined]
    assert "no config named 'gamma'" in missing.stderr  # type: ignore[attr-defined]


def test_runs_show_prints_the_zero_result_rate_and_flags_a_mostly_empty_run(
    db_url: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    with Store.open(db_url) as store:
        store.import_test_set("small", small_content())
    sparse, full = tmp_path / "sparse.run", tmp_path / "full.run"
    sparse.write_text("q0 Q0 d0 1 5.0 a\nq1 Q0 d1 1 5.0 a\n")  # 8 of 10 queries: nothing
    full.write_text("".join(f"q{n} Q0 d{n} 1 5.0 a\n" for n in range(10)))
    flagged = cli("import-run", str(sparse), "--config", "and-everything", "--testset", "small",
                  "--db", db_url)  # fmt: skip
    assert flagged.exit_code == 0  # type: ignore[attr-defined]
    assert "80% of the queries (8 of 10) returned no result" in flagged.stderr  # type: ignore[attr-defined]
    shown = cli("runs", "show", "and-everything@latest", "--db", db_url)
    assert "zero results       80.0% (8 of 10 queries)" in shown.stdout  # type: ignore[attr-defined]
    assert "warning: run 1: 80% of the queries" in shown.stderr  # type: ignore[attr-defined]
    data = json.loads(cli("runs", "show", "1", "--json", "--db", db_url).stdout)  # type: ignore[attr-defined]
    assert (data["zero_result_rate"], data["zero_results"], data["mostly_empty"]) == (0.8, 8, True)
    cli("import-run", str(full), "--config", "or-words", "--testset", "small", "--db", db_url)
    fine = cli("runs", "show", "or-words@latest", "--db", db_url)
    assert "zero results       0.0% (0 of 10 queries)" in fine.stdout  # type: ignore[attr-defined]
    assert "warning" not in fine.stderr  # type: ignore[attr-defined]


def test_an_intent_aware_metric_is_refused_before_anything_is_written(store: Store) -> None:
    """Stored test sets keep one grade per (query, doc), no subtopics: a run cannot score
    alpha_nDCG, and says where it can be scored."""
    _setup(store, "http://127.0.0.1:9", "ok")
    with pytest.raises(
        InputError,
        match=r"alpha_nDCG@20 reads judgments per subtopic.*"
        r"evalplat evaluate --qrels FILE --run RUN -m alpha_nDCG@20",
    ):
        runner.run(store, "es", "small", metrics=["nDCG@10", "alpha_nDCG@20"])
    assert store.list_runs() == []
