"""The change of each mean between two runs without a comparison (what a night logs since the
previous night): the deltas a comparison reports, to the last bit, and nothing stored."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalplat.comparison.deltas import mean_deltas
from evalplat.comparison.verdicts import CompareOptions, compare_scores
from evalplat.errors import InputError
from evalplat.store import Store

from .helpers import content, good_rankings, store_run

# a mean, a sum, a percentile of a measure with unknown values (a failed query has no latency)
METRICS = ["nDCG@10", "NumRet", "Latency", "Latency(p=95)"]
FAST = CompareOptions(permutations=200, bootstrap=100)


def _scores(values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"query_id": f"q{i}", "metric": metric, "value": value}
            for metric, column in values.items()
            for i, value in enumerate(column)
        ]
    )


def _side(draw: st.DrawFn, n: int) -> pd.DataFrame:
    unit = st.floats(0, 1, allow_nan=False)
    latency = st.one_of(st.just(math.nan), st.floats(1, 500, allow_nan=False))
    return _scores(
        {
            "nDCG@10": draw(st.lists(unit, min_size=n, max_size=n)),
            "NumRet": [
                float(v) for v in draw(st.lists(st.integers(0, 100), min_size=n, max_size=n))
            ],
            "Latency": draw(st.lists(latency, min_size=n, max_size=n)),
            "Latency(p=95)": draw(st.lists(latency, min_size=n, max_size=n)),
        }
    )


@st.composite
def pairs(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float] | None]:
    n = draw(st.integers(2, 12))
    weights = draw(
        st.one_of(
            st.none(),
            st.dictionaries(
                st.sampled_from([f"q{i}" for i in range(n)]), st.floats(0.1, 5), min_size=1
            ),
        )
    )
    return _side(draw, n), _side(draw, n), weights


@settings(max_examples=60, deadline=None)
@given(pairs())
def test_deltas_are_the_comparisons_deltas(
    pair: tuple[pd.DataFrame, pd.DataFrame, dict[str, float] | None],
) -> None:
    baseline, candidate, weights = pair
    deltas = mean_deltas(baseline, candidate, METRICS, weights)
    compared = compare_scores(baseline, candidate, METRICS, options=FAST, weights=weights)
    expected = {m.metric: m.delta for m in compared.metrics}
    assert list(deltas) == list(expected)
    for name, delta in expected.items():
        assert deltas[name] == delta or (math.isnan(delta) and math.isnan(deltas[name])), name


def test_deltas_refuse_what_a_comparison_refuses() -> None:
    baseline = _scores({"nDCG@10": [0.1, 0.2, 0.3]})
    fewer = _scores({"nDCG@10": [0.1, 0.2]})
    with pytest.raises(InputError, match="different topics"):
        mean_deltas(baseline, fewer, ["nDCG@10"])
    with pytest.raises(InputError, match="no scores for P@5"):
        mean_deltas(baseline, baseline, ["P@5"])
    assert mean_deltas(baseline, baseline) == {"nDCG@10": 0.0}
    assert np.isclose(mean_deltas(baseline, _scores({"nDCG@10": [0.4, 0.2, 0.3]}))["nDCG@10"], 0.1)


def test_stored_runs_give_the_deltas_and_store_no_comparison(store: Store) -> None:
    store.import_test_set("small", content())
    rankings = good_rankings(content())
    worse = {q: docs[::-1] if i % 3 == 0 else docs for i, (q, docs) in enumerate(rankings.items())}
    first = store_run(store, "engine", "small", rankings)
    second = store_run(store, "engine", "small", worse, label="worse")
    metrics = ["nDCG@10", "P@5"]
    deltas = store.mean_deltas(first, second, metrics=metrics)
    assert store.recent_comparisons("small", 10) == []
    compared = store.compare_runs(first, second, metrics=metrics, options=FAST)
    assert deltas == {m.metric: m.delta for m in compared.metrics}
    assert deltas["nDCG@10"] < 0

    store.import_test_set("small", content(relevant=5))  # version 2
    third = store_run(store, "engine", "small", rankings, label="v2")
    with pytest.raises(InputError, match=r"small@1 .* small@2.*evalplat rescore"):
        store.mean_deltas(first, third, metrics=metrics)
    with pytest.raises(InputError, match="rescore"):
        store.mean_deltas(first, second, metrics=["nDCG@10", "RR"])
