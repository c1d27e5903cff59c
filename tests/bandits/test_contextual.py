"""Contextual extension: closed-form oracle weights, online == simulate, rate, errors."""

import numpy as np
import pytest

from mvlearn_ext.bandits import (
    ContextualArmSampler,
    ContextualGreedyPlugIn,
    contextual_oracle_weights,
    simulate_contextual,
)

K, D = 3, 2
MEAN = np.array([[1.0, 0.0], [1.0, 0.5], [1.0, -1.0]])  # constant first feature (intercept)
COV = np.array([np.diag([0.0, v]) for v in (1.0, 0.25, 4.0)])
BETA = np.array([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]])
NOISE = np.array([0.5, 1.0, 2.0])
MODEL = dict(context_mean=MEAN, context_cov=COV, beta=BETA, sigma=NOISE)


def test_oracle_weights_closed_form():
    c = contextual_oracle_weights(MEAN, COV, NOISE)
    for k in range(K):
        second = COV[k] + np.outer(MEAN[k], MEAN[k])
        assert c[k] == pytest.approx(NOISE[k] ** 2 * np.trace(np.linalg.inv(second)))
    # Intercept-only model: c_k = sigma_k^2 (the plain problem).
    c0 = contextual_oracle_weights(np.ones((K, 1)), np.zeros((K, 1, 1)), NOISE)
    np.testing.assert_allclose(c0, NOISE**2)
    A = np.diag([0.0, 1.0])  # only the slope matters: sigma^2 / Var(x)
    cA = contextual_oracle_weights(MEAN, COV, NOISE, A=A)
    np.testing.assert_allclose(cA, NOISE**2 / np.array([1.0, 0.25, 4.0]))


def test_online_and_simulate_agree_exactly():
    budget = 150
    policy = ContextualGreedyPlugIn(p=2, warm_start=6)
    res = simulate_contextual(policy, budget=budget, n_replications=3, random_state=8, **MODEL)
    arms = ContextualArmSampler(random_state=8, **MODEL)
    for r in range(3):
        policy.reset(K, budget, D)
        for _ in range(budget):
            k = policy.next_group()
            x, y = arms.sample(r, k, policy.counts_[k])
            policy.update(k, x, y)
        np.testing.assert_array_equal(policy.counts_, res["counts"][r])
        np.testing.assert_allclose(policy.coef_, res["coef"][r], rtol=1e-9, atol=1e-12)
    state = policy.get_state()
    restored = ContextualGreedyPlugIn(p=2, warm_start=6).set_state(state)
    np.testing.assert_array_equal(restored.counts_, policy.counts_)


def test_allocation_tracks_the_contextual_oracle_and_regret_decays():
    regrets = []
    for T in (500, 4000):
        res = simulate_contextual(
            ContextualGreedyPlugIn(p=np.inf), budget=T, n_replications=300, random_state=1, **MODEL
        )
        c = res["c"]
        np.testing.assert_allclose(res["counts"].mean(0) / T, c / c.sum(), atol=0.02)
        regrets.append(res["regret"].mean())
        assert np.all(res["counts"].sum(axis=1) == T)
    # Faster than 1/T (uniform-type rate) between the two horizons.
    assert regrets[1] < regrets[0] / 8


def test_bad_input():
    with pytest.raises(ValueError, match="singular"):
        simulate_contextual(
            ContextualGreedyPlugIn(),
            budget=100,
            context_mean=np.zeros((2, 1)),
            context_cov=np.zeros((2, 1, 1)),
            beta=np.zeros((2, 1)),
            sigma=[1.0, 1.0],
        )
    with pytest.raises(ValueError, match="smaller than the warm start"):
        ContextualGreedyPlugIn(warm_start=2).reset(3, 8, n_features=2)
    policy = ContextualGreedyPlugIn().reset(3, 100, n_features=2)
    with pytest.raises(ValueError, match="expected 2"):
        policy.update(0, [1.0], 1.0)
    with pytest.raises(ValueError, match="NaN"):
        policy.update(0, [1.0, np.nan], 1.0)
    with pytest.raises(ValueError, match="at least 2 groups"):
        ContextualGreedyPlugIn().reset(1, 100, n_features=2)


@pytest.mark.parametrize(
    "name, bad, exc, match",
    [
        ("context_mean", MEAN.astype(str), TypeError, "context_mean must be a numeric"),
        ("context_cov", COV + 1j, ValueError, "context_cov holds complex"),
        ("beta", np.where(BETA == 0, np.nan, BETA), ValueError, "beta contains NaN"),
        ("sigma", [0.5, 1.0, np.inf], ValueError, "sigma contains infinity"),
        ("sigma", NOISE * 1e300, ValueError, "sigma holds values too large"),
    ],
)
def test_unusable_model_arrays_are_refused_by_name(name, bad, exc, match):
    with pytest.raises(exc, match=match):
        simulate_contextual(
            ContextualGreedyPlugIn(), budget=100, n_replications=2, **{**MODEL, name: bad}
        )
    if name != "beta":
        args = {k: v for k, v in {**MODEL, name: bad}.items() if k != "beta"}
        with pytest.raises(exc, match=match):
            contextual_oracle_weights(**args)
