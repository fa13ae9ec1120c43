"""Agreement of offline metrics with online KPIs: a hand-computed example of five versions, and
the exact permutation test of tau that decides how many versions say anything."""

from __future__ import annotations

from math import factorial

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalplat.comparison.agreement import (
    MIN_VERSIONS,
    OFFLINE_COLUMNS,
    ONLINE_COLUMNS,
    agreement,
    pooled_kpis,
    resampled_coefficients,
    tau_permutation_test,
)

# Offline nDCG@10 rises A < B < C < D < E. Online CTR (pooled) is A .20, B .25, C .24, D .30,
# E .35: ranks 1 2 3 4 5 against 1 3 2 4 5. Of the 10 version pairs only B-C is discordant, so
# tau-b = (9 - 1) / 10 = 0.8; the rank differences are 0 1 1 0 0, so rho = 1 - 6*2 / (5*24) = 0.9.
# Exact test: of the 5! = 120 orderings of the CTRs, those with |tau| >= 0.8 have at most one
# pair out of order either way: 1 + 4 orderings each side, p = 10/120.
# D's CTR pools two days by sessions: (.27*300 + .39*100) / 400 = .30.
# A/B pairs (same day): A-B day 1 (both up: agree), B-C day 2 (offline up, CTR down:
# disagree), C-D day 3 (.24 -> .27, agree): 2 of 3; E ran alone on day 5.
OFFLINE = pd.DataFrame(
    [("A", "nDCG@10", 0.3), ("B", "nDCG@10", 0.4), ("C", "nDCG@10", 0.5), ("D", "nDCG@10", 0.6),
     ("E", "nDCG@10", 0.7)],
    columns=OFFLINE_COLUMNS,
)  # fmt: skip
CTR = [("A", "d1", 0.20, 100), ("B", "d1", 0.25, 100), ("B", "d2", 0.25, 100),
       ("C", "d2", 0.24, 100), ("C", "d3", 0.24, 100), ("D", "d3", 0.27, 300),
       ("D", "d4", 0.39, 100), ("E", "d5", 0.35, 100)]  # fmt: skip


def _online(kpi: str, flip: bool = False) -> pd.DataFrame:
    rows = [(v, day, kpi, 1 - value if flip else value, n) for v, day, value, n in CTR]
    return pd.DataFrame(rows, columns=ONLINE_COLUMNS)


def test_tau_its_exact_p_rho_and_sign_agreement_match_the_hand_computed_example() -> None:
    pooled = pooled_kpis(_online("online:CTR")).set_index("version")["value"]
    assert pooled.to_dict() == pytest.approx(
        {"A": 0.20, "B": 0.25, "C": 0.24, "D": 0.30, "E": 0.35}
    )
    [row] = agreement(OFFLINE, _online("online:CTR"), seed=4)
    assert (row.metric, row.kpi, row.versions, row.status) == ("nDCG@10", "online:CTR", 5, "ok")
    assert row.tau == pytest.approx(0.8)
    assert row.tau_p == pytest.approx(10 / 120)
    assert (row.permutations, row.exact) == (120, True)
    assert row.rho == pytest.approx(0.9)
    assert (row.pairs, row.agreeing, row.ties) == (3, 2, 0)
    assert row.sign_agreement == pytest.approx(2 / 3)
    x, y = OFFLINE["value"].to_numpy(), pooled.loc[list("ABCDE")].to_numpy()
    assert row.tau_p == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue)


def test_a_lower_is_better_kpi_is_flipped_so_agreement_means_both_better() -> None:
    # abandonment = 1 - CTR: falling abandonment is the online win that rising nDCG predicts
    [ctr] = agreement(OFFLINE, _online("online:CTR"), seed=4)
    [abandonment] = agreement(OFFLINE, _online("online:Abandonment", flip=True), seed=4)
    assert abandonment.tau == pytest.approx(0.8) and abandonment.rho == pytest.approx(0.9)
    assert abandonment.sign_agreement == pytest.approx(2 / 3)
    assert abandonment.tau_p == pytest.approx(ctr.tau_p)


def test_five_versions_is_the_least_at_which_perfect_agreement_can_beat_chance() -> None:
    # the smallest exact two-sided p of tau over n untied versions is 2 / n!
    for n, smallest in ((3, 2 / 6), (4, 2 / 24), (5, 2 / 120), (6, 2 / 720)):
        x = np.arange(n, dtype=float)
        p_value, orderings, exact = tau_permutation_test(x, x * 2)
        assert p_value == pytest.approx(smallest) and (orderings, exact) == (factorial(n), True)
    assert MIN_VERSIONS == 5  # 2/24 = 0.083 is not below 0.05; 2/120 = 0.017 is


def test_under_five_versions_a_pair_has_no_figure_only_too_few_versions() -> None:
    four = OFFLINE[OFFLINE["version"] != "E"]
    [row] = agreement(four, _online("online:CTR"))
    assert (row.versions, row.status, row.label) == (4, "too few versions", "too few versions (4)")
    assert row.tau is row.rho is row.tau_p is row.sign_agreement is None
    assert row.to_dict()["label"] == "too few versions (4)"


def test_above_eight_versions_the_test_draws_seeded_random_orderings() -> None:
    x = np.arange(10, dtype=float)
    y = np.array([0, 2, 1, 3, 5, 4, 6, 9, 7, 8], dtype=float)
    p_value, orderings, exact = tau_permutation_test(x, y, samples=2000, seed=3)
    assert (orderings, exact) == (2000, False)
    assert p_value == tau_permutation_test(x, y, samples=2000, seed=3)[0]  # seeded
    assert p_value == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue, abs=0.002)
    assert p_value >= 1 / 2001  # the observed ordering counts: never 0


def test_only_the_chosen_pairs_are_computed_in_their_order() -> None:
    online = pd.concat([_online("online:CTR"), _online("online:Abandonment", flip=True)])
    offline = pd.concat([OFFLINE, OFFLINE.assign(metric="AP")])
    rows = agreement(
        offline, online, pairs=[("AP", "online:Abandonment"), ("nDCG@10", "online:CTR")]
    )
    assert [(r.metric, r.kpi) for r in rows] == [
        ("AP", "online:Abandonment"),
        ("nDCG@10", "online:CTR"),
    ]
    assert len(agreement(offline, online)) == 4  # without pairs: every combination


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
