"""Comparisons, baselines, history and unjudged export through the store, on both databases."""

from __future__ import annotations

import random

import pytest

from evalplat.comparison.verdicts import CompareOptions, Gate
from evalplat.errors import InputError, OperationalError
from evalplat.store import Store

from .helpers import content, good_rankings, store_run

FAST = CompareOptions(permutations=2000, bootstrap=500)


@pytest.fixture
def small(store: Store) -> Store:
    store.import_test_set("small", content())
    return store


def _worse(rankings: dict[str, list[str]], every: int = 2) -> dict[str, list[str]]:
    """Every ``every``-th query loses its relevant documents to non-relevant ones."""
    worse = {}
    for i, (q, docs) in enumerate(sorted(rankings.items())):
        worse[q] = docs if i % every else [d for d in docs if "-n" in d] + [f"{q}-d5"]
    return worse


def test_runs_differing_only_in_order_of_unjudged_or_tied_documents_never_regress(
    small: Store,
) -> None:
    base = good_rankings(content())
    base_id = store_run(small, "engine", "small", base)
    for seed in range(6):
        rng = random.Random(seed)
        shuffled = {}
        for q, docs in base.items():
            grade2 = [d for d in docs if d in (f"{q}-d0", f"{q}-d1", f"{q}-d2")]
            grade1 = [d for d in docs if d == f"{q}-d3"]
            unjudged = [f"{q}-u{i}" for i in range(6)]
            rng.shuffle(grade2)
            rng.shuffle(unjudged)
            # tied documents (same grade) reordered, unjudged tail reordered
            shuffled[q] = grade2 + grade1 + unjudged
        reference = {q: docs[:4] + [f"{q}-u{i}" for i in range(6)] for q, docs in base.items()}
        ref_id = store_run(small, "engine", "small", reference, label=f"ref{seed}")
        cand_id = store_run(small, "engine", "small", shuffled, label=f"cand{seed}")
        result = small.compare_runs(ref_id, cand_id, options=CompareOptions(seed=seed))
        assert result.verdict == "unchanged"
        assert all(m.p_value == 1.0 and m.verdict == "unchanged" for m in result.metrics)
    same = small.compare_runs(base_id, store_run(small, "engine", "small", base, label="again"))
    assert (
        same.verdict == "unchanged"
        and same.overlap is not None
        and same.overlap.rbo == pytest.approx(1.0)
    )


def test_a_worse_run_is_a_stored_regression_that_loads_back(small: Store) -> None:
    base = good_rankings(content())
    base_id = store_run(small, "engine", "small", base)
    cand_id = store_run(small, "engine", "small", _worse(base), label="worse")
    result = small.compare_runs(base_id, cand_id, gates=[Gate("nDCG@10", max_drop=0.02)],
                                options=FAST)  # fmt: skip
    assert result.verdict == "regression" and result.id is not None
    m = result.metric("nDCG@10")
    assert m.gated and m.delta < -0.02 and m.p_corrected is not None and m.p_corrected < 0.05
    assert not result.metric("P@5").gated
    assert result.movers["nDCG@10"].worse[0].delta < 0
    loaded = small.load_comparison(result.id)
    assert loaded.metrics == result.metrics
    assert loaded.verdict == "regression" and loaded.overlap == result.overlap
    assert loaded.per_query is not None and len(loaded.per_query) == 40 * 4


def test_runs_scored_on_different_test_set_versions_are_refused_with_rescore_advice(
    small: Store,
) -> None:
    first = store_run(small, "engine", "small", good_rankings(content()))
    small.import_test_set("small", content(relevant=5))  # version 2
    second = store_run(small, "engine", "small", good_rankings(content()), label="v2")
    with pytest.raises(InputError, match=r"small@1 .* small@2.*evalplat rescore"):
        small.compare_runs(first, second)


def test_partial_runs_are_refused_unless_allowed(small: Store) -> None:
    base = store_run(small, "engine", "small", good_rankings(content()))
    partial = store_run(small, "engine", "small", good_rankings(content()), label="p",
                        status="partial")  # fmt: skip
    with pytest.raises(OperationalError, match=r"partial.*--allow-partial"):
        small.compare_runs(base, partial)
    allowed = small.compare_runs(
        base, partial, options=CompareOptions(allow_partial=True, permutations=500, bootstrap=100)
    )
    assert allowed.queries == 40


def test_first_complete_run_is_the_baseline_until_one_is_pinned(small: Store) -> None:
    partial = store_run(small, "engine", "small", good_rankings(content()), status="partial")
    first = store_run(small, "engine", "small", good_rankings(content()), label="a")
    second = store_run(small, "engine", "small", _worse(good_rankings(content())), label="b")
    assert partial < first < second
    baseline = small.baseline("engine", "small")
    assert baseline is not None and baseline.run_id == first and not baseline.pinned
    assert small.resolve_run("engine@baseline") == first
    pinned = small.set_baseline("engine", str(second))
    assert pinned.pinned and small.resolve_run("engine@baseline") == second
    with pytest.raises(InputError, match="only a complete run"):
        small.set_baseline("engine", str(partial))


def test_history_lists_runs_with_means_and_verdicts_against_the_baseline(small: Store) -> None:
    first = store_run(small, "engine", "small", good_rankings(content()))
    worse = store_run(small, "engine", "small", _worse(good_rankings(content())), label="b")
    comparison = small.compare_runs("engine@baseline", worse, options=FAST)
    points = small.history("engine")
    assert [p.run_id for p in points] == [first, worse]
    assert points[0].is_baseline and points[0].verdict is None
    assert points[1].verdict == comparison.verdict == "regression"
    assert points[1].means["nDCG@10"] < points[0].means["nDCG@10"]


def test_unjudged_lists_top_k_documents_without_judgments(small: Store) -> None:
    rankings = {q: [f"{q}-d0", f"{q}-x1", f"{q}-n0", f"{q}-x2"] for q in ("q00", "q01")}
    run_id = store_run(small, "engine", "small", rankings)
    frame = small.unjudged(run_id, k=3)
    assert frame[["query_id", "doc_id", "rank"]].values.tolist() == [
        ["q00", "q00-x1", 2],
        ["q01", "q01-x1", 2],
    ]
    assert frame["query"].tolist() == ["topic 0", "topic 1"]


def test_the_judgments_are_coded_once_per_version_and_again_for_a_new_one(
    small: Store, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A night compares every config on one version: its judgments are coded once; a version
    with more judgments is coded anew, and its bound is the one a fresh store computes."""
    import evalplat.comparison.coded as coded

    calls: list[int] = []
    real = coded.judged_ids
    monkeypatch.setattr(coded, "judged_ids", lambda frame: calls.append(len(frame)) or real(frame))
    base = good_rankings(content())
    unjudged = {q: [*docs[:3], f"{q}-u1", f"{q}-d5", *docs[3:]] for q, docs in base.items()}
    runs = [store_run(small, "engine", "small", r, label=f"r{i}") for i, r in
            enumerate((base, _worse(base), unjudged))]  # fmt: skip
    small.compare_runs(runs[0], runs[1], options=FAST)
    small.compare_runs(runs[0], runs[2], options=FAST)
    assert calls == [40 * 16]

    small.import_test_set("small", content(relevant=8))
    grown = [store_run(small, "engine", "small", r, label=f"g{i}") for i, r in
             enumerate((base, unjudged))]  # fmt: skip
    kept = small.compare_runs(grown[0], grown[1], options=FAST)
    assert calls == [40 * 16, 40 * 18]
    fresh = Store.open(db_url)
    try:
        again = fresh.compare_runs(grown[0], grown[1], options=FAST)
    finally:
        fresh.close()
    assert [m.bound_dict() for m in kept.metrics] == [m.bound_dict() for m in again.metrics]
    assert any(m.bound_dict().get("unjudged") for m in kept.metrics)
