"""Zero-inflated negative binomial and Gauss-Hermite expectations against SciPy and Monte Carlo."""

import numpy as np
import pytest
from scipy import stats

from mvlearn_ext.gaussian_process._likelihoods import (
    gauss_hermite_expectation,
    softplus,
    zinb_logpmf,
)


def nb_reference(y, m, alpha):
    r = 1.0 / alpha
    return stats.nbinom.logpmf(y, r, r / (r + m))


@pytest.mark.parametrize("scale", [1.0, 3.5])
def test_zero_inflation_zero_is_scipy_negative_binomial(scale):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 40, 200)
    f = rng.normal(0.5, 2.0, 200)
    alpha = rng.uniform(0.05, 3.0, 200)
    m = scale * np.log1p(np.exp(f))
    np.testing.assert_allclose(
        zinb_logpmf(y, f, alpha, scale=scale, zero_inflation=0.0),
        nb_reference(y, m, alpha),
        rtol=1e-10,
    )


def test_zero_inflated_pmf_matches_mixture_and_sums_to_one():
    rng = np.random.default_rng(1)
    f, alpha, k = rng.normal(0, 1.5, 6), rng.uniform(0.1, 2.0, 6), 0.3
    m = softplus(f)
    psi = k / (k + m)
    ys = np.arange(0, 400)[:, None]
    logp = zinb_logpmf(ys, f[None], alpha[None], zero_inflation=k)
    nb = np.exp(nb_reference(ys, m[None], alpha[None]))
    expected = (1 - psi) * nb
    expected[0] += psi
    np.testing.assert_allclose(np.exp(logp), expected, rtol=1e-10, atol=1e-300)
    # The truncated tail beyond 400 is negligible for means below ~10.
    np.testing.assert_allclose(np.exp(logp).sum(axis=0), 1.0, atol=1e-10)


def test_zero_inflation_raises_the_probability_of_zero():
    f, alpha = np.array([0.0, 2.0]), np.array([0.5, 0.5])
    p0 = np.exp(zinb_logpmf(0, f, alpha, zero_inflation=0.5))
    p0_nb = np.exp(zinb_logpmf(0, f, alpha, zero_inflation=0.0))
    assert np.all(p0 > p0_nb)


def test_gauss_hermite_is_exact_for_polynomials():
    mean, var = np.array([0.3, -1.0]), np.array([0.5, 2.0])
    got = gauss_hermite_expectation(lambda f: f**4, mean, var, n_points=3)
    np.testing.assert_allclose(got, mean**4 + 6 * mean**2 * var + 3 * var**2, rtol=1e-12)


def test_gauss_hermite_expectation_of_zinb_matches_monte_carlo():
    rng = np.random.default_rng(2)
    y = np.array([0, 1, 5, 12])
    mean, var = np.array([-0.5, 0.2, 1.5, 2.5]), np.array([0.3, 1.0, 0.5, 0.2])
    alpha = np.array([0.4, 1.0, 0.2, 0.1])
    gh = gauss_hermite_expectation(
        lambda f: zinb_logpmf(y, f, alpha, zero_inflation=0.1), mean, var, 20
    )
    draws = mean + np.sqrt(var) * rng.standard_normal((200_000, 4))
    vals = zinb_logpmf(y, draws, alpha, zero_inflation=0.1)
    se = vals.std(axis=0) / np.sqrt(draws.shape[0])
    assert np.all(np.abs(gh - vals.mean(axis=0)) < 4 * se)


def test_errors():
    with pytest.raises(ValueError, match="non-negative integer"):
        zinb_logpmf([-1], [0.0], [1.0])
    with pytest.raises(ValueError, match="non-negative integer"):
        zinb_logpmf([1.5], [0.0], [1.0])
    with pytest.raises(ValueError, match="alpha"):
        zinb_logpmf([1], [0.0], [0.0])
    with pytest.raises(ValueError, match="zero_inflation"):
        zinb_logpmf([1], [0.0], [1.0], zero_inflation=-0.1)
    with pytest.raises(ValueError, match="var"):
        gauss_hermite_expectation(np.exp, [0.0], [-1.0])
