"""Side information per group: tables, reference fit, online == simulate, limits, errors."""

import pickle

import numpy as np
import pytest
from scipy import special

from mvlearn_ext.bandits import (
    ArmSampler,
    GreedyPlugIn,
    SideInfoGreedyPlugIn,
    allocation_exponent,
    log_variance_tables,
    oracle_allocation,
    simulate,
)

K = 6
RNG = np.random.default_rng(2026)
Z = RNG.normal(size=(K, 2))
COEF = np.array([0.2, 0.8, -0.6])  # (gamma_0, gamma): the exact log-linear model
SIGMA = np.exp(0.5 * (COEF[0] + Z @ COEF[1:]))
MEAN = np.linspace(-1.0, 2.0, K)
Z_NAN = np.where(np.arange(K)[:, None] == 2, np.nan, Z)


def run_online(policy, arms, replication, budget):
    policy.reset(K, budget)
    path = []
    for _ in range(budget):
        k = policy.next_group()
        path.append(k)
        policy.update(k, arms.sample(replication, k, policy.counts_[k]))
    return policy, path


def test_log_variance_tables_closed_form_and_monte_carlo():
    bias, var = log_variance_tables(40)
    assert np.isnan(bias[:2]).all() and np.isnan(var[:2]).all()
    # nu = 2: log(chi2_2 / 2) = log Exp(1), mean -Euler gamma, variance pi^2 / 6.
    assert bias[3] == pytest.approx(-np.euler_gamma, rel=1e-12)
    assert var[3] == pytest.approx(np.pi**2 / 6, rel=1e-12)
    rng = np.random.default_rng(0)
    for n in (4, 11, 40):
        nu = n - 1
        logs = np.log(rng.chisquare(nu, size=200_000) / nu)
        se = logs.std() / np.sqrt(logs.size)
        assert abs(logs.mean() - bias[n]) < 4 * se
        assert logs.var() == pytest.approx(var[n], rel=0.02)
    # Large nu: b ~ -1/nu, psi'(nu/2) ~ 2/nu.
    assert bias[40] == pytest.approx(-1.0 / 39, rel=0.05)
    assert var[40] == pytest.approx(2.0 / 39, rel=0.05)


def reference_plugin(counts, m2, Z, tau=None, coef=None, fit_intercept=True):
    """Plain NumPy/SciPy re-implementation of the documented estimator."""
    Zf = np.hstack([np.ones((len(Z), 1)), Z]) if fit_intercept else Z
    n = counts.astype(float)
    use = (counts >= 2) & (m2 > 0)
    s2 = np.where(counts >= 2, m2 / np.maximum(n - 1, 1), 0.0)
    nu = n[use] - 1
    lk = np.log(s2[use]) - (special.digamma(nu / 2) - np.log(nu / 2))
    vk = special.polygamma(1, nu / 2)
    X = Zf[use]

    def wls(weights):
        sw = np.sqrt(weights)
        return np.linalg.lstsq(X * sw[:, None], lk * sw, rcond=None)[0]

    if tau is None:
        a = 1 / vk
        g = coef if coef is not None else wls(a)
        Q = np.sum(a * (lk - X @ g) ** 2)
        r = 0 if coef is not None else X.shape[1]
        c = a.sum()
        if coef is None:
            c -= np.trace(np.linalg.solve(X.T @ (a[:, None] * X), X.T @ ((a**2)[:, None] * X)))
        tau2 = max(0.0, (Q - (use.sum() - r)) / c)
    else:
        tau2 = tau**2
    g = coef if coef is not None else wls(1 / (vk + tau2))
    pred = Zf @ g
    out = np.exp(pred)
    w = tau2 / (tau2 + vk)
    out[use] = np.exp(w * np.log(s2[use]) + (1 - w) * pred[use])
    return out, g, tau2


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"deviation_sd": 0.0},
        {"deviation_sd": 0.7},
        {"coef": COEF},
        {"coef": COEF, "deviation_sd": 0.3},
        {"fit_intercept": False},
    ],
)
def test_fit_matches_the_numpy_reference(kwargs):
    rng = np.random.default_rng(1)
    policy = SideInfoGreedyPlugIn(group_features=Z, **kwargs).reset(K, 500)
    counts = rng.integers(2, 40, size=K)
    m2 = SIGMA**2 * rng.chisquare(counts - 1) * np.exp(rng.normal(0, 0.5, K))
    policy._state_["counts"][:] = counts
    policy._state_["m2"][:] = m2
    expected, g, tau2 = reference_plugin(
        counts,
        m2,
        Z,
        tau=kwargs.get("deviation_sd"),
        coef=kwargs.get("coef"),
        fit_intercept=kwargs.get("fit_intercept", True),
    )
    np.testing.assert_allclose(policy.plugin_variances_, expected, rtol=1e-9)
    np.testing.assert_allclose(policy.coef_, g, rtol=1e-9, atol=1e-12)
    assert policy.deviation_sd_ == pytest.approx(np.sqrt(tau2), rel=1e-9, abs=1e-12)
    # A group without a usable variance gets the model's prediction.
    policy._state_["counts"][0], policy._state_["m2"][0] = 1, 0.0
    z0 = np.r_[1.0, Z[0]] if kwargs.get("fit_intercept", True) else Z[0]
    assert policy.plugin_variances_[0] == pytest.approx(np.exp(z0 @ policy.coef_), rel=1e-9)


def test_fallback_without_residual_degrees_of_freedom_is_the_plain_variance():
    z = Z[:3]
    policy = SideInfoGreedyPlugIn(group_features=z).reset(3, 100)  # 3 groups, 3 coefficients
    policy._state_["counts"][:] = [5, 6, 7]
    policy._state_["m2"][:] = [1.0, 2.0, 3.0]
    np.testing.assert_allclose(policy.plugin_variances_, [1.0 / 4, 2.0 / 5, 3.0 / 6])
    assert np.isnan(policy.coef_).all() and np.isinf(policy.deviation_sd_)


CONFIGS = [
    {"p": 2},
    {"p": np.inf, "deviation_sd": 0.0, "warm_start": 3},
    {"p": 1, "deviation_sd": 0.5, "warm_start": "linear"},
    {"p": 2, "coef": COEF, "warm_start": 2},
]


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_online_and_simulate_agree_exactly(kwargs):
    budget, reps = 150, 3
    policy = SideInfoGreedyPlugIn(group_features=Z, **kwargs)
    for distribution in ("gaussian", "bernoulli"):
        res = simulate(
            policy,
            sigma=SIGMA,
            mean=MEAN,
            budget=budget,
            n_replications=reps,
            distribution=distribution,
            random_state=11,
        )
        arms = ArmSampler(sigma=SIGMA, mean=MEAN, distribution=distribution, random_state=11)
        for r in range(reps):
            online, _ = run_online(policy, arms, r, budget)
            np.testing.assert_array_equal(online.counts_, res.counts[r])
            np.testing.assert_array_equal(online.means_, res.estimates[r])
            assert online.n_samples_ == budget


def test_online_and_simulate_agree_for_a_user_sampler():
    def sampler(group, size, rng):
        return rng.standard_t(5, size=size) * SIGMA[group]

    budget = 120
    policy = SideInfoGreedyPlugIn(group_features=Z, p=2)
    res = simulate(
        policy, sigma=SIGMA, budget=budget, n_replications=3, distribution=sampler, random_state=3
    )
    arms = ArmSampler(sigma=SIGMA, distribution=sampler, random_state=3, budget=budget)
    for r in range(3):
        online, _ = run_online(policy, arms, r, budget)
        np.testing.assert_array_equal(online.counts_, res.counts[r])
        np.testing.assert_array_equal(online.means_, res.estimates[r])


@pytest.mark.parametrize("p", [2, np.inf])
def test_infinite_deviation_is_exactly_greedy(p):
    side = SideInfoGreedyPlugIn(group_features=Z, p=p, deviation_sd=np.inf)
    a = simulate(side, sigma=SIGMA, budget=300, n_replications=30, random_state=5)
    b = simulate(GreedyPlugIn(p=p), sigma=SIGMA, budget=300, n_replications=30, random_state=5)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.estimates, b.estimates)


@pytest.mark.parametrize("p", [2, np.inf])
def test_oracle_limit_known_model(p):
    """Exact model, known coefficients, tau = 0: the plug-in is the true variance.

    With a 2-sample warm start (the known model needs no data) the
    allocation is then deterministic (the same in every replication) and
    equals greedy on the true ``sigma^q / n_k`` (a divisor apportionment of
    the oracle weights, within ``K - 1`` of ``n*``).
    """
    budget = 1000
    policy = SideInfoGreedyPlugIn(group_features=Z, p=p, coef=COEF, deviation_sd=0.0, warm_start=2)
    res = simulate(
        policy, sigma=SIGMA, mean=MEAN, budget=budget, n_replications=20, random_state=0
    )
    assert (res.counts == res.counts[0]).all()
    # Plain-Python greedy with the true variances after the same warm start.
    q = allocation_exponent(p)
    n = np.full(K, 2)
    while n.sum() < budget:
        n[np.argmax(SIGMA**q / n)] += 1
    np.testing.assert_array_equal(res.counts[0], n)
    star = oracle_allocation(SIGMA, budget, p)
    assert np.abs(res.counts[0] - star).max() < K - 1
    # Its regret is rounding level, far below the estimation error of greedy plug-in.
    greedy = simulate(
        GreedyPlugIn(p=p), sigma=SIGMA, budget=budget, n_replications=200, random_state=0
    )
    assert res.regret[0] <= greedy.mean_regret()[0] / 10
    if np.isinf(p):
        # Greedy on the true sigma^2 / n_k minimises the max exactly over integer
        # allocations with n_k >= 2: no single-sample move improves it.
        best = np.max(SIGMA**2 / res.counts[0])
        for i in range(K):
            for j in range(K):
                if i != j and res.counts[0][i] > 2:
                    moved = res.counts[0].copy()
                    moved[i] -= 1
                    moved[j] += 1
                    assert np.max(SIGMA**2 / moved) >= best


def test_group_order_invariance():
    perm = np.array([3, 5, 0, 1, 4, 2])
    for kwargs in ({}, {"deviation_sd": 0.0}):
        base = simulate(
            SideInfoGreedyPlugIn(group_features=Z, **kwargs),
            sigma=SIGMA,
            budget=300,
            n_replications=30,
            random_state=7,
        )
        permuted = simulate(
            SideInfoGreedyPlugIn(group_features=Z[perm], **kwargs),
            sigma=SIGMA[perm],
            budget=300,
            n_replications=30,
            random_state=7,
            group_keys=perm,
        )
        np.testing.assert_array_equal(permuted.counts, base.counts[:, perm])


def paired(a, b):
    d = a.regret - b.regret
    return d.mean(), d.std(ddof=1) / np.sqrt(d.size)


def test_side_information_helps_when_the_model_holds():
    """Exact log-linear model, coefficients unknown: pooling beats per-group estimates."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(8, 2))
    sigma = np.exp(0.5 * (z @ np.array([0.8, -0.5])))
    kw = dict(sigma=sigma, budget=256, n_replications=300, random_state=1)
    side = simulate(SideInfoGreedyPlugIn(group_features=z, p=2), **kw)
    greedy = simulate(GreedyPlugIn(p=2), **kw)
    diff, se = paired(side, greedy)
    assert diff < -3 * se  # significantly better on the same observations
    assert side.mean_regret()[0] < 0.8 * greedy.mean_regret()[0]


def test_uninformative_features_cost_little():
    """Features independent of sigma: within 10% (+ 3 paired SE) of GreedyPlugIn."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(K, 2))
    sigma = np.sqrt(np.geomspace(0.25, 4.0, K))
    kw = dict(sigma=sigma, budget=400, n_replications=300, random_state=1)
    side = simulate(SideInfoGreedyPlugIn(group_features=z, p=2), **kw)
    greedy = simulate(GreedyPlugIn(p=2), **kw)
    diff, se = paired(side, greedy)
    assert diff <= 0.10 * greedy.mean_regret()[0] + 3 * se


def test_state_save_restore_and_pickle():
    budget = 120
    arms = ArmSampler(sigma=SIGMA, random_state=9)
    make = lambda: SideInfoGreedyPlugIn(group_features=Z, p=2, warm_start=4)  # noqa: E731
    reference, path = run_online(make(), arms, 0, budget)
    policy = make().reset(K, budget)
    for t in range(budget):
        if t == 50:
            state = policy.get_state()
            policy = pickle.loads(pickle.dumps(policy))
            policy = make().set_state(state)
        k = policy.next_group()
        assert k == path[t]
        policy.update(k, arms.sample(0, k, policy.counts_[k]))
    np.testing.assert_array_equal(policy.counts_, reference.counts_)
    with pytest.raises(ValueError, match="missing"):
        make().set_state({"counts": np.zeros(K)})


def test_constant_group_gets_the_model_prediction_not_zero():
    """A group with identical observations is left out of the fit and not starved."""
    policy = SideInfoGreedyPlugIn(group_features=Z, warm_start=3).reset(K, 200)
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = policy.next_group()
        policy.update(k, 5.0 if k == 0 else SIGMA[k] * rng.normal())
    assert policy.variances_[0] == 0.0
    assert policy.plugin_variances_[0] > 0 and policy.counts_[0] > 3
    greedy = GreedyPlugIn(p=2, warm_start=3).reset(K, 200)
    for _ in range(200):
        k = greedy.next_group()
        greedy.update(k, 5.0 if k == 0 else SIGMA[k] * rng.normal())
    assert greedy.counts_[0] == 3


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: SideInfoGreedyPlugIn(group_features=Z).reset(K + 1, 100), ValueError, "rows"),
        (
            lambda: simulate(SideInfoGreedyPlugIn(group_features=Z[:4]), sigma=SIGMA, budget=99),
            ValueError,
            "group_features has 4 rows",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z_NAN).reset(K, 99),
            ValueError,
            "group 2, feature 0",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=np.full((K, 2), np.inf)).reset(K, 99),
            ValueError,
            "group_features contains NaN or inf",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=np.zeros((K, 2, 2))).reset(K, 99),
            ValueError,
            "2-D",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=[["a", "b"]] * K).reset(K, 99),
            TypeError,
            "numeric",
        ),
        (lambda: SideInfoGreedyPlugIn(group_features=None).reset(K, 99), ValueError, "required"),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z, deviation_sd=-1.0).reset(K, 99),
            ValueError,
            "deviation_sd",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z, coef=[1.0, 2.0]).reset(K, 99),
            ValueError,
            "coef has 2 entries, expected 3",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z, coef=[1.0, np.nan, 0]).reset(K, 99),
            ValueError,
            "coef contains",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z, fit_intercept=1).reset(K, 99),
            TypeError,
            "fit_intercept",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z, warm_start=20).reset(K, 99),
            ValueError,
            "smaller than the warm start",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z).reset(K, 99).update(K, 1.0),
            ValueError,
            "out of range",
        ),
        (
            lambda: SideInfoGreedyPlugIn(group_features=Z).reset(K, 99).update(0, np.inf),
            ValueError,
            "must be finite",
        ),
        (lambda: SideInfoGreedyPlugIn(group_features=Z).next_group(), RuntimeError, "reset"),
        (lambda: SideInfoGreedyPlugIn(group_features=Z).coef_, RuntimeError, "reset"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_batches_and_threads_reproduce_one_run():
    policy = SideInfoGreedyPlugIn(group_features=Z, p=2)
    full = simulate(policy, sigma=SIGMA, budget=200, n_replications=8, random_state=4)
    tail = simulate(
        policy, sigma=SIGMA, budget=200, n_replications=3, random_state=4, replication_offset=5
    )
    np.testing.assert_array_equal(full.counts[5:], tail.counts)
    one = simulate(policy, sigma=SIGMA, budget=200, n_replications=8, random_state=4, n_jobs=1)
    np.testing.assert_array_equal(full.counts, one.counts)
    np.testing.assert_array_equal(full.estimates, one.estimates)
