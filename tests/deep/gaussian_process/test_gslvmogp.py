"""GSLVMOGPRegressor: oracles (LVMOGP for one term, a dense SVGP for several), gradients."""

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone

from mvlearn_ext.deep.gaussian_process import GSLVMOGPRegressor
from mvlearn_ext.deep.gaussian_process._drivers import _GSLVMOGP
from mvlearn_ext.deep.gaussian_process._kernels import _spread_lengthscales
from mvlearn_ext.gaussian_process import _bound as bd

torch.set_num_threads(1)
T64 = torch.float64


def t(a):
    return torch.as_tensor(np.asarray(a), dtype=T64)


def raw_tri(L):
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


def gs_module(Q, rng, *, N=8, P=5, d_x=1, d_h=2, m_x=4, m_h=3, latent="point", jitter=1e-9):
    mod = _GSLVMOGP(
        n_outputs=P, d_x=d_x, d_h=d_h, n_terms=Q, n_inducing=m_x, n_inducing_latent=m_h,
        latent=latent, jitter=jitter,
    ).to(T64)  # fmt: skip
    values = dict(
        Z_x=rng.uniform(0, 1, (Q, m_x, d_x)),
        Z_h=rng.standard_normal((Q, m_h, d_h)),
        log_variance=np.log(rng.uniform(0.5, 1.5, Q)),
        log_ls_x=np.log(rng.uniform(0.2, 0.5, (Q, d_x))),
        log_ls_h=np.log(rng.uniform(0.7, 1.5, (Q, d_h))),
        q_mean=rng.standard_normal((m_x, m_h)),
        q_chol_x=raw_tri(random_tri(rng, m_x)),
        q_chol_h=raw_tri(random_tri(rng, m_h)),
        h_mean=rng.standard_normal((P, Q * d_h)),
        log_noise=np.log(0.2),
        mean_const=0.3,
    )
    with torch.no_grad():
        for name, v in values.items():
            getattr(mod, name).copy_(t(v))
    X = rng.uniform(0, 1, (N, d_x))
    Y = np.sin(4 * X) + 0.3 * rng.standard_normal((N, P))
    obs = rng.random(Y.shape) > 0.25
    obs[0] = True
    return mod, values, X, Y, obs


def dense_reference_bound(v, X, Y, obs, jitter):
    """The bound of an SVGP on the observed pairs with the kernel
    ``sum_q s_q k_X^q k_H^q``, inducing variables ``u_ij = sum_q f_q(Z_X^q[i],
    Z_H^q[j])`` and whitened ``q(v) = N(vec m, S_H kron S_X)``, all dense."""
    Q, m_x, _ = v["Z_x"].shape
    m_h, d_h = v["Z_h"].shape[1:]
    s, noise = np.exp(v["log_variance"]), np.exp(v["log_noise"])
    H = v["h_mean"].reshape(-1, Q, d_h)
    ni, pi = np.nonzero(obs)
    Kuu = np.zeros((m_x * m_h, m_x * m_h))
    Kuf = np.zeros((m_x * m_h, ni.size))
    for q in range(Q):
        lx, lh = np.exp(v["log_ls_x"][q]), np.exp(v["log_ls_h"][q])
        Kx = s[q] * (rbf(v["Z_x"][q], v["Z_x"][q], lx) + jitter * np.eye(m_x))
        Kh = rbf(v["Z_h"][q], v["Z_h"][q], lh) + jitter * np.eye(m_h)
        Kuu += np.kron(Kh, Kx)
        kx = s[q] * rbf(v["Z_x"][q], X[ni], lx)  # (m_x, n)
        kh = rbf(v["Z_h"][q], H[pi, q], lh)  # (m_h, n)
        Kuf += (kh[:, None, :] * kx[None, :, :]).reshape(m_x * m_h, -1)
    if Q > 1:  # the dense sum's own relative jitter, at least sqrt(eps)
        Kuu += (
            max(jitter, np.sqrt(np.finfo(float).eps)) * np.diag(Kuu).mean() * np.eye(Kuu.shape[0])
        )
    L = np.linalg.cholesky(Kuu)
    W = np.linalg.solve(L, Kuf)
    m = v["q_mean"].T.reshape(-1)  # input index fastest
    LS = np.kron(_tri_np(v["q_chol_h"]), _tri_np(v["q_chol_x"]))
    S = LS @ LS.T
    mean = W.T @ m + v["mean_const"]
    var = s.sum() - (W * W).sum(0) + ((LS.T @ W) ** 2).sum(0)
    y = Y[ni, pi]
    ell = -0.5 * np.log(2 * np.pi * noise) - 0.5 * ((y - mean) ** 2 + var) / noise
    M = m.size
    kl_u = 0.5 * (np.trace(S) + m @ m - M - np.linalg.slogdet(S)[1])
    kl_h = 0.5 * (v["h_mean"] ** 2).sum()  # point latents: the prior's quadratic
    return ell.sum() - kl_u - kl_h


def _tri_np(raw):
    return np.tril(raw, -1) + np.diag(np.exp(np.diag(raw)))


def elbo_args(X, Y, obs):
    P = Y.shape[1]
    return t(X), t(Y), torch.as_tensor(obs), torch.arange(P), 1.0


@pytest.mark.parametrize("Q", [1, 2, 3])
def test_bound_equals_dense_svgp_with_the_sum_kernel(Q):
    rng = np.random.default_rng(Q)
    mod, v, X, Y, obs = gs_module(Q, rng)
    ref = dense_reference_bound(v, X, Y, obs, jitter=1e-9)
    with torch.no_grad():
        elbo = float(mod.elbo(*elbo_args(X, Y, obs)))
    assert elbo == pytest.approx(ref, rel=1e-9)


def test_one_term_kronecker_path_equals_the_dense_path():
    rng = np.random.default_rng(5)
    mod, _, X, _, _ = gs_module(1, rng, latent="meanfield")
    E = torch.cat([t(X).repeat(5, 1), mod.h_mean.detach().repeat_interleave(X.shape[0], 0)], 1)
    kind, Lx, Lh = mod._kuu_chol()
    assert kind == "kron"
    dense = ("dense", torch.kron(Lh, Lx))  # chol(K_H kron K_X) = L_H kron L_X
    for a, b in zip(mod.qf(E), mod.qf(E, dense), strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_one_term_equals_lvmogp_bound_and_gradient():
    rng = np.random.default_rng(0)
    N, P, d_x, d_h, m_x, m_h = 9, 6, 1, 2, 4, 3
    X = rng.uniform(0, 1, (N, d_x))
    Y = np.sin(4 * X) + 0.3 * rng.standard_normal((N, P))
    Y[rng.random(Y.shape) < 0.25] = np.nan
    Y[0] = 0.5
    packer = bd.make_packer(P, d_x, d_h, m_x, m_h, False)
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
    }
    ref, gref = bd.elbo_and_grad(packer.pack(p), packer, bd.Data(X, Y.T), jitter=1e-9)
    mod = _GSLVMOGP(n_outputs=P, d_x=d_x, d_h=d_h, n_terms=1, n_inducing=m_x,
                    n_inducing_latent=m_h, latent="point", jitter=1e-9).to(T64)  # fmt: skip
    with torch.no_grad():
        mod.Z_x[0].copy_(t(p["Z_x"]))
        mod.Z_h[0].copy_(t(p["Z_h"]))
        mod.log_variance.copy_(t(p["log_variance"]))
        mod.log_ls_x[0].copy_(t(p["log_ls_x"]))
        mod.log_ls_h[0].copy_(t(p["log_ls_h"]))
        mod.log_noise.copy_(t(p["log_noise"][0]))
        mod.q_mean.copy_(t(p["M"]))
        mod.q_chol_x.copy_(t(p["L_sx"]))
        mod.q_chol_h.copy_(t(p["L_sh"]))
        mod.h_mean.copy_(t(p["mu"]))
    obs = ~np.isnan(Y)
    elbo = mod.elbo(*elbo_args(X, np.nan_to_num(Y), obs))
    assert elbo.item() == pytest.approx(ref, rel=1e-9)
    elbo.backward()
    g = packer.unpack(gref)
    np.testing.assert_allclose(mod.h_mean.grad.numpy(), g["mu"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(mod.q_mean.grad.numpy(), g["M"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(mod.Z_h.grad[0].numpy(), g["Z_h"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(mod.log_ls_x.grad[0].numpy(), g["log_ls_x"], rtol=1e-6)
    np.testing.assert_allclose(float(mod.log_variance.grad[0]), g["log_variance"][0], rtol=1e-6)


def test_kronecker_kl_equals_the_dense_gaussian_kl():
    rng = np.random.default_rng(2)
    mod, v, *_ = gs_module(2, rng)
    LS = np.kron(_tri_np(v["q_chol_h"]), _tri_np(v["q_chol_x"]))
    S, m = LS @ LS.T, v["q_mean"].T.reshape(-1)
    dense = 0.5 * (np.trace(S) + m @ m - m.size - np.linalg.slogdet(S)[1])
    assert mod.kl_u().item() == pytest.approx(dense, rel=1e-12)


@pytest.mark.parametrize("Q,latent", [(1, "full"), (2, "meanfield")])
def test_bound_vjp_against_finite_differences(Q, latent):
    rng = np.random.default_rng(4)
    mod, _, X, Y, obs = gs_module(Q, rng, N=4, P=3, m_x=3, m_h=2, latent=latent, jitter=1e-6)
    eps = torch.randn(3, Q * 2, dtype=T64, generator=torch.Generator().manual_seed(0))
    names = [n for n, _ in mod.named_parameters()]
    params = [prm.detach().clone().requires_grad_(True) for prm in mod.parameters()]
    args = (t(Y), torch.as_tensor(obs), torch.arange(3), 2.5, eps)

    def f(Xin, *ps):
        return torch.func.functional_call(mod, dict(zip(names, ps, strict=True)), (Xin, *args))

    assert torch.autograd.gradcheck(
        f, (t(X).requires_grad_(True), *params), eps=1e-6, atol=1e-5, rtol=1e-4
    )


@pytest.mark.parametrize("Q", [1, 2])
def test_predict_moments_match_the_training_marginals(Q):
    rng = np.random.default_rng(6)
    mod, _, X, _, _ = gs_module(Q, rng, jitter=1e-6)  # an inverse of K_uu is formed
    eps = torch.zeros(1, mod.n_outputs, mod.d_h, dtype=T64)
    with torch.no_grad():
        mean, var = mod.predict_moments(t(X), eps)
        N, P = mean.shape
        E = torch.cat([t(X).repeat_interleave(P, 0), mod.h_mean.repeat(N, 1)], 1)
        m2, v2, _ = mod.qf(E)
    np.testing.assert_allclose(mean.numpy().ravel(), m2.numpy(), rtol=1e-9, atol=1e-11)
    # a difference of O(1) terms: absolute error relative to k_ff
    np.testing.assert_allclose(var.numpy().ravel(), v2.numpy(), rtol=1e-9, atol=1e-9)


# -------------------------------------------------------------- estimator
def field(seed=0, N=40, P=24, frac=0.2, noise=0.05):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, N))[:, None]
    loc = np.linspace(0, 1, P)
    Y = np.sin(2 * np.pi * X + 2.0 * loc) + noise * rng.standard_normal((N, P))
    missing = rng.random(Y.shape) < frac
    Ytr = np.where(missing, np.nan, Y)
    return X, Ytr, Y, missing


FAST = dict(n_epochs=60, batch_size=20, output_batch_size=12, learning_rate=0.03, n_jobs=1)


@pytest.fixture(scope="module")
def fitted():
    X, Ytr, Y, missing = field()
    return GSLVMOGPRegressor(n_terms=2, **FAST, random_state=0).fit(X, Ytr), (X, Ytr, Y, missing)


def test_fit_predict_attributes_and_accuracy(fitted):
    model, (X, Ytr, Y, missing) = fitted
    mean, std = model.predict(X, return_std=True)
    P = Ytr.shape[1]
    assert mean.shape == std.shape == Ytr.shape and np.all(std > 0)
    assert model.latent_outputs_.shape == (P, 4)
    assert model.latent_covariances_.shape == (P, 4, 4)
    assert model.variances_.shape == (2,) and model.lengthscales_.shape == (2, 1)
    assert model.inducing_inputs_.shape == (2, model.n_inducing_, 1)
    assert model.inducing_latent_.shape == (2, model.n_inducing_latent_, 2)
    assert model.n_iter_ == 60 * 2 * 2 and model.loss_curve_[-1] < model.loss_curve_[0]
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


def test_zinb_counts_and_point_latents():
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(0, 1, 30))[:, None]
    rate = np.exp(1.0 + np.sin(2 * np.pi * X + np.linspace(0, 2, 10)))
    Y = rng.poisson(rate).astype(float)
    Y[rng.random(Y.shape) < 0.1] = np.nan
    m = GSLVMOGPRegressor(
        likelihood="zinb", latent_posterior="point", n_epochs=30, batch_size=15,
        output_batch_size=5, random_state=0, n_jobs=1,
    ).fit(X, Y)  # fmt: skip
    mean, std = m.predict(X, return_std=True)
    assert np.all(mean >= 0) and np.all(std > 0) and np.all(m.latent_covariances_ == 0)
    assert np.mean((mean - rate) ** 2) < 0.5 * np.mean((np.nanmean(Y, axis=0) - rate) ** 2)


def test_bad_input_errors():
    X, Ytr, *_ = field(N=10, P=4)
    bad = Ytr.copy()
    bad[:, 2] = np.nan
    with pytest.raises(ValueError, match="no observed entry"):
        GSLVMOGPRegressor(n_epochs=1).fit(X, bad)
    with pytest.raises(ValueError, match="GSLVMOGPRegressor requires y"):
        GSLVMOGPRegressor(n_epochs=1).fit(X, None)
    with pytest.raises(ValueError, match="n_terms"):
        GSLVMOGPRegressor(n_terms=0).fit(X, Ytr)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        GSLVMOGPRegressor(n_epochs=1).fit(X, Ytr[:-1])
    assert "network" not in GSLVMOGPRegressor().get_params()


def test_spread_lengthscales_keep_the_scaled_distance_and_floor_flat_columns():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 2))
    H = np.concatenate(
        [rng.standard_normal((300, 3)), 1e-2 * rng.standard_normal((300, 20))], axis=1
    )
    ls_x, ls_h = _spread_lengthscales(X, H)
    # Five unit coordinates: lengthscales near sqrt(5), the flat ones too.
    np.testing.assert_allclose(ls_x, np.sqrt(5), rtol=0.15)
    np.testing.assert_allclose(ls_h, np.sqrt(5), rtol=0.15)
    # The scaled squared distance of two pairs [x; h] is about 2, not 2 * 25.
    i, j = rng.integers(0, 200, (2, 500))
    k, m = rng.integers(0, 300, (2, 500))
    d2 = (((X[i] - X[j]) / ls_x) ** 2).sum(1) + (((H[k] - H[m]) / ls_h) ** 2).sum(1)
    assert 1.5 < d2.mean() < 2.5
    # Constant columns only: unit lengthscales.
    (ls,) = _spread_lengthscales(np.ones((5, 3)))
    np.testing.assert_array_equal(ls, 1.0)


def test_two_draws_of_one_outputs_latents_start_correlated(rank_two_outputs):
    X, Y = rank_two_outputs
    mod = GSLVMOGPRegressor(n_latent=30, n_epochs=0, random_state=0).fit(X, Y).module_
    gen = torch.Generator().manual_seed(0)
    idx = torch.arange(Y.shape[1])
    with torch.no_grad():
        h1, h2 = (
            mod.sample_h(idx, torch.randn(idx.shape[0], 30, generator=gen, dtype=T64))
            for _ in range(2)
        )
        k = torch.exp(-0.5 * (((h1 - h2) / torch.exp(mod.log_ls_h[0])) ** 2).sum(1))
    assert k.min() > 0.9


@pytest.mark.parametrize("n_latent", [10, 30])
def test_latent_dimensions_beyond_the_rank_of_the_targets_do_not_stop_the_fit(
    n_latent, rank_two_outputs
):
    # A prediction at the mean scores 0; n_latent=2 scores 0.90.
    X, Y = rank_two_outputs
    model = GSLVMOGPRegressor(n_latent=n_latent, random_state=0).fit(X, Y)
    assert model.score(X, Y) > 0.5


def test_verbose_progress_names_the_estimator(capsys):
    X, Ytr, *_ = field(N=10, P=4)
    GSLVMOGPRegressor(n_epochs=2, verbose=1, random_state=0).fit(X, Ytr)
    err = capsys.readouterr().err
    assert "[GSLVMOGPRegressor] 2 steps" in err and "TLVMOGP" not in err
