"""TLVMOGPRegressor: oracles (plain SVGP, LVMOGP, collapsed bound), Lipschitz bound, gradients."""

import itertools
import pickle

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.linalg import cho_solve, solve_triangular
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from mvlearn_ext.deep.gaussian_process import (
    LipschitzResNet,
    TLVMOGPRegressor,
    gauss_hermite_expectation,
    zinb_log_prob,
)
from mvlearn_ext.deep.gaussian_process._drivers import _TLVMOGP
from mvlearn_ext.deep.gaussian_process._kernels import _kernel
from mvlearn_ext.gaussian_process import _bound as bd
from mvlearn_ext.gaussian_process._likelihoods import zinb_logpmf

torch.set_num_threads(1)
T64 = torch.float64


def t(a):
    return torch.as_tensor(np.asarray(a), dtype=T64)


def raw_tri(L):
    """The raw parameter (log diagonal) of a lower-triangular factor ``L``."""
    raw = np.tril(L, -1)
    raw[np.diag_indices_from(raw)] = np.log(np.diag(L))
    return raw


def random_tri(rng, m, scale=0.3):
    L = np.tril(scale * rng.standard_normal((m, m)), -1)
    L[np.diag_indices(m)] = rng.uniform(0.3, 1.0, m)
    return L


def rbf(A, B, ls):
    d = (A[:, None, :] - B[None, :, :]) / ls
    return np.exp(-0.5 * (d**2).sum(-1))


def module(**kw):
    return _TLVMOGP(**kw).to(T64)


def set_params(mod, **values):
    with torch.no_grad():
        for name, v in values.items():
            getattr(mod, name).copy_(t(v))


# ---------------------------------------------------------------- P = 1


def numpy_svgp(X, y, Z, var, ls, noise, m_u, S_u, jitter, Xtest):
    """Unwhitened SVGP with q(u) = N(m_u, S_u): ELBO and predictive moments (dense)."""
    M = Z.shape[0]
    Kuu = var * (rbf(Z, Z, ls) + jitter * np.eye(M))
    c = np.linalg.cholesky(Kuu)

    def moments(Xq):
        Kuf = var * rbf(Z, Xq, ls)
        A = cho_solve((c, True), Kuf).T
        mean = A @ m_u
        v = var - np.einsum("nm,mn->n", A, Kuf) + np.einsum("nm,mk,nk->n", A, S_u, A)
        return mean, v

    mean, v = moments(X)
    ell = -0.5 * np.log(2 * np.pi * noise) - ((y - mean) ** 2 + v) / (2 * noise)
    Kinv = cho_solve((c, True), np.eye(M))
    kl = 0.5 * (
        np.trace(Kinv @ S_u)
        + m_u @ Kinv @ m_u
        - M
        + np.linalg.slogdet(Kuu)[1]
        - np.linalg.slogdet(S_u)[1]
    )
    return ell.sum() - kl, moments(Xtest)


@pytest.fixture()
def one_output():
    rng = np.random.default_rng(0)
    N, M, d_x, d_h = 15, 6, 2, 2
    X = rng.uniform(-1, 1, (N, d_x))
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(N)
    h1 = np.array([0.4, -0.7])
    Zx = rng.uniform(-1, 1, (M, d_x))
    mod = module(
        n_outputs=1, d_x=d_x, d_h=d_h, n_inducing=M, network="identity", latent="point",
        jitter=1e-6,
    )  # fmt: skip
    ls = np.array([0.6, 0.9, 0.5, 1.3])
    set_params(
        mod,
        h_mean=h1[None],
        Z=np.hstack([Zx, np.tile(h1, (M, 1))]),
        log_lengthscales=np.log(ls),
        log_outputscale=np.log(1.7),
        log_noise=np.log(0.05),
        q_mean=rng.standard_normal(M),
        q_chol=raw_tri(random_tri(rng, M)),
    )
    return mod, X, y, h1, Zx, ls, rng


def test_one_output_point_latent_identity_network_is_plain_svgp(one_output):
    mod, X, y, h1, Zx, ls, rng = one_output
    M = Zx.shape[0]
    elbo = mod.elbo(t(X), t(y[:, None]), torch.ones(len(y), 1, dtype=bool), torch.tensor([0]), 1.0)
    elbo = elbo.item() + 0.5 * float(h1 @ h1)  # without the log prior of h_1
    # Whitened q(v) = N(m, L_S L_S^T) is the unwhitened q(u) = N(L m, L S L^T).
    Kuu = 1.7 * (rbf(Zx, Zx, ls[:2]) + 1e-6 * np.eye(M))
    L = np.linalg.cholesky(Kuu)
    Ls = np.tril(mod.q_chol.detach().numpy(), -1) + np.diag(np.exp(np.diag(mod.q_chol.detach())))
    m_u = L @ mod.q_mean.detach().numpy()
    S_u = L @ Ls @ Ls.T @ L.T
    Xtest = rng.uniform(-1, 1, (7, 2))
    ref, (mean_ref, var_ref) = numpy_svgp(X, y, Zx, 1.7, ls[:2], 0.05, m_u, S_u, 1e-6, Xtest)
    assert elbo == pytest.approx(ref, rel=1e-9)
    mean, var = mod.predict_moments(t(Xtest), torch.zeros(1, 1, 2, dtype=T64))
    np.testing.assert_allclose(mean[:, 0].numpy(), mean_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var[:, 0].numpy(), var_ref, rtol=1e-7, atol=1e-10)


def test_optimal_q_u_gives_titsias_collapsed_bound(one_output):
    mod, X, y, h1, Zx, ls, rng = one_output
    M, noise = Zx.shape[0], 0.05
    Kuu = 1.7 * (rbf(Zx, Zx, ls[:2]) + 1e-6 * np.eye(M))
    Kuf = 1.7 * rbf(Zx, X, ls[:2])
    L = np.linalg.cholesky(Kuu)
    W = solve_triangular(L, Kuf, lower=True)
    S_opt = np.linalg.inv(np.eye(M) + W @ W.T / noise)
    m_opt = S_opt @ W @ y / noise
    set_params(mod, q_mean=m_opt, q_chol=raw_tri(np.linalg.cholesky(S_opt)))
    obs = torch.ones(len(y), 1, dtype=bool)
    elbo = mod.elbo(t(X), t(y[:, None]), obs, torch.tensor([0]), 1.0).item() + 0.5 * h1 @ h1
    Qff = W.T @ W
    titsias = stats.multivariate_normal(np.zeros(len(y)), Qff + noise * np.eye(len(y))).logpdf(y)
    titsias -= (1.7 * len(y) - np.trace(Qff)) / (2 * noise)
    assert elbo == pytest.approx(titsias, rel=1e-9)
    # Ordering collapsed <= tighter (log1p) bound <= exact log marginal likelihood.
    mod.tighter_bound = True
    tighter = mod.elbo(t(X), t(y[:, None]), obs, torch.tensor([0]), 1.0).item() + 0.5 * h1 @ h1
    Kff = 1.7 * rbf(X, X, ls[:2])
    exact = stats.multivariate_normal(np.zeros(len(y)), Kff + noise * np.eye(len(y))).logpdf(y)
    assert titsias < tighter <= exact + 1e-9


# ------------------------------------------------------------ = LVMOGP


def lvmogp_problem(gaussian, seed=0):
    rng = np.random.default_rng(seed)
    N, P, d_x, d_h, m_x, m_h = 9, 6, 1, 2, 4, 3
    X = rng.uniform(0, 1, (N, d_x))
    Y = np.sin(4 * X) + 0.3 * rng.standard_normal((N, P))
    Y[rng.random(Y.shape) < 0.25] = np.nan
    Y[0] = 0.5  # every output observed at least once
    packer = bd.make_packer(P, d_x, d_h, m_x, m_h, gaussian)
    p = {
        "log_variance": np.array([np.log(1.3)]),
        "log_ls_x": np.log([0.35]),
        "log_ls_h": np.log([0.9, 1.4]),
        "log_noise": np.array([np.log(0.2)]),
        "Z_x": np.linspace(0, 1, m_x)[:, None],
        "Z_h": np.array([[-1.0, 0.5], [0.3, -0.8], [1.2, 1.0]]),
        "M": rng.standard_normal((m_x, m_h)),
        "L_sx": raw_tri(random_tri(rng, m_x)),
        "L_sh": raw_tri(random_tri(rng, m_h)),
        "mu": rng.standard_normal((P, d_h)),
        "log_S": np.log(rng.uniform(0.05, 0.4, (P, d_h))),
    }
    mod = module(
        n_outputs=P,
        d_x=d_x,
        d_h=d_h,
        n_inducing=m_x * m_h,
        network="identity",
        latent="meanfield" if gaussian else "point",
        jitter=1e-9,
    )
    # Grid Z_X x Z_H in column-major order (x fastest): K_uu = K_H kron K_X.
    Z = np.hstack([np.tile(p["Z_x"], (m_h, 1)), np.repeat(p["Z_h"], m_x, axis=0)])
    LS = np.kron(bd.tri_factor(p["L_sh"]), bd.tri_factor(p["L_sx"]))
    values = dict(
        h_mean=p["mu"],
        Z=Z,
        log_lengthscales=np.concatenate([p["log_ls_x"], p["log_ls_h"]]),
        log_outputscale=p["log_variance"][0],
        log_noise=p["log_noise"][0],
        q_mean=p["M"].ravel(order="F"),
        q_chol=raw_tri(LS),
    )
    if gaussian:
        values["h_log_std"] = 0.5 * p["log_S"]
    set_params(mod, **values)
    theta = packer.pack(p)
    data = bd.Data(X, Y.T)
    obs = torch.as_tensor(~np.isnan(Y))
    args = (t(X), t(np.nan_to_num(Y)), obs, torch.arange(P), 1.0)
    return mod, packer, theta, data, args


def test_identity_network_on_grid_equals_lvmogp_bound_and_gradient():
    mod, packer, theta, data, args = lvmogp_problem(gaussian=False)
    ref, gref = bd.elbo_and_grad(theta, packer, data, jitter=1e-9)
    elbo = mod.elbo(*args)
    assert elbo.item() == pytest.approx(ref, rel=1e-6)
    elbo.backward()
    g = packer.unpack(gref)
    np.testing.assert_allclose(mod.h_mean.grad.numpy(), g["mu"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(float(mod.log_noise.grad), g["log_noise"][0], rtol=1e-5)
    np.testing.assert_allclose(
        mod.log_lengthscales.grad.numpy(),
        np.concatenate([g["log_ls_x"], g["log_ls_h"]]),
        rtol=1e-5,
    )


def test_gaussian_latents_single_sample_bound_is_unbiased_for_psi_statistic_bound():
    mod, packer, theta, data, args = lvmogp_problem(gaussian=True, seed=1)
    ref = bd.elbo_and_grad(theta, packer, data, jitter=1e-9, grad=False)
    gen = torch.Generator().manual_seed(0)
    P, d_h = mod.h_mean.shape
    with torch.no_grad():
        eps = torch.randn(600, P, d_h, generator=gen, dtype=T64)
        draws = np.array([float(mod.elbo(*args, e)) for e in eps])
    se = draws.std() / np.sqrt(len(draws))
    assert abs(draws.mean() - ref) < 4 * se
    assert draws.std() > 0  # the draw really is random


def test_double_minibatch_estimator_is_unbiased_with_missing_entries():
    mod, _, _, _, (X, Y, obs, idx, _) = lvmogp_problem(gaussian=False, seed=2)
    N, P, b, p = X.shape[0], Y.shape[1], 3, 2
    X, Y, obs = X[:5], Y[:5], obs[:5].clone()
    obs[1, :3] = False
    N = 5
    with torch.no_grad():
        full = float(mod.elbo(X, Y, obs, idx, 1.0))
        vals = [
            float(mod.elbo(X[list(nb)], Y[list(nb)][:, list(pb)], obs[list(nb)][:, list(pb)],
                           torch.tensor(pb), N * P / (b * p)))
            for nb in itertools.combinations(range(N), b)
            for pb in itertools.combinations(range(P), p)
        ]  # fmt: skip
    assert np.mean(vals) == pytest.approx(full, rel=1e-12)
    assert np.std(vals) > 1e-3 * abs(full)


# ------------------------------------------------------- Lipschitz bound


def test_spectral_norm_bound_holds_after_every_step():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (20, 1))
    Y = np.sin(6 * X + rng.uniform(0, 2, 6)) + 0.05 * rng.standard_normal((20, 6))
    c = 0.3
    norms = []

    def check(mod, step):
        exact = torch.stack([torch.linalg.svdvals(b.weight.detach())[0] for b in mod.net.blocks])
        norms.append(exact.numpy().copy())

    est = TLVMOGPRegressor(
        n_inducing=8, n_epochs=6, batch_size=8, output_batch_size=3, spectral_norm_bound=c,
        learning_rate=0.05, random_state=0,
    )  # fmt: skip
    est._fit(X, Y, callback=check)
    norms = np.array(norms)
    assert len(norms) == est.n_iter_ == 6 * 3 * 2
    assert np.all(norms <= c * (1 + 1e-10))
    assert norms.max() > c * (1 - 1e-6)  # the bound was active, not vacuous


def test_residual_blocks_are_bi_lipschitz_and_small_weights_are_untouched():
    torch.manual_seed(0)
    c = 0.7
    net = LipschitzResNet(4, n_blocks=3, spectral_norm_bound=c).to(T64)
    with torch.no_grad():
        for blk in net.blocks:
            blk.weight.mul_(10.0)
    net.clamp_()
    assert torch.all(net.spectral_norms() <= c * (1 + 1e-12))
    a, b = torch.randn(500, 4, dtype=T64), torch.randn(500, 4, dtype=T64)
    for blk in net.blocks:

        def g(z, blk=blk):
            return z + torch.relu(blk(z))

        ratio = (g(a) - g(b)).norm(dim=1) / (a - b).norm(dim=1)
        assert torch.all(ratio >= 1 - c - 1e-12) and torch.all(ratio <= 1 + c + 1e-12)
    small = LipschitzResNet(3, n_blocks=1, spectral_norm_bound=5.0).to(T64)
    before = small.blocks[0].weight.detach().clone()
    small.clamp_()
    assert torch.equal(before, small.blocks[0].weight)


# ------------------------------------------------------------- gradients


@pytest.mark.parametrize("likelihood", ["gaussian", "zinb"])
@pytest.mark.parametrize("latent", ["full", "meanfield"])
def test_bound_vjp_against_finite_differences(likelihood, latent):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    N, P, d_x, d_h, M = 4, 3, 1, 2, 4
    mod = module(
        n_outputs=P, d_x=d_x, d_h=d_h, n_inducing=M, network="resnet", n_blocks=2,
        latent=latent, likelihood=likelihood, kernel="matern52" if latent == "full" else "rbf",
        n_quadrature=8, tighter_bound=likelihood == "gaussian",
    )  # fmt: skip
    with torch.no_grad():
        for prm in mod.parameters():
            prm.add_(0.3 * torch.randn_like(prm))
        mod.Z.copy_(torch.randn(M, d_x + d_h, dtype=T64))
    X = t(rng.uniform(-1, 1, (N, d_x)))
    Y = t(rng.poisson(2.0, (N, P)) if likelihood == "zinb" else rng.standard_normal((N, P)))
    obs = torch.as_tensor(rng.random((N, P)) < 0.8)
    eps = torch.randn(P, d_h, dtype=T64)
    names = [n for n, _ in mod.named_parameters()]
    params = [prm.detach().clone().requires_grad_(True) for prm in mod.parameters()]

    def f(Xin, *ps):
        out = torch.func.functional_call(
            mod, dict(zip(names, ps, strict=True)), (Xin, Y, obs, torch.arange(P), 2.5, eps)
        )
        return out

    assert torch.autograd.gradcheck(
        f, (X.clone().requires_grad_(True), *params), eps=1e-6, atol=1e-5, rtol=1e-4
    )


def test_zinb_torch_matches_numpy_and_its_vjp_finite_differences():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 8, 30).astype(float)
    f, alpha = rng.normal(0, 1.5, 30), rng.uniform(0.1, 2.0, 30)
    for zero_inflation in (0.0, 0.1):
        got = zinb_log_prob(t(y), t(f), t(alpha), scale=2.0, zero_inflation=zero_inflation).numpy()
        np.testing.assert_allclose(
            got, zinb_logpmf(y, f, alpha, scale=2.0, zero_inflation=zero_inflation), rtol=1e-12
        )
        assert torch.autograd.gradcheck(
            lambda a, b, zero_inflation=zero_inflation: zinb_log_prob(
                t(y), a, b, scale=2.0, zero_inflation=zero_inflation
            ),
            (t(f).requires_grad_(True), t(alpha).requires_grad_(True)),
        )
    mean, var = t(rng.normal(0, 1, 5)).requires_grad_(True), t(rng.uniform(0.1, 1, 5))
    var.requires_grad_(True)
    yy, aa = t(y[:5]), t(alpha[:5])
    assert torch.autograd.gradcheck(
        lambda m, v: gauss_hermite_expectation(lambda z: zinb_log_prob(yy, z, aa), m, v, 10),
        (mean, var),
    )


# ------------------------------------------------------------ estimator


def field(seed=0, N=40, P=24, frac=0.2, noise=0.05):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, N))[:, None]
    loc = np.linspace(0, 1, P)
    Y = np.sin(2 * np.pi * X + 2.0 * loc) + noise * rng.standard_normal((N, P))
    missing = rng.random(Y.shape) < frac
    Ytr = Y.copy()
    Ytr[missing] = np.nan
    return X, Ytr, Y, missing


FAST = dict(n_inducing=24, n_epochs=60, batch_size=20, output_batch_size=12, learning_rate=0.03)


@pytest.fixture(scope="module")
def fitted():
    X, Ytr, Y, missing = field()
    return TLVMOGPRegressor(**FAST, random_state=0).fit(X, Ytr), (X, Ytr, Y, missing)


def test_fit_predict_attributes_and_accuracy(fitted):
    model, (X, Ytr, Y, missing) = fitted
    mean, std = model.predict(X, return_std=True)
    P = Ytr.shape[1]
    assert mean.shape == std.shape == Ytr.shape and np.all(std > 0)
    assert model.latent_outputs_.shape == (P, 3)
    assert model.latent_covariances_.shape == (P, 3, 3)
    assert np.all(np.linalg.eigvalsh(model.latent_covariances_) > 0)
    assert model.inducing_points_.shape == (model.n_inducing_, 4)
    assert model.n_iter_ == 60 * 2 * 2 and len(model.loss_curve_) == 60
    assert model.loss_curve_[-1] < model.loss_curve_[0]
    rmse = np.sqrt(np.mean((mean - Y)[missing] ** 2))
    baseline = np.sqrt(np.mean((np.nanmean(Ytr, axis=0) - Y)[missing] ** 2))
    assert rmse < 0.3 * baseline
    assert model.score(X, Y) > 0.8


def test_reproducible_clone_and_pickle(fitted):
    model, (X, Ytr, *_) = fitted
    again = clone(model).fit(X, Ytr)
    np.testing.assert_array_equal(model.predict(X), again.predict(X))
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(model.predict(X), restored.predict(X))


def test_one_dimensional_target_and_point_latents():
    X, Ytr, *_ = field(P=1, frac=0.0)
    m = TLVMOGPRegressor(latent_posterior="point", n_inducing=10, n_epochs=3, random_state=0)
    mean, std = m.fit(X, Ytr[:, 0]).predict(X, return_std=True)
    assert mean.shape == std.shape == (X.shape[0],)
    assert np.all(m.latent_covariances_ == 0)


def test_two_draws_of_one_outputs_latents_start_correlated(rank_two_outputs):
    X, Y = rank_two_outputs
    model = TLVMOGPRegressor(n_latent=50, n_epochs=0, random_state=0).fit(X, Y)
    mod = model.module_
    gen = torch.Generator().manual_seed(0)
    P = Y.shape[1]
    x = torch.zeros(P, 1, dtype=T64)
    with torch.no_grad():
        E1, E2 = (
            mod.embed(torch.cat([x, mod.sample_h(torch.arange(P), eps)], 1))
            for eps in torch.randn(2, P, 50, generator=gen, dtype=T64)
        )
        k = torch.diagonal(_kernel(E1, E2, torch.exp(mod.log_lengthscales), 1.0, "rbf"))
    assert k.min() > 0.85


def test_latent_dimensions_beyond_the_rank_of_the_targets_keep_the_fit(rank_two_outputs):
    # n_latent=2 scores 0.93.
    X, Y = rank_two_outputs
    assert TLVMOGPRegressor(n_latent=50, random_state=0).fit(X, Y).score(X, Y) > 0.75


def test_zinb_counts():
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(0, 1, 30))[:, None]
    rate = np.exp(1.0 + np.sin(2 * np.pi * X + np.linspace(0, 2, 10)))
    Y = rng.poisson(rate).astype(float)
    Y[rng.random(Y.shape) < 0.1] = np.nan
    m = TLVMOGPRegressor(
        likelihood="zinb", n_inducing=12, n_epochs=30, batch_size=15, output_batch_size=5,
        learning_rate=0.03, random_state=0,
    ).fit(X, Y)  # fmt: skip
    mean, std = m.predict(X, return_std=True)
    assert np.all(mean >= 0) and np.all(std > 0) and m.dispersion_.shape == (10,)
    err = np.mean((mean - rate) ** 2)
    assert err < 0.5 * np.mean((np.nanmean(Y, axis=0) - rate) ** 2)


def test_bad_input_errors():
    X, Ytr, *_ = field(N=10, P=4)
    est = TLVMOGPRegressor(n_epochs=1, n_inducing=4)
    bad = Ytr.copy()
    bad[:, 2] = np.nan
    with pytest.raises(ValueError, match="no observed entry"):
        est.fit(X, bad)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X, Ytr[:-1])
    Xbad = X.copy()
    Xbad[3, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(Xbad, Ytr)
    Xbad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(Xbad, Ytr)
    with pytest.raises(ValueError, match="requires y"):
        est.fit(X, None)
    with pytest.raises(ValueError, match="non-negative integer counts"):
        TLVMOGPRegressor(likelihood="zinb", n_epochs=1).fit(X, Ytr)
    with pytest.raises(ValueError, match="tighter_bound"):
        TLVMOGPRegressor(likelihood="zinb", tighter_bound=True).fit(X, np.abs(np.round(Ytr)))
    with pytest.raises(ValueError, match="spectral_norm_bound"):
        TLVMOGPRegressor(spectral_norm_bound=0.0).fit(X, Ytr)
    with pytest.raises(ValueError, match="device"):
        TLVMOGPRegressor(device="no-such-device", n_epochs=1).fit(X, Ytr)
    with pytest.raises(NotFittedError):
        est.predict(X)
    est.fit(X, Ytr)
    with pytest.raises(ValueError, match="features"):
        est.predict(np.hstack([X, X]))


def test_torch_gauss_hermite_matches_closed_form():
    mean, var = t([0.3, -1.0]), t([0.5, 2.0])
    got = gauss_hermite_expectation(torch.exp, mean, var, 30)
    np.testing.assert_allclose(got.numpy(), np.exp(mean.numpy() + var.numpy() / 2), rtol=1e-12)


def test_docstring_example():
    import doctest
    import importlib
    import pkgutil

    import mvlearn_ext.deep.gaussian_process as mogp

    attempted = 0
    for info in pkgutil.iter_modules(mogp.__path__, mogp.__name__ + "."):
        module = importlib.import_module(info.name)
        flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        result = doctest.testmod(module, optionflags=flags)
        assert result.failed == 0, info.name
        attempted += result.attempted
    assert attempted >= 2  # the examples of both estimators ran


def test_the_shared_base_is_abstract():
    """The SVI base names its hooks as abstract: neither it nor a subclass lacking one builds."""
    from mvlearn_ext.deep.gaussian_process._base import _SVILVMOGPRegressor

    hooks = {"_latent_width", "_make_module", "_set_kernel_attributes"}
    assert _SVILVMOGPRegressor.__abstractmethods__ == hooks
    with pytest.raises(TypeError, match="abstract"):
        _SVILVMOGPRegressor()

    class NoKernelAttributes(_SVILVMOGPRegressor):
        def _latent_width(self):
            return 1

        def _make_module(self, Xs, mu0, observed, rng, seed, dtype):
            return None

    with pytest.raises(TypeError, match="_set_kernel_attributes"):
        NoKernelAttributes()
    # the concrete models are unchanged estimators: clone and get_params work
    model = TLVMOGPRegressor(n_epochs=1)
    assert clone(model).get_params() == model.get_params()
