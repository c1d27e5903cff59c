"""Schedules, the forward process, samplers and the analytic optimal denoisers."""

import numpy as np
import pytest

from mvlearn_ext.diffusion import (
    ddim_sample,
    ddpm_sample,
    forward_marginal,
    gaussian_chain_moments,
    gaussian_eps,
    make_schedule,
    mixture_eps,
    q_sample,
)


def test_linear_schedule_is_rescaled_to_T_steps():
    s = make_schedule(1000)
    assert s.betas[0] == pytest.approx(1e-4) and s.betas[-1] == pytest.approx(0.02)
    s50 = make_schedule(50)
    assert s50.betas[0] == pytest.approx(2e-3) and s50.betas[-1] == pytest.approx(0.4)
    for sch in (s, s50, make_schedule(50, kind="cosine")):
        ab = sch.alpha_bars
        assert (np.diff(ab) < 0).all() and ab[-1] < 1e-3
        np.testing.assert_allclose(
            sch.posterior_variances[1:], ((1 - ab[:-1]) / (1 - ab[1:]) * sch.betas[1:])
        )
        assert sch.posterior_variances[0] == 0


def test_forward_marginal_closed_form_and_samples():
    s = make_schedule(50)
    x0 = np.tile([[1.0, -2.0]], (40000, 1))
    t = 20
    mean, var = forward_marginal(x0, t, s)
    ab = np.prod(1 - s.betas[: t + 1])
    np.testing.assert_allclose(mean[0], np.sqrt(ab) * x0[0])
    np.testing.assert_allclose(var[0, 0], 1 - ab)
    xt, noise = q_sample(x0, t, s, random_state=0)
    se = np.sqrt((1 - ab) / x0.shape[0])
    assert np.all(np.abs(xt.mean(0) - mean[0]) < 4 * se)
    assert np.all(np.abs(xt.var(0) / (1 - ab) - 1) < 4 * np.sqrt(2 / x0.shape[0]))
    # the returned noise is the one used
    np.testing.assert_allclose(xt, mean + np.sqrt(var) * noise)


@pytest.mark.parametrize(
    "T, variance, sigma2, expected",
    [  # reference values computed independently of the package
        (50, "beta", 0.25, 0.266),
        (50, "beta_tilde", 0.25, 0.197),
        (1000, "beta", 0.25, 0.2508),
        (1000, "beta_tilde", 0.25, 0.246),
        (50, "beta", 0.05**2, 0.0039),
    ],
)
def test_chain_moments_reproduce_the_reference_values(T, variance, sigma2, expected):
    m, v = gaussian_chain_moments(1.0, sigma2, make_schedule(T), variance=variance)
    assert float(v) == pytest.approx(expected, abs=10 ** -(len(str(expected)) - 2) / 2)
    assert abs(float(m) - 1.0) < 3 * np.sqrt(make_schedule(T).alpha_bars[-1])


@pytest.mark.parametrize("variance", ["beta", "beta_tilde"])
def test_ddpm_with_the_optimal_denoiser_matches_the_propagated_moments(variance):
    s = make_schedule(50)
    mu, s2 = np.array([1.0, -0.5]), np.array([0.25, 0.04])
    n = 40000
    x = ddpm_sample(
        gaussian_eps(mu, s2, s), s, n_samples=n, dim=2, variance=variance, random_state=0
    )
    m, v = gaussian_chain_moments(mu, s2, s, variance=variance)
    assert np.all(np.abs(x.mean(0) - m) < 4 * np.sqrt(v / n))
    assert np.all(np.abs(x.var(0) / v - 1) < 4 * np.sqrt(2 / n))


def test_many_steps_recover_the_gaussian():
    s = make_schedule(1000)
    x = ddpm_sample(gaussian_eps(1.0, 0.25, s), s, n_samples=20000, dim=1, random_state=1)
    assert abs(x.mean() - 1.0) < 0.02
    assert abs(x.var() / 0.25 - 1) < 0.04


def test_ddim_is_deterministic_and_matches_its_moments():
    s = make_schedule(50)
    fn = gaussian_eps(0.5, 0.09, s)
    xT = np.random.default_rng(0).standard_normal((30000, 1))
    a = ddim_sample(fn, s, x_T=xT)
    b = ddim_sample(fn, s, x_T=xT)
    np.testing.assert_array_equal(a, b)
    m, v = gaussian_chain_moments(0.5, 0.09, s, sampler="ddim")
    # deterministic map of x_T: linear, so the moments are those of the map
    assert abs(a.mean() - m) < 4 * np.sqrt(v / xT.shape[0])
    assert abs(a.var() / v - 1) < 4 * np.sqrt(2 / xT.shape[0])
    np.testing.assert_allclose(ddim_sample(fn, s, x_T=xT, timesteps=np.arange(50)), a)
    # with many steps DDIM reaches the data law
    s1 = make_schedule(1000)
    x = ddim_sample(gaussian_eps(0.5, 0.09, s1), s1, x_T=xT)
    assert abs(x.var() / 0.09 - 1) < 0.05


def test_samplers_are_seeded():
    s = make_schedule(20)
    fn = gaussian_eps(0.0, 1.0, s)
    a = ddpm_sample(fn, s, n_samples=5, dim=2, random_state=3)
    b = ddpm_sample(fn, s, n_samples=5, dim=2, random_state=3)
    c = ddpm_sample(fn, s, n_samples=5, dim=2, random_state=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_mixture_denoiser_is_the_scaled_score_and_reduces_to_the_gaussian():
    s = make_schedule(50)
    means = np.array([[-1.0, 0.0], [1.5, 0.5]])
    var = np.array([0.1, 0.3])
    w = np.array([0.3, 0.7])
    fn = mixture_eps(means, var, s, weights=w)
    x = np.random.default_rng(0).normal(size=(6, 2))
    for t in (0, 10, 49):
        ab = s.alpha_bars[t]

        def logp(y, ab=ab):
            v = ab * var + 1 - ab
            d2 = ((y[None, :] - np.sqrt(ab) * means) ** 2).sum(1)
            return np.log(np.sum(w * np.exp(-0.5 * d2 / v) / (2 * np.pi * v)))

        h = 1e-5
        for i in range(x.shape[0]):
            grad = [(logp(x[i] + h * e) - logp(x[i] - h * e)) / (2 * h) for e in np.eye(2)]
            np.testing.assert_allclose(
                fn(x, t)[i], -np.sqrt(1 - ab) * np.array(grad), rtol=1e-5, atol=1e-7
            )
    one = mixture_eps(means[:1], 0.2, s)
    np.testing.assert_allclose(one(x, 7), gaussian_eps(means[0], 0.2, s)(x, 7))


def test_mixture_sampling_recovers_the_weights():
    s = make_schedule(200)
    means = np.array([[-2.0], [2.0]])
    x = ddpm_sample(
        mixture_eps(means, 0.05, s, weights=[0.25, 0.75]), s, n_samples=8000, dim=1, random_state=0
    )
    share = np.mean(x[:, 0] > 0)
    assert abs(share - 0.75) < 4 * np.sqrt(0.75 * 0.25 / 8000) + 0.01


def test_bad_input_is_named():
    s = make_schedule(10)
    fn = gaussian_eps(0.0, 1.0, s)
    with pytest.raises(ValueError, match="n_steps"):
        make_schedule(0)
    with pytest.raises(ValueError, match="kind"):
        make_schedule(10, kind="sigmoid")
    with pytest.raises(ValueError, match="beta_end"):
        make_schedule(10, beta_start=0.02, beta_end=0.01)
    with pytest.raises(TypeError, match="schedule"):
        ddpm_sample(fn, "linear", n_samples=2, dim=1)
    with pytest.raises(TypeError, match="eps_fn"):
        ddpm_sample(None, s, n_samples=2, dim=1)
    with pytest.raises(ValueError, match="n_samples"):
        ddpm_sample(fn, s)
    with pytest.raises(ValueError, match="variance"):
        ddpm_sample(fn, s, n_samples=2, dim=1, variance="learned")
    with pytest.raises(ValueError, match="eps_fn returned shape"):
        ddpm_sample(lambda x, t: x[:, :1], s, n_samples=2, dim=2)
    with pytest.raises(ValueError, match="NaN"):
        ddpm_sample(lambda x, t: x * np.nan, s, n_samples=2, dim=2)
    with pytest.raises(ValueError, match="timesteps"):
        ddim_sample(fn, s, n_samples=2, dim=1, timesteps=np.array([3, 1]))
    with pytest.raises(ValueError, match="eta"):
        ddim_sample(fn, s, n_samples=2, dim=1, eta=-1.0)
    with pytest.raises(ValueError, match="t must lie"):
        forward_marginal(np.zeros((2, 1)), 10, s)
    with pytest.raises(TypeError, match="integer step"):
        forward_marginal(np.zeros((2, 1)), 1.5, s)
    with pytest.raises(ValueError, match="x0"):
        forward_marginal(np.zeros(3), 1, s)
    with pytest.raises(ValueError, match="weights"):
        mixture_eps(np.zeros((2, 1)), 1.0, s, weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="var"):
        gaussian_eps(0.0, -1.0, s)
    with pytest.raises(ValueError, match="sampler"):
        gaussian_chain_moments(0.0, 1.0, s, sampler="euler")


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda bad: forward_marginal(bad, 1, make_schedule(10)), "x0"),
        (lambda bad: q_sample(np.zeros((2, 2)), 1, make_schedule(10), noise=bad), "noise"),
        (lambda bad: gaussian_eps(bad, 1.0, make_schedule(10)), "mean"),
        (lambda bad: mixture_eps(bad, 1.0, make_schedule(10)), "means"),
        (
            lambda bad: mixture_eps(np.zeros((2, 1)), 1.0, make_schedule(10), weights=bad[0]),
            "weights",
        ),
        (lambda bad: gaussian_chain_moments(bad, 1.0, make_schedule(10)), "mean"),
        (
            lambda bad: ddpm_sample(
                gaussian_eps(0.0, 1.0, make_schedule(10)), make_schedule(10), x_T=bad
            ),
            "x_T",
        ),
    ],
)
@pytest.mark.parametrize(
    "corrupt, exc",
    [(lambda A: A.astype(str), TypeError), (lambda A: A + 1j, ValueError)],
    ids=["str", "complex"],
)
def test_unusable_arrays_are_refused_by_name(call, name, corrupt, exc):
    with pytest.raises(exc, match=rf"^{name} "):
        call(corrupt(np.ones((2, 2))))


def test_linear_schedule_honours_or_refuses_beta_end():
    # the default (None) caps the rescaled last beta at 0.999 for short chains
    assert make_schedule(10).betas[-1] == pytest.approx(0.999)
    assert make_schedule(50).betas[-1] == pytest.approx(0.4)
    # a given beta_end is used as is, and differs from another one
    a, b = make_schedule(10, beta_end=0.005), make_schedule(10, beta_end=0.009)
    assert a.betas[-1] == pytest.approx(0.5) and b.betas[-1] == pytest.approx(0.9)
    assert make_schedule(50, beta_end=0.01).betas[-1] == pytest.approx(0.2)
    # one whose rescaled value reaches 0.999 would be ignored: refused by name
    for kw in (dict(beta_end=0.5), dict(beta_end=0.02)):
        with pytest.raises(ValueError, match=r"^beta_end=.* must be below 0\.00999"):
            make_schedule(10, **kw)
    with pytest.raises(ValueError, match=r"^beta_start=0\.01 .* must be below"):
        make_schedule(10, beta_start=0.01)
