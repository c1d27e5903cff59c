"""Closed forms of R_p, the oracle allocation and the rounding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from mvlearn_ext.bandits import (
    GreedyPlugIn,
    allocation_exponent,
    oracle_allocation,
    oracle_value,
    proxy_regret,
    regret_curve,
    round_allocation,
    rp_objective,
    simulate,
)

SIGMA = np.sqrt([0.25, 1.0, 2.0, 4.0])


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_oracle_allocation_minimises_rp(p):
    """n* = T sigma^q / sum sigma^q is the numerical minimiser of R_p on the simplex."""
    T = 1000
    star = oracle_allocation(SIGMA, T, p)
    assert star.sum() == pytest.approx(T)
    q = allocation_exponent(p)
    np.testing.assert_allclose(star / star.sum(), SIGMA**q / np.sum(SIGMA**q))

    # Numerical minimiser over softmax-parametrised allocations (smooth p only).
    if np.isfinite(p):

        def obj(z):
            w = np.exp(z - z.max())
            return rp_objective(SIGMA, T * w / w.sum(), p)

        res = minimize(
            obj,
            np.zeros(4),
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000},
        )
        w = np.exp(res.x - res.x.max())
        np.testing.assert_allclose(T * w / w.sum(), star, rtol=1e-3)
    # Value formula R_p(n*) = (sum sigma^q)^((p+1)/p) / T, and no direction improves it.
    assert rp_objective(SIGMA, star, p) == pytest.approx(oracle_value(SIGMA, T, p), rel=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(200):
        d = rng.normal(size=4)
        d -= d.mean()
        assert rp_objective(SIGMA, star + 5 * d / np.abs(d).max(), p) >= oracle_value(SIGMA, T, p)


def test_special_cases():
    T = 400
    # p = 1: Neyman allocation n ∝ sigma, value (sum sigma)^2 / T.
    np.testing.assert_allclose(oracle_allocation(SIGMA, T, 1), T * SIGMA / SIGMA.sum())
    assert oracle_value(SIGMA, T, 1) == pytest.approx(SIGMA.sum() ** 2 / T)
    # p = inf: n ∝ sigma^2, value sum sigma^2 / T.
    np.testing.assert_allclose(oracle_allocation(SIGMA, T, "inf"), T * SIGMA**2 / np.sum(SIGMA**2))
    assert oracle_value(SIGMA, T, np.inf) == pytest.approx(np.sum(SIGMA**2) / T)
    assert allocation_exponent(2) == pytest.approx(4 / 3)
    # Large p approaches p = inf.
    assert oracle_value(SIGMA, T, 1e6) == pytest.approx(oracle_value(SIGMA, T, np.inf), rel=1e-4)


@pytest.mark.parametrize("p", [1.0, 2.0, np.inf])
def test_rp_is_convex(p):
    rng = np.random.default_rng(1)
    for _ in range(200):
        a, b = rng.uniform(1, 100, size=(2, 4))
        lam = rng.uniform()
        mid = rp_objective(SIGMA, lam * a + (1 - lam) * b, p)
        assert (
            mid <= lam * rp_objective(SIGMA, a, p) + (1 - lam) * rp_objective(SIGMA, b, p) + 1e-12
        )


def test_permutation_and_scale_invariance_of_the_oracle():
    perm = np.array([2, 0, 3, 1])
    for p in (1, 2, np.inf):
        star = oracle_allocation(SIGMA, 500, p)
        np.testing.assert_allclose(oracle_allocation(SIGMA[perm], 500, p), star[perm])
        np.testing.assert_allclose(oracle_allocation(3.0 * SIGMA, 500, p), star)
        np.testing.assert_array_equal(
            round_allocation(SIGMA[perm] ** allocation_exponent(p), 500),
            round_allocation(SIGMA ** allocation_exponent(p), 500)[perm],
        )


@settings(max_examples=60, deadline=None)
@given(
    w=st.lists(st.floats(0.0, 10.0), min_size=2, max_size=8),
    budget=st.integers(16, 5000),
    floor=st.integers(0, 2),
)
def test_round_allocation_properties(w, budget, floor):
    w = np.asarray(w)
    out = round_allocation(w, budget, floor)
    assert out.sum() == budget
    assert np.all(out >= floor)
    if w.sum() > 0:
        real = budget * w / w.sum()
        free = real >= floor + 1
        if np.all(real >= floor):  # no clamping: largest remainder is within 1 of the real counts
            assert np.all(np.abs(out - real) < 1.0)
        assert np.all(out[free] >= np.floor(real[free]) - 1e-9) or not np.all(real >= floor)


def test_proxy_regret_is_zero_at_the_real_optimum_and_positive_elsewhere():
    star = oracle_allocation(SIGMA, 1000, 2)
    assert abs(proxy_regret(SIGMA, star, 2)) < 1e-15
    assert proxy_regret(SIGMA, [250, 250, 250, 250], 2) > 0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: oracle_allocation([1.0], 10, 2), "at least 2 groups"),
        (lambda: oracle_allocation([1.0, 0.0], 10, 2), r"sigma\[1\] = 0.0"),
        (lambda: oracle_allocation([1.0, np.nan], 10, 2), "NaN"),
        (lambda: oracle_allocation([1.0, 2.0], 10, 0.5), "p must be >= 1"),
        (lambda: oracle_allocation([1.0, 2.0], 0, 2), "budget must be >= 1"),
        (lambda: rp_objective([1.0, 2.0], [0, 3], 2), "positive"),
        (lambda: round_allocation([1.0, 1.0], 3, floor=2), "smaller than floor"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: oracle_allocation(["1", "2"], 10, 2), TypeError, "sigma must be a numeric"),
        (lambda: oracle_value([1.0, 2.0 + 1j], 10, 2), ValueError, "sigma holds complex"),
        (lambda: oracle_value([1e300, 1.0], 10, 2), ValueError, "sigma holds values too large"),
        (lambda: rp_objective([1.0, 2.0], [10, np.nan], 2), ValueError, "counts contains NaN"),
        (lambda: rp_objective([1.0, 2.0], [[[10, 40]]], 2), ValueError, "counts must be 1-D"),
        (lambda: proxy_regret([1.0, 2.0], [50, np.inf], 2), ValueError, "counts contains inf"),
        (lambda: round_allocation([1.0, "1"], 10), TypeError, "weights must be a numeric"),
        (lambda: round_allocation([], 10), ValueError, "weights is empty"),
        (
            lambda: regret_curve(GreedyPlugIn(), sigma=[1.0, 2.0], budgets=[64, np.inf]),
            ValueError,
            "budgets contains infinity",
        ),
        (
            lambda: regret_curve(GreedyPlugIn(), sigma=[1.0, 2.0], budgets=[64.5]),
            ValueError,
            "budgets must hold whole numbers",
        ),
        (
            lambda: simulate(GreedyPlugIn(), sigma=["0.5", "1"], budget=10),
            TypeError,
            "sigma must be a numeric",
        ),
        (
            lambda: simulate(GreedyPlugIn(), sigma=[0.5, 1.0], budget=10, mean=[0.0, np.nan]),
            ValueError,
            "mean contains NaN",
        ),
    ],
)
def test_unusable_arrays_are_refused_by_name(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
