"""The metric model: declarations that scores, aggregates and verdicts follow.

Each test registers its measures in a registry of its own (a copy of the real one), so nothing
leaks into other tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from evalplat import evaluate
from evalplat.comparison import compare_scores
from evalplat.comparison.results import Gate
from evalplat.errors import InputError
from evalplat.metrics import names, registry
from evalplat.metrics.model import Measure, Param


@pytest.fixture(autouse=True)
def own_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(registry, "FAMILIES", dict(registry.FAMILIES))
    monkeypatch.setattr(registry, "_LOOKUP", dict(registry._LOOKUP))
    monkeypatch.setattr(registry, "PARAMS", dict(registry.PARAMS))
    monkeypatch.setattr(registry, "_PARAM_DEFAULTS", dict(registry._PARAM_DEFAULTS))
    yield


def latency(records: object, metric: registry.Metric) -> np.ndarray:
    return np.asarray(records.latency_ms, dtype=float)  # type: ignore[attr-defined]


def _latency_measures() -> None:
    registry.register(
        Measure(
            name="TestLatency", description="latency", formula="ms", cutoff="none",
            compute=f"{__name__}:latency", inputs=("records",), higher_is_better=False,
            bounded=False, value_unit="ms",
        )
    )  # fmt: skip
    registry.register(
        Measure(
            name="TestLatencyP", description="latency percentile", formula="ms", cutoff="none",
            compute=f"{__name__}:latency", params=("p",), inputs=("records",),
            higher_is_better=False, aggregate="percentile", test="bootstrap", bounded=False,
        )
    )  # fmt: skip


def _tables(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [f"q{i:03d}" for i in range(n)]
    qrels = pd.DataFrame({"query_id": ids, "doc_id": ["d"] * n, "grade": [1] * n})
    run = pd.DataFrame({"query_id": ids, "doc_id": ["d"] * n, "score": [1.0] * n})
    return qrels, run


def test_a_namespaced_measure_parses_round_trips_and_ignores_case() -> None:
    registry.register(
        Measure(
            name="online:Clicks", description="clicks", formula="c", cutoff="optional",
            compute=f"{__name__}:latency", inputs=("events",), unit="session",
        )
    )  # fmt: skip
    metric = names.parse("ONLINE:clicks@5")
    assert str(metric) == "online:Clicks@5"
    assert names.parse(str(metric)) == metric
    assert metric.spec.namespace == "online" and metric.spec.unit == "session"


def test_registering_a_clash_is_refused_and_the_same_declaration_twice_is_not() -> None:
    _latency_measures()
    _latency_measures()  # the same declarations again: a no-op
    with pytest.raises(InputError, match="already registered"):
        registry.register(Measure("ndcg", "x", "x", "gain:ndcg", "optional"))
    with pytest.raises(InputError, match="declared differently"):
        registry.register(
            Measure("Other", "x", "x", "gain:ndcg", "none", params=("p",)),
            params=(Param("p", "int", 95, "another p"),),
        )


def test_declarations_are_checked() -> None:
    with pytest.raises(InputError, match="unknown input"):
        Measure("Bad", "x", "x", "m:f", "none", inputs=("clicks",))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="needs the p parameter"):
        Measure("Bad", "x", "x", "m:f", "none", aggregate="percentile")
    with pytest.raises(InputError, match="ns: prefix"):
        Measure("Online:Bad", "x", "x", "m:f", "none")


def test_parameters_of_a_registered_measure_are_read_and_bounded() -> None:
    _latency_measures()
    assert str(names.parse("TestLatencyP(p=95)")) == "TestLatencyP(p=95)"
    assert str(names.parse("TestLatencyP(p=95.0)")) == "TestLatencyP(p=95)"
    assert names.parse("TestLatencyP").aggregate == "mean"  # no percentile: the mean
    assert names.parse("TestLatencyP").test == "paired"
    with pytest.raises(InputError, match="at most 100"):
        names.parse("TestLatencyP(p=120)")
    with pytest.raises(InputError, match="must be a number"):
        names.parse("TestLatencyP(p=high)")
    with pytest.raises(InputError, match="takes no parameter 'p'"):
        names.parse("TestLatency(p=95)")


def test_a_measure_without_its_input_is_refused_by_name() -> None:
    _latency_measures()
    qrels, run = _tables(3)
    with pytest.raises(InputError, match="TestLatency needs run records"):
        evaluate(qrels, run, ["TestLatency"])


def test_the_declared_aggregate_gives_the_run_figure() -> None:
    _latency_measures()
    qrels, run = _tables(5)
    records = pd.DataFrame({"query_id": qrels["query_id"], "latency_ms": [10, 20, 30, 40, 500]})
    result = evaluate(qrels, run, ["TestLatency", "TestLatencyP(p=80)"], records=records)
    assert result.means["TestLatency"] == pytest.approx(120.0)
    # the 80th percentile of 10, 20, 30, 40, 500 by nearest rank: rank ceil(0.8 * 5) = 4
    assert result.means["TestLatencyP(p=80)"] == 40.0


def test_verdicts_follow_the_declared_direction_and_test() -> None:
    _latency_measures()
    qrels, run = _tables(60)
    rng = np.random.default_rng(7)
    base = rng.uniform(50, 150, size=60)
    same = pd.DataFrame({"query_id": qrels["query_id"], "latency_ms": base})
    doubled = pd.DataFrame({"query_id": qrels["query_id"], "latency_ms": base * 2})
    names = ["TestLatency", "TestLatencyP(p=95)"]
    before = evaluate(qrels, run, names, records=same)
    after = evaluate(qrels, run, names, records=doubled)

    # operational measures are compared, not gated, unless a gate names them
    assert compare_scores(before.per_query, after.per_query).verdict == "unchanged"
    gates = [Gate(name) for name in names]
    unchanged = compare_scores(before.per_query, before.per_query, gates=gates)
    assert {m.metric: m.verdict for m in unchanged.metrics} == dict.fromkeys(names, "unchanged")
    assert all(m.p_value == 1.0 for m in unchanged.metrics)

    worse = compare_scores(before.per_query, after.per_query, gates=gates)
    rows = {m.metric: m for m in worse.metrics}
    assert rows["TestLatency"].test == "randomization"
    assert rows["TestLatencyP(p=95)"].test == "bootstrap"
    for name in names:
        assert rows[name].delta > 0 and not rows[name].higher_is_better
        assert rows[name].verdict == "regression"
        assert rows[name].ci_low is not None and rows[name].ci_low > 0
    assert worse.verdict == "regression"
    better = compare_scores(after.per_query, before.per_query, gates=gates)
    assert {m.verdict for m in better.metrics} == {"improvement"}
