"""MOPO (reconstruction) on finite policies: closed forms, KKT, exact front."""

import numpy as np
import pytest
from scipy.optimize import minimize

from mvlearn_ext.moo.mopo import (
    exact_constrained_policy,
    ipo_regression_loss,
    make_preferences,
    mopo_policy,
    preference_values,
    solve_mopo,
)

STRUCTURES = ["bradley_terry", "thurstone", "cyclic", "conflicting"]


@pytest.mark.parametrize("structure", STRUCTURES)
def test_closed_form_maximises_penalised_objective(structure):
    P = make_preferences(structure, n_arms=6, random_state=0)
    rng = np.random.default_rng(0)
    mu, ref = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
    lam, tau = np.array([0.7]), 0.2
    pi = mopo_policy(P, lam, tau=tau, mu=mu, pi_ref=ref)
    s = P @ mu
    w = np.array([1.0, 0.7])

    def neg(z):
        q = np.exp(z - z.max())
        q /= q.sum()
        return -(w @ s @ q - tau * (q * np.log(q / ref)).sum())

    z = minimize(neg, np.zeros(6), method="BFGS", options={"gtol": 1e-12}).x
    q = np.exp(z - z.max())
    np.testing.assert_allclose(pi, q / q.sum(), atol=1e-6)


def test_limits():
    P = make_preferences("bradley_terry", n_arms=5, random_state=1)
    ref = np.array([0.1, 0.2, 0.3, 0.2, 0.2])
    np.testing.assert_allclose(mopo_policy(P, [0.5], tau=1e6, pi_ref=ref), ref, atol=1e-6)
    s = P @ np.full(5, 0.2)
    pi = mopo_policy(P, [0.5], tau=1e-4, pi_ref=ref)
    assert np.argmax(pi) == np.argmax(s[0] + 0.5 * s[1]) and pi.max() > 0.999
    # lam = 0 and K = 1 reduce to IPO's tilted policy on objective 1
    np.testing.assert_allclose(mopo_policy(P, [0.0], tau=0.3), mopo_policy(P[:1], [], tau=0.3))


@pytest.mark.parametrize("structure", STRUCTURES)
def test_regression_loss_minimiser_is_closed_form(structure):
    P = make_preferences(structure, n_arms=6, random_state=2)
    rng = np.random.default_rng(2)
    mu, ref = rng.dirichlet(np.ones(6) * 2), rng.dirichlet(np.ones(6) * 2)
    lam, tau = [0.4], 0.5

    def loss(z):
        q = np.exp(z - z.max())
        return ipo_regression_loss(q / q.sum(), P, lam, tau=tau, mu=mu, pi_ref=ref)

    z = minimize(loss, np.zeros(6), method="BFGS", options={"gtol": 1e-12}).x
    q = np.exp(z - z.max())
    np.testing.assert_allclose(
        q / q.sum(), mopo_policy(P, lam, tau=tau, mu=mu, pi_ref=ref), atol=1e-6
    )


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("K", [2, 3])
def test_dual_descent_recovers_exact_front_and_kkt(structure, K):
    P = make_preferences(structure, n_arms=6, n_objectives=K, random_state=3)
    tau = 0.1
    base = preference_values(P, mopo_policy(P, np.zeros(K - 1), tau=tau))
    s = P @ np.full(6, 1 / 6)
    best = s[1:].max(axis=1)
    b = base[1:] + 0.5 * (best - base[1:]) * 0.5  # between the free optimum and the max
    try:
        res = solve_mopo(P, b, tau=tau)
    except ValueError:
        pytest.skip("thresholds jointly unattainable for this draw")
    exact = exact_constrained_policy(P, b, tau=tau)
    assert exact is not None
    np.testing.assert_allclose(res.policy, exact, atol=1e-5)
    slack = res.values[1:] - b
    assert np.all(slack >= -1e-7)  # constraints met
    np.testing.assert_allclose(res.multipliers * slack, 0, atol=1e-7)  # complementary slackness
    assert np.all(res.multipliers >= 0)


def test_infeasible_thresholds_raise():
    P = make_preferences("bradley_terry", n_arms=4, random_state=0)
    with pytest.raises(ValueError, match="not strictly attainable"):
        solve_mopo(P, [1.0], tau=0.1)
    with pytest.raises(ValueError, match="prefs must satisfy"):
        solve_mopo(np.full((2, 3, 3), 0.9), [0.5], tau=0.1)
    with pytest.raises(ValueError, match="tau"):
        mopo_policy(P, [0.1], tau=0.0)
