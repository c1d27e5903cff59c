"""Seeded Monte Carlo rates: log-log regret slopes against theory."""

import numpy as np
import pytest

from mvlearn_ext.bandits import (
    GAFSMax,
    GreedyPlugIn,
    OracleAllocation,
    TwoStagePlugIn,
    UniformAllocation,
    oracle_allocation,
    oracle_value,
    regret_curve,
    simulate,
)

# K = 4 Gaussian arms, sigma^2 = (0.25, 1, 2, 4).
SIGMA = np.sqrt([0.25, 1.0, 2.0, 4.0])
BUDGETS = [250, 1000, 4000]
REPS = 2000


def slope(policy, **kw):
    curve = regret_curve(
        policy, sigma=SIGMA, budgets=BUDGETS, n_replications=REPS, random_state=0, **kw
    )
    return curve["fit"].slope


def test_warm_start_decides_the_rate():
    """Greedy with a 2-sample warm start is slow (slope above -0.8); with ceil(sqrt T), -1.5."""
    assert slope(GreedyPlugIn(p=np.inf, warm_start=2)) > -0.8
    assert slope(GreedyPlugIn(p=np.inf, warm_start="sqrt")) == pytest.approx(-1.5, abs=0.15)


def test_greedy_finite_p_rate():
    assert slope(GreedyPlugIn(p=2)) == pytest.approx(-2.0, abs=0.15)
    assert slope(GreedyPlugIn(p=1, warm_start="linear")) == pytest.approx(-2.0, abs=0.15)


def test_two_stage_rates():
    """Two-stage: -1.5 at p = 2 with n0 = sqrt(T) (variance error T^-1/4); fast with n0 = cT."""
    assert slope(TwoStagePlugIn(p=2, warm_start="sqrt")) == pytest.approx(-1.5, abs=0.2)
    assert slope(TwoStagePlugIn(p=np.inf, warm_start="linear")) < -1.35
    assert slope(GAFSMax()) == pytest.approx(-1.5, abs=0.15)


def test_uniform_regret_is_exactly_order_one_over_T():
    for p in (1, np.inf):
        res = [
            simulate(UniformAllocation(p=p), sigma=SIGMA, budget=T, n_replications=2)
            for T in (256, 1024, 4096)
        ]
        values = [r.mean_regret()[0] * r.budget for r in res]
        np.testing.assert_allclose(values, values[0], rtol=1e-12)


@pytest.mark.parametrize("p", [2, np.inf])
def test_oracle_regret_is_rounding_error_only(p):
    """Counts within one of n*: regret <= R* / (min n* - 1) (p = inf) or O(T^-3) (finite p)."""
    for T in (256, 1024, 4096, 16384):
        res = simulate(OracleAllocation(p=p), sigma=SIGMA, budget=T, n_replications=1)
        star = oracle_allocation(SIGMA, T, p)
        assert np.all(np.abs(res.counts[0] - star) < 1)
        regret = res.mean_regret()[0]
        assert regret >= -1e-15
        if np.isinf(p):
            assert regret <= oracle_value(SIGMA, T, p) / (star.min() - 1)
        else:
            # Second order: |R(n* + d) - R*| <= (p + 1) R* sum_k (d_k / n*_k)^2 for |d_k| < 1.
            assert regret <= (p + 1) * oracle_value(SIGMA, T, p) * np.sum(1 / star**2)


def test_true_loss_equals_proxy_loss_without_adaptivity():
    """For uniform (fixed counts), E(mu_hat - mu)^2 = sigma^2 / n: the two regrets agree."""
    res = simulate(UniformAllocation(p=np.inf), sigma=SIGMA, budget=400, n_replications=20000)
    true_loss, mse = res.true_loss()
    se = np.sqrt(2 / 20000) * SIGMA**2 / res.counts[0]
    assert np.all(np.abs(mse - SIGMA**2 / res.counts[0]) < 5 * se)
    assert true_loss == pytest.approx(res.mean_regret()[0], abs=5 * se.max())
