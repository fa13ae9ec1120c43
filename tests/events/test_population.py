"""Simulated users and queries that differ: frequencies, propensities, noise, and both tests."""

from __future__ import annotations

import numpy as np
import pytest

from evalplat.errors import InputError
from evalplat.events.population import Population
from evalplat.events.synthetic import (
    CascadeModel,
    attraction_rows,
    interleaved_outcomes,
    interleaved_queries,
    session_ctr,
)


def test_queries_come_head_and_tail_and_users_differ_around_a_mean_of_one() -> None:
    population = Population(seed=3)
    session, query, factor = population.searches(20_000, 50, 2, np.random.default_rng(1))
    chance, difficulty = population.query_weights(50)
    shares = np.bincount(query, minlength=50) / query.size
    head = int(np.argmax(chance))
    # the most frequent query takes 1 / H(50) of the searches (Zipf, exponent 1)
    assert chance[head] == pytest.approx(1 / sum(1 / r for r in range(1, 51)))
    assert shares[head] == pytest.approx(chance[head], abs=0.01)
    assert shares[head] > 20 * shares[int(np.argmin(chance))]
    propensity = factor / difficulty[query]
    per_user = np.bincount(session, weights=propensity) / np.bincount(session)
    assert per_user.mean() == pytest.approx(1.0, abs=0.03)
    assert 0.15 < float((per_user < 0.2).mean()) < 0.26  # some users rarely click
    again = population.searches(20_000, 50, 2, np.random.default_rng(1))
    assert np.array_equal(again[1], query) and np.array_equal(again[2], factor)


def test_attraction_has_a_noise_floor_where_a_hit_is_shown_and_a_ceiling_of_one() -> None:
    rows = np.array([[0.8, 0.04, 0.0], [0.8, 0.04, 0.0]])
    shown = Population(noise=0.1).attraction(rows, np.array([0.0, 3.0]))
    assert shown[0].tolist() == pytest.approx([0.1, 0.1, 0.0])
    assert shown[1].tolist() == pytest.approx([1.0, 0.1 + 0.9 * 0.12, 0.0])


@pytest.mark.parametrize("options", [{"user_a": 0}, {"user_b": -1}, {"zipf": -0.5}, {"noise": 1.5}])
def test_impossible_populations_are_refused(options: dict[str, float]) -> None:
    with pytest.raises(InputError):
        Population(**options)


def test_both_tests_see_the_better_ranker_and_an_a_a_test_sees_none() -> None:
    model = CascadeModel()
    grades = [{f"d{q}-{i}": 3 if i < 3 else 0 for i in range(10)} for q in range(30)]
    good = [[f"d{q}-{i}" for i in range(10)] for q in range(30)]
    worse = [[*ranking[3:], *ranking[:3]] for ranking in good]  # relevant ones pushed down
    population = Population(seed=1)
    ctr_worse = session_ctr(attraction_rows(worse, grades, model, 10), 20_000, model,
                            np.random.default_rng(2), population=population)  # fmt: skip
    ctr_good = session_ctr(attraction_rows(good, grades, model, 10), 20_000, model,
                           np.random.default_rng(3), population=population)  # fmt: skip
    assert ctr_good.mean() > ctr_worse.mean() + 0.02
    plain = session_ctr(attraction_rows(good, grades, model, 10), 20_000, model,
                        np.random.default_rng(3))  # fmt: skip
    assert ctr_good.var() > plain.var()  # users who differ spread the per-session CTR
    tests = interleaved_queries(worse, good, grades, model, depth=10)
    won = interleaved_outcomes(tests, 4_000, model, np.random.default_rng(4),
                               population=population)  # fmt: skip
    assert (won == -1).sum() > 2 * (won == 1).sum()  # B, the good ranker, wins
    same = interleaved_queries(good, good, grades, model, depth=10)
    even = interleaved_outcomes(same, 4_000, model, np.random.default_rng(5),
                                population=population)  # fmt: skip
    wins, losses = int((even == 1).sum()), int((even == -1).sum())
    assert abs(wins - losses) < 4 * np.sqrt(wins + losses)


def test_published_sessions_have_the_logged_length_and_are_seeded() -> None:
    population = Population.published(seed=2)
    counts = population.session_lengths(200_000, 2, np.random.default_rng(5))
    assert float((counts == 1).mean()) == pytest.approx(0.77, abs=0.005)
    assert float(counts.mean()) == pytest.approx(2.02, abs=0.03)
    assert counts.max() > 2  # not bounded by max_searches
    again = Population.published(seed=2).session_lengths(200_000, 2, np.random.default_rng(5))
    assert np.array_equal(again, counts)
    session, query, factor = population.searches(5_000, 40, 2, np.random.default_rng(6))
    lengths = population.session_lengths(5_000, 2, np.random.default_rng(6))
    assert np.array_equal(np.bincount(session, minlength=5_000), lengths)
    twice = population.searches(5_000, 40, 2, np.random.default_rng(6))
    assert np.array_equal(twice[1], query) and np.array_equal(twice[2], factor)


def test_without_published_lengths_sessions_run_one_to_max_searches() -> None:
    counts = Population(seed=2).session_lengths(10_000, 3, np.random.default_rng(5))
    assert set(np.unique(counts).tolist()) == {1, 2, 3}


@pytest.mark.parametrize(
    "options",
    [
        {"single_search": 0.77},
        {"mean_searches": 2.0},
        {"single_search": 1.0, "mean_searches": 2.0},
        {"single_search": -0.1, "mean_searches": 2.0},
        {"single_search": 0.5, "mean_searches": 1.4},
        {"single_search": 0.5, "mean_searches": float("inf")},
        {"single_search": float("nan"), "mean_searches": 2.0},
    ],
)
def test_impossible_session_lengths_are_refused(options: dict[str, float]) -> None:
    with pytest.raises(InputError):
        Population(**options)


def test_published_model_clicks_more_and_more_often_twice_than_the_demo() -> None:
    from evalplat.demo.events import DEMO_MODEL
    from evalplat.events.synthetic import PUBLISHED_MODEL, click_profile

    grades = [{f"d{q}-{i}": 2 if i in (1, 4) else 0 for i in range(10)} for q in range(30)]
    rankings = [[f"d{q}-{i}" for i in range(10)] for q in range(30)]
    population = Population.published(seed=1)
    published = click_profile(attraction_rows(rankings, grades, PUBLISHED_MODEL, 10), 20_000,
                              PUBLISHED_MODEL, np.random.default_rng(3),
                              population=population)  # fmt: skip
    demo = click_profile(attraction_rows(rankings, grades, DEMO_MODEL, 10), 20_000, DEMO_MODEL,
                         np.random.default_rng(3), population=population)  # fmt: skip
    assert published["searches_per_session"] == pytest.approx(2.02, abs=0.06)
    assert published["clicks_per_search"] > demo["clicks_per_search"]
    assert published["two_clicks_or_more"] > demo["two_clicks_or_more"]
    assert 0.0 < published["no_click"] < 1.0
    total = published["no_click"] + published["two_clicks_or_more"]
    assert total <= 1.0  # one click or none or more: shares of the same searches
