"""The unpaired bootstrap over sessions that online verdicts use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalplat.comparison import Gate, compare_scores
from evalplat.comparison.sessions import bootstrap_two_sample


def _scores(values: list[float], prefix: str, metric: str = "online:CTR") -> pd.DataFrame:
    return pd.DataFrame(
        {"query_id": [f"{prefix}{i}" for i in range(len(values))], "metric": metric,
         "value": values}
    )  # fmt: skip


def test_same_values_in_other_sessions_give_p_1() -> None:
    values = [0.0, 1.0, 1.0, 0.5] * 10
    result = compare_scores(_scores(values, "a"), _scores(values[::-1], "b"))
    [ctr] = result.metrics
    assert (ctr.p_value, ctr.ci_low, ctr.ci_high, ctr.verdict) == (1.0, 0.0, 0.0, "unchanged")


def test_bootstrap_p_value_and_interval_of_a_clear_difference() -> None:
    rng = np.random.default_rng(1)
    a = (rng.random(400) < 0.6).astype(float)
    b = (rng.random(400) < 0.4).astype(float)
    p, (low, high) = bootstrap_two_sample(a, b, n=2000, seed=0)
    observed = b.mean() - a.mean()
    assert p == pytest.approx(1 / 2001)  # no null replicate reaches the observed difference
    assert low < observed < high < 0
    # the interval's width is about 2 * 1.96 standard errors of a difference of proportions
    se = np.sqrt(a.mean() * (1 - a.mean()) / 400 + b.mean() * (1 - b.mean()) / 400)
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_lower_is_better_session_measure_regresses_when_it_rises() -> None:
    a = [0.0] * 60 + [1.0] * 40
    b = [0.0] * 30 + [1.0] * 70
    result = compare_scores(_scores(a, "a", "online:Abandonment"),
                            _scores(b, "b", "online:Abandonment"))  # fmt: skip
    assert result.metric("online:Abandonment").verdict == "regression"


def test_too_few_sessions_are_shown_but_never_gated() -> None:
    result = compare_scores(
        _scores([1.0] * 10, "a"), _scores([0.0] * 10, "b"), gates=[Gate("online:CTR")]
    )
    [ctr] = result.metrics
    assert (ctr.delta, ctr.gated, ctr.p_value, ctr.test) == (-1.0, False, None, "insufficient")
    assert result.verdict == "unchanged"
