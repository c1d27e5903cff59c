"""The Kronecker LVMOGP bound against dense oracles: a dense SVGP bound on the
full (input, output) grid, Titsias' collapsed bound and the exact marginal
likelihood; its gradient against finite differences."""

import numpy as np
import pytest

from mvlearn_ext.gaussian_process import _bound as bd

JIT = 1e-6


def problem(rng, N=7, P=5, D_x=2, D_h=2, M_x=4, M_h=3, frac=0.0, gaussian=False):
    X = rng.standard_normal((N, D_x))
    Yt = rng.standard_normal((P, N))
    if frac:
        Yt[rng.random((P, N)) < frac] = np.nan
        Yt[:, 0] = 1.0  # every output keeps an observation
    pk = bd.make_packer(P, D_x, D_h, M_x, M_h, gaussian)
    theta = 0.3 * rng.standard_normal(pk.size)
    return bd.Data(X, Yt), pk, theta


def dense_svgp_elbo(theta, pk, data):
    """SVGP bound on the N*P grid with the product kernel, dense matrices only."""
    p = pk.unpack(theta)
    var = np.exp(p["log_variance"][0])
    lsx, lsh = np.exp(p["log_ls_x"]), np.exp(p["log_ls_h"])
    noise = np.exp(p["log_noise"][0])
    X, H = data.X, p["mu"]  # point latents
    m_x, m_h = p["M"].shape
    kx = lambda A, B: var * bd.rbf(A, B, lsx)  # noqa: E731
    kh = lambda A, B: bd.rbf(A, B, lsh)  # noqa: E731
    # Grid point (n, p) -> column-major index n + N p; inducing (i, j) -> i + m_x j.
    Kff = np.kron(kh(H, H), kx(X, X))
    Kfu = np.kron(kh(H, p["Z_h"]), kx(X, p["Z_x"]))
    Kuu = np.kron(
        bd.rbf(p["Z_h"], p["Z_h"], lsh) + JIT * np.eye(m_h),
        var * (bd.rbf(p["Z_x"], p["Z_x"], lsx) + JIT * np.eye(m_x)),
    )
    L = np.linalg.cholesky(Kuu)
    Lsx, Lsh = bd.tri_factor(p["L_sx"]), bd.tri_factor(p["L_sh"])
    S_w = np.kron(Lsh @ Lsh.T, Lsx @ Lsx.T)
    m = L @ p["M"].ravel(order="F")
    S = L @ S_w @ L.T
    Kinv_Kuf = np.linalg.solve(Kuu, Kfu.T)
    mean = Kinv_Kuf.T @ m
    v = np.diag(Kff) - np.sum(Kfu.T * Kinv_Kuf, 0) + np.sum(Kinv_Kuf * (S @ Kinv_Kuf), 0)
    y = data.Yt.T.ravel(order="F")
    obs = ~np.isnan(y)
    ll = np.sum(
        -0.5 * np.log(2 * np.pi * noise) - ((y[obs] - mean[obs]) ** 2 + v[obs]) / (2 * noise)
    )
    k = len(m)
    kl = 0.5 * (
        np.trace(np.linalg.solve(Kuu, S))
        + m @ np.linalg.solve(Kuu, m)
        - k
        + np.linalg.slogdet(Kuu)[1]
        - np.linalg.slogdet(S)[1]
    )
    return ll - kl - 0.5 * np.sum(H**2)


@pytest.mark.parametrize("frac", [0.0, 0.3])
def test_kronecker_bound_equals_dense_svgp(frac):
    rng = np.random.default_rng(0)
    data, pk, theta = problem(rng, frac=frac)
    kron = bd.elbo_and_grad(theta, pk, data, jitter=JIT, grad=False)
    dense = dense_svgp_elbo(theta, pk, data)
    assert abs(kron - dense) <= 1e-9 * abs(dense)


@pytest.mark.parametrize("gaussian", [True, False])
def test_gradient_matches_finite_differences(gaussian):
    rng = np.random.default_rng(1)
    data, pk, theta = problem(rng, N=8, P=5, M_x=4, M_h=3, frac=0.3, gaussian=gaussian)
    _, g = bd.elbo_and_grad(theta, pk, data, jitter=JIT)
    fd = np.empty_like(theta)
    eps = 1e-6
    for i in range(pk.size):
        d = np.zeros_like(theta)
        d[i] = eps
        f = lambda t: bd.elbo_and_grad(t, pk, data, jitter=JIT, grad=False)  # noqa: E731
        fd[i] = (f(theta + d) - f(theta - d)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())


def _dense_matrices(theta, pk, data):
    p = pk.unpack(theta)
    var, lsx, lsh = np.exp(p["log_variance"][0]), np.exp(p["log_ls_x"]), np.exp(p["log_ls_h"])
    m_x, m_h = p["M"].shape
    kx = lambda A, B: var * bd.rbf(A, B, lsx)  # noqa: E731
    H = p["mu"]
    Kff = np.kron(bd.rbf(H, H, lsh), kx(data.X, data.X))
    Kfu = np.kron(bd.rbf(H, p["Z_h"], lsh), kx(data.X, p["Z_x"]))
    Kuu = np.kron(
        bd.rbf(p["Z_h"], p["Z_h"], lsh) + JIT * np.eye(m_h),
        var * (bd.rbf(p["Z_x"], p["Z_x"], lsx) + JIT * np.eye(m_x)),
    )
    return p, Kff, Kfu, Kuu, np.exp(p["log_noise"][0])


def collapsed_and_exact(theta, pk, data):
    """Titsias' collapsed bound and the exact log marginal likelihood (dense)."""
    p, Kff, Kfu, Kuu, noise = _dense_matrices(theta, pk, data)
    y = data.Yt.T.ravel(order="F")
    Qff = Kfu @ np.linalg.solve(Kuu, Kfu.T)
    n = len(y)

    def log_normal(C):
        return -0.5 * (y @ np.linalg.solve(C, y) + np.linalg.slogdet(C)[1] + n * np.log(2 * np.pi))

    collapsed = log_normal(Qff + noise * np.eye(n)) - np.trace(Kff - Qff) / (2 * noise)
    exact = log_normal(Kff + noise * np.eye(n))
    prior_h = -0.5 * np.sum(p["mu"] ** 2)  # the point-latent term of our bound
    return collapsed + prior_h, exact + prior_h


def test_optimal_q_gives_collapsed_bound_single_output():
    """P = 1, M_H = 1: the optimal q(U) is Kronecker, and the bound at it is Titsias' bound."""
    rng = np.random.default_rng(2)
    data, pk, theta = problem(rng, N=12, P=1, D_x=1, D_h=1, M_x=5, M_h=1)
    p, Kff, Kfu, Kuu, noise = _dense_matrices(theta, pk, data)
    y = data.Yt.T.ravel(order="F")
    Sigma = Kuu + Kfu.T @ Kfu / noise
    S_opt = Kuu @ np.linalg.solve(Sigma, Kuu)
    m_opt = Kuu @ np.linalg.solve(Sigma, Kfu.T @ y) / noise
    L = np.linalg.cholesky(Kuu)
    Mw = np.linalg.solve(L, m_opt)
    Sw = np.linalg.solve(L, np.linalg.solve(L, S_opt).T).T
    Lsw = np.linalg.cholesky(0.5 * (Sw + Sw.T))
    raw = np.tril(Lsw, -1) + np.diag(np.log(np.diag(Lsw)))
    p["M"] = Mw.reshape(-1, 1)
    p["L_sx"], p["L_sh"] = raw, np.zeros((1, 1))
    theta_opt = pk.pack(p)
    elbo = bd.elbo_and_grad(theta_opt, pk, data, jitter=JIT, grad=False)
    collapsed, exact = collapsed_and_exact(theta_opt, pk, data)
    np.testing.assert_allclose(elbo, collapsed, rtol=1e-8)
    assert collapsed <= exact
    # The optimum is stationary in the variational parameters.
    _, g = bd.elbo_and_grad(theta_opt, pk, data, jitter=JIT)
    for name in ("M", "L_sx"):
        assert np.abs(g[pk.slices[name]]).max() < 1e-6 * max(1.0, abs(elbo))


def test_bound_ordering_many_outputs():
    """Any Kronecker q(U) <= collapsed bound <= exact log marginal likelihood."""
    rng = np.random.default_rng(3)
    data, pk, theta = problem(rng, N=6, P=4, M_x=3, M_h=2)
    collapsed, exact = collapsed_and_exact(theta, pk, data)
    assert collapsed <= exact
    for _ in range(5):
        th = theta.copy()
        for name in ("M", "L_sx", "L_sh"):
            th[pk.slices[name]] = rng.standard_normal(pk.slices[name].stop - pk.slices[name].start)
        assert bd.elbo_and_grad(th, pk, data, jitter=JIT, grad=False) <= collapsed + 1e-9


@pytest.mark.parametrize("gaussian", [False, True])
def test_missing_complement_route_equals_direct_route(gaussian):
    """Full-grid sums minus the missing entries == sums over the observed entries."""
    data, pk, theta = problem(np.random.default_rng(3), P=9, N=8, frac=0.3, gaussian=gaussian)
    direct = bd.Data(data.X, data.Yt, complement=False)
    comp = bd.Data(data.X, data.Yt, complement=True)
    e1, g1 = bd.elbo_and_grad(theta, pk, direct, jitter=JIT)
    e2, g2 = bd.elbo_and_grad(theta, pk, comp, jitter=JIT)
    assert abs(e1 - e2) < 1e-10 * abs(e1)
    np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-9 * np.abs(g1).max())


@pytest.mark.parametrize("frac", [0.0, 0.3])
@pytest.mark.parametrize("gaussian", [False, True])
def test_optimal_mean_maximises_the_bound(frac, gaussian):
    """optimal_mean zeroes the gradient wrt M~ and no perturbation of it raises the bound
    (the bound is concave quadratic in M~)."""
    rng = np.random.default_rng(4)
    data, pk, theta = problem(rng, P=9, N=8, frac=frac, gaussian=gaussian)
    th = theta.copy()
    sl = pk.slices["M"]
    th[sl] = bd.optimal_mean(theta, pk, data, jitter=JIT).ravel()
    e, g = bd.elbo_and_grad(th, pk, data, jitter=JIT)
    assert np.abs(g[sl]).max() < 1e-8 * max(1.0, np.abs(g).max())
    assert e >= bd.elbo_and_grad(theta, pk, data, jitter=JIT, grad=False)
    for _ in range(5):
        t2 = th.copy()
        t2[sl] += 0.05 * rng.standard_normal(sl.stop - sl.start)
        assert bd.elbo_and_grad(t2, pk, data, jitter=JIT, grad=False) < e
