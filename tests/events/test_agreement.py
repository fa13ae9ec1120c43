"""Agreement of offline metrics with online KPIs: a hand-computed example of four versions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalplat.comparison.agreement import (
    OFFLINE_COLUMNS,
    ONLINE_COLUMNS,
    agreement,
    pooled_kpis,
    resampled_coefficients,
)

# Offline nDCG@10 rises A < B < C < D. Online CTR (pooled) is A .20, B .25, C .24, D .30:
# ranks 1 2 3 4 against 1 3 2 4. Of the 6 version pairs only B-C is discordant, so
# tau-b = (5 - 1) / 6 = 2/3; the rank differences are 0 1 1 0, so rho = 1 - 6*2 / (4*15) = 0.8.
# D's CTR pools two days by sessions: (.27*300 + .39*100) / 400 = .30.
# A/B pairs (same day): A-B day 1 (both up: agree), B-C day 2 (offline up, CTR down:
# disagree), C-D day 3 (.24 -> .27, agree): 2 of 3.
OFFLINE = pd.DataFrame(
    [("A", "nDCG@10", 0.3), ("B", "nDCG@10", 0.4), ("C", "nDCG@10", 0.5), ("D", "nDCG@10", 0.6)],
    columns=OFFLINE_COLUMNS,
)
CTR = [("A", "d1", 0.20, 100), ("B", "d1", 0.25, 100), ("B", "d2", 0.25, 100),
       ("C", "d2", 0.24, 100), ("C", "d3", 0.24, 100), ("D", "d3", 0.27, 300),
       ("D", "d4", 0.39, 100)]  # fmt: skip


def _online(kpi: str, flip: bool = False) -> pd.DataFrame:
    rows = [(v, day, kpi, 1 - value if flip else value, n) for v, day, value, n in CTR]
    return pd.DataFrame(rows, columns=ONLINE_COLUMNS)


def test_tau_rho_and_sign_agreement_match_the_hand_computed_example() -> None:
    pooled = pooled_kpis(_online("online:CTR")).set_index("version")["value"]
    assert pooled.to_dict() == pytest.approx({"A": 0.20, "B": 0.25, "C": 0.24, "D": 0.30})
    [row] = agreement(OFFLINE, _online("online:CTR"), seed=4)
    assert (row.metric, row.kpi, row.versions, row.status) == ("nDCG@10", "online:CTR", 4, "ok")
    assert row.tau == pytest.approx(2 / 3)
    assert row.rho == pytest.approx(0.8)
    assert (row.pairs, row.agreeing, row.ties) == (3, 2, 0)
    assert row.sign_agreement == pytest.approx(2 / 3)
    assert row.tau_ci is not None and row.rho_ci is not None
    assert -1 <= row.tau_ci[0] < row.tau < row.tau_ci[1] <= 1
    assert -1 <= row.rho_ci[0] < row.rho <= row.rho_ci[1] <= 1
    again = agreement(OFFLINE, _online("online:CTR"), seed=4)[0]
    assert (again.tau_ci, again.rho_ci) == (row.tau_ci, row.rho_ci)  # seeded


def test_a_lower_is_better_kpi_is_flipped_so_agreement_means_both_better() -> None:
    # abandonment = 1 - CTR: falling abandonment is the online win that rising nDCG predicts
    [ctr] = agreement(OFFLINE, _online("online:CTR"), seed=4)
    [abandonment] = agreement(OFFLINE, _online("online:Abandonment", flip=True), seed=4)
    assert abandonment.tau == pytest.approx(2 / 3) and abandonment.rho == pytest.approx(0.8)
    assert abandonment.sign_agreement == pytest.approx(2 / 3)
    assert abandonment.tau_ci == pytest.approx(ctr.tau_ci)


def test_fewer_than_three_versions_is_insufficient_data() -> None:
    two = OFFLINE[OFFLINE["version"].isin(["A", "B"])]
    [row] = agreement(two, _online("online:CTR"))
    assert (row.versions, row.status) == (2, "insufficient data")
    assert row.tau is row.rho is row.tau_ci is row.sign_agreement is None
    assert row.to_dict()["status"] == "insufficient data"


def test_ties_leave_the_share_and_a_constant_side_has_no_coefficient() -> None:
    flat = OFFLINE.assign(value=0.5)
    [row] = agreement(flat, _online("online:CTR"))
    assert row.status == "no variation" and row.tau is None
    assert (row.pairs, row.ties) == (3, 3)


def test_the_vectorised_resample_coefficients_are_scipys() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, size=(200, 6)).astype(float)
    y = rng.integers(0, 4, size=(200, 6)).astype(float)
    tau, rho = resampled_coefficients(x, y)
    for i in range(len(x)):
        if np.ptp(x[i]) == 0 or np.ptp(y[i]) == 0:
            assert np.isnan(tau[i]) and np.isnan(rho[i])
            continue
        assert tau[i] == pytest.approx(stats.kendalltau(x[i], y[i]).statistic)
        assert rho[i] == pytest.approx(stats.spearmanr(x[i], y[i]).statistic)
