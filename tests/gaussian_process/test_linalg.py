"""The compiled Kronecker / Psi-statistic kernels of the LVMOGP bound against
their NumPy references (``mvlearn_ext._lib._reference``), closed forms, Monte
Carlo and finite differences.

The kernels are called through their unchecked entries
(``mvlearn_ext._lib._kernels``), as the bound calls them. Tolerances against
a reference are float64 round-off of sums of a few dozen O(1) terms (1e-12
relative); against finite differences, the O(eps^2) truncation error.
"""

import numpy as np
import pytest

from mvlearn_ext._lib import _kernels as kern
from mvlearn_ext._lib import _reference as ref

RTOL = 1e-12  # compiled kernel vs NumPy reference: round-off only
ATOL = 1e-13


def spd(rng, n):
    A = rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n)


def assert_close(actual, desired):
    if not isinstance(actual, tuple):
        actual, desired = (actual,), (desired,)
    for a, d in zip(actual, desired, strict=True):
        np.testing.assert_allclose(a, d, rtol=RTOL, atol=ATOL)


def fd_vjp(f, args, i, cot, eps=1e-6, sym=False, rng=None):
    """<cot, df/dargs[i] . E> by central differences, for a random direction E."""
    rng = rng or np.random.default_rng(0)
    E = rng.standard_normal(np.shape(args[i]))
    if sym:
        E = E + E.T
    plus = list(args)
    minus = list(args)
    plus[i] = args[i] + eps * E
    minus[i] = args[i] - eps * E
    outs_p, outs_m = f(*plus), f(*minus)
    if not isinstance(outs_p, tuple):
        outs_p, outs_m, cot = (outs_p,), (outs_m,), (cot,)
    val = sum(np.sum(c * (p - m)) for c, p, m in zip(cot, outs_p, outs_m, strict=True))
    return val / (2 * eps), E


# ------------------------------------------------------------- identities


def test_kronecker_identities():
    rng = np.random.default_rng(0)
    A, B, C, D = spd(rng, 3), spd(rng, 4), spd(rng, 3), spd(rng, 4)
    np.testing.assert_allclose(np.kron(A, B) @ np.kron(C, D), np.kron(A @ C, B @ D))
    La, Lb = np.linalg.cholesky(A), np.linalg.cholesky(B)
    np.testing.assert_allclose(np.linalg.cholesky(np.kron(A, B)), np.kron(La, Lb), atol=1e-12)
    ld = np.linalg.slogdet(np.kron(A, B))[1]
    np.testing.assert_allclose(ld, 4 * np.linalg.slogdet(A)[1] + 3 * np.linalg.slogdet(B)[1])
    np.testing.assert_allclose(np.trace(np.kron(A, B)), np.trace(A) * np.trace(B))
    np.testing.assert_allclose(kern.kron_logdet(A, B), ld, rtol=1e-12)
    np.testing.assert_allclose(ref.kron_logdet(A, B), ld, rtol=1e-12)


@pytest.mark.parametrize("shape", [(3, 2, 4, 5), (1, 1, 1, 1), (6, 3, 2, 7)])
def test_kron_mv_matches_dense_and_reference(shape):
    a, ac, b, bc = shape
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((a, ac)), rng.standard_normal((b, bc))
    X = rng.standard_normal((bc, ac))
    Y = kern.kron_mv(A, B, X, n_threads=2)
    np.testing.assert_allclose(Y, ref.kron_dense_mv(A, B, X), atol=1e-12)
    assert_close(Y, ref.kron_mv(A, B, X))


def test_kron_mv_vjp_matches_reference_and_finite_differences():
    rng = np.random.default_rng(2)
    A, B, X = rng.standard_normal((3, 4)), rng.standard_normal((5, 2)), rng.standard_normal((2, 4))
    Ybar = rng.standard_normal((5, 3))
    grads = kern.kron_mv_vjp(A, B, X, Ybar)
    assert_close(grads, ref.kron_mv_vjp(A, B, X, Ybar))
    args = (A, B, X)
    for i, g in zip((2, 0, 1), grads, strict=True):
        fd, E = fd_vjp(lambda A, B, X: kern.kron_mv(A, B, X), args, i, Ybar)
        np.testing.assert_allclose(np.sum(g * E), fd, rtol=1e-7, atol=1e-9)


def test_kron_solve_and_vjp():
    rng = np.random.default_rng(3)
    A, B, X = spd(rng, 3), spd(rng, 4), rng.standard_normal((4, 3))
    Z = kern.kron_solve(A, B, X)
    z = np.linalg.solve(np.kron(A, B), X.ravel(order="F"))
    np.testing.assert_allclose(Z.ravel(order="F"), z, atol=1e-12)
    assert_close(Z, ref.kron_solve_factored(A, B, X))
    Zbar = rng.standard_normal(Z.shape)
    Xbar, Abar, Bbar = kern.kron_solve_vjp(A, B, Z, Zbar)
    assert_close((Xbar, Abar, Bbar), ref.kron_solve_vjp(A, B, Z, Zbar))
    for i, g, sym in ((2, Xbar, False), (0, Abar, True), (1, Bbar, True)):
        fd, E = fd_vjp(kern.kron_solve, (A, B, X), i, Zbar, sym=sym)
        np.testing.assert_allclose(np.sum(g * E), fd, rtol=1e-6, atol=1e-10)


def test_kron_logdet_gradient():
    rng = np.random.default_rng(4)
    A, B = spd(rng, 3), spd(rng, 5)
    out = kern.kron_logdet(A, B, return_grad=True)
    assert_close(out, ref.kron_logdet(A, B, return_grad=True))
    _, gA, gB = out
    for i, g in ((0, gA), (1, gB)):
        fd, E = fd_vjp(kern.kron_logdet, (A, B), i, 1.0, sym=True)
        np.testing.assert_allclose(np.sum(g * E), fd, rtol=1e-6)


def test_kron_bindings_refuse_what_would_break_memory_safety():
    # The entries are unchecked; the bindings still check shapes, dtype and layout.
    rng = np.random.default_rng(5)
    A, B = spd(rng, 3), spd(rng, 4)
    with pytest.raises(ValueError, match="X must have shape"):
        kern.kron_mv(A, B, np.ones((3, 3)))
    with pytest.raises(ValueError, match="square"):
        kern.kron_solve(np.ones((2, 3)), B, np.ones((4, 2)))
    with pytest.raises(ValueError, match="C-contiguous"):
        kern.kron_mv(np.asfortranarray(A[:, :2]), B, np.ones((4, 2)))
    with pytest.raises(TypeError):
        kern.kron_mv(A.astype(np.float32), B, np.ones((4, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        kern.kron_solve(-A, B, np.ones((4, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        kern.kron_logdet(A * np.nan, B)


def test_kron_gaussian_kl_equals_dense():
    rng = np.random.default_rng(6)
    a, b = 3, 4
    SA, SB, KA, KB = spd(rng, a) / 5, spd(rng, b) / 5, spd(rng, a), spd(rng, b)
    m = rng.standard_normal((b, a))

    def dense_kl(m, S, K):
        k = len(m)
        Kinv_S = np.linalg.solve(K, S)
        return 0.5 * (
            np.trace(Kinv_S)
            + m @ np.linalg.solve(K, m)
            - k
            + np.linalg.slogdet(K)[1]
            - np.linalg.slogdet(S)[1]
        )

    vm = m.ravel(order="F")
    S = np.kron(SA, SB)
    np.testing.assert_allclose(
        ref.kron_gaussian_kl(m, SA, SB, KA, KB), dense_kl(vm, S, np.kron(KA, KB)), rtol=1e-10
    )
    np.testing.assert_allclose(
        ref.kron_gaussian_kl(m, SA, SB), dense_kl(vm, S, np.eye(a * b)), rtol=1e-10
    )


# --------------------------------------------------------- Psi-statistics


def psi_problem(rng, P=4, D=2, M=5):
    mu = rng.standard_normal((P, D))
    S = rng.uniform(0.05, 0.8, (P, D))
    Z = rng.standard_normal((M, D))
    ls = rng.uniform(0.6, 1.5, D)
    return mu, S, Z, ls


def test_psi_stats_match_reference_and_point_limit():
    rng = np.random.default_rng(7)
    mu, S, Z, ls = psi_problem(rng, P=9, D=3, M=6)
    p1c, p2c = kern.rbf_psi_stats(mu, S, Z, ls, n_threads=2)
    p1n, p2n = ref.rbf_psi_stats(mu, S, Z, ls)
    np.testing.assert_allclose(p1c, p1n, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(p2c, p2n, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(kern.rbf_psi_stats(mu, S, Z, ls, psi2=False), p1c)
    # S = 0: the statistics are the kernel itself.
    p1, p2 = kern.rbf_psi_stats(mu, np.zeros_like(S), Z, ls)
    k = np.exp(-0.5 * (((mu[:, None, :] - Z[None]) / ls) ** 2).sum(-1))
    np.testing.assert_allclose(p1, k, rtol=1e-13)
    np.testing.assert_allclose(p2, k[:, :, None] * k[:, None, :], rtol=1e-12)


def test_psi_stats_match_monte_carlo():
    rng = np.random.default_rng(8)
    mu, S, Z, ls = psi_problem(rng, P=2, D=2, M=3)
    p1, p2 = kern.rbf_psi_stats(mu, S, Z, ls)
    n = 200_000
    for p in range(2):
        h = mu[p] + np.sqrt(S[p]) * rng.standard_normal((n, 2))
        k = np.exp(-0.5 * (((h[:, None, :] - Z[None]) / ls) ** 2).sum(-1))  # (n, M)
        kk = k[:, :, None] * k[:, None, :]
        se1 = k.std(0) / np.sqrt(n)
        se2 = kk.std(0) / np.sqrt(n)
        assert np.all(np.abs(k.mean(0) - p1[p]) < 5 * se1 + 1e-12)
        assert np.all(np.abs(kk.mean(0) - p2[p]) < 5 * se2 + 1e-12)


def test_psi_stats_vjp_matches_reference_and_finite_differences():
    rng = np.random.default_rng(9)
    mu, S, Z, ls = psi_problem(rng)
    P, M = mu.shape[0], Z.shape[0]
    g1, g2 = rng.standard_normal((P, M)), rng.standard_normal((P, M, M))
    grads = kern.rbf_psi_stats_vjp(mu, S, Z, ls, g1, g2, n_threads=2)
    assert_close(grads, ref.rbf_psi_stats_vjp(mu, S, Z, ls, g1, g2))
    for i, g in enumerate(grads):
        fd, E = fd_vjp(kern.rbf_psi_stats, (mu, S, Z, ls), i, (g1, g2), eps=1e-6)
        np.testing.assert_allclose(np.sum(g * E), fd, rtol=1e-6, atol=1e-9)
    # Only one cotangent given (the other is zero).
    m1 = kern.rbf_psi_stats_vjp(mu, S, Z, ls, psi1bar=g1)
    m2 = kern.rbf_psi_stats_vjp(mu, S, Z, ls, psi2bar=g2)
    assert_close(m1, ref.rbf_psi_stats_vjp(mu, S, Z, ls, psi1bar=g1))
    assert_close(m2, ref.rbf_psi_stats_vjp(mu, S, Z, ls, psi2bar=g2))
    for a, b, c in zip(m1, m2, grads, strict=True):
        np.testing.assert_allclose(a + b, c, rtol=1e-12, atol=1e-14)


def test_psi_stats_vjp_does_not_depend_on_the_thread_count():
    # The sums over outputs (Zbar, lengthscales bar) run over fixed blocks of
    # outputs, so that 1, 2 or 3 threads give the same bits.
    rng = np.random.default_rng(11)
    mu, S, Z, ls = psi_problem(rng, P=300)
    P, M = mu.shape[0], Z.shape[0]
    g1, g2 = rng.standard_normal((P, M)), rng.standard_normal((P, M, M))
    one = kern.rbf_psi_stats_vjp(mu, S, Z, ls, g1, g2, n_threads=1)
    for nt in (2, 3):
        for a, b in zip(one, kern.rbf_psi_stats_vjp(mu, S, Z, ls, g1, g2, n_threads=nt),
                        strict=True):  # fmt: skip
            np.testing.assert_array_equal(a, b)


def test_psi_bindings_refuse_mismatched_shapes():
    rng = np.random.default_rng(10)
    mu, S, Z, ls = psi_problem(rng)
    with pytest.raises(ValueError, match="S must have the shape"):
        kern.rbf_psi_stats(mu, S[:, :1].copy(), Z, ls)
    with pytest.raises(ValueError, match="psi1bar"):
        kern.rbf_psi_stats_vjp(mu, S, Z, ls, psi1bar=np.ones((2, 2)))
    with pytest.raises(ValueError, match="mu must be C-contiguous"):
        kern.rbf_psi_stats(np.asfortranarray(mu), S, Z, ls)


# ------------------------------------------------ masked output statistics


def masked_problem(rng, N=13, P=7, K=3, J=2, frac=0.3):
    Yt = rng.standard_normal((P, N))
    Yt[rng.random((P, N)) < frac] = np.nan
    return Yt, rng.standard_normal((N, K)), rng.standard_normal((N, J))


def test_masked_stats_match_reference_and_loop():
    rng = np.random.default_rng(11)
    Yt, G, W = masked_problem(rng)
    out_c = kern.masked_output_stats(Yt, G, W, n_threads=2)
    assert_close(out_c, ref.masked_output_stats(Yt, G, W))
    D, E, C, cnt, ysq = out_c
    p = 2
    obs = ~np.isnan(Yt[p])
    np.testing.assert_allclose(D[p], G[obs].T @ G[obs], atol=1e-13)
    np.testing.assert_allclose(E[p], Yt[p, obs] @ G[obs], atol=1e-13)
    np.testing.assert_allclose(C[p], W[obs].sum(0), atol=1e-13)
    assert cnt[p] == obs.sum()
    np.testing.assert_allclose(ysq[p], np.sum(Yt[p, obs] ** 2))


def test_masked_stats_vjp_matches_reference_and_finite_differences():
    rng = np.random.default_rng(12)
    Yt, G, W = masked_problem(rng)
    P, K, J = Yt.shape[0], G.shape[1], W.shape[1]
    Db, Eb, Cb = (rng.standard_normal(s) for s in ((P, K, K), (P, K), (P, J)))
    Gbar, Wbar = kern.masked_output_stats_vjp(Yt, G, J, Db, Eb, Cb, n_threads=2)
    assert_close((Gbar, Wbar), ref.masked_output_stats_vjp(Yt, G, J, Db, Eb, Cb))
    assert_close(
        kern.masked_output_stats_vjp(Yt, G, J, Db, None, None),
        ref.masked_output_stats_vjp(Yt, G, J, Db, None, None),
    )

    def f(G, W):
        return kern.masked_output_stats(Yt, G, W)[:3]

    for i, g in ((0, Gbar), (1, Wbar)):
        fd, E = fd_vjp(f, (G, W), i, (Db, Eb, Cb))
        np.testing.assert_allclose(np.sum(g * E), fd, rtol=1e-7, atol=1e-9)


def test_masked_stats_errors_and_all_missing():
    rng = np.random.default_rng(13)
    Yt, G, W = masked_problem(rng)
    Yt[0] = np.nan
    D, E, C, cnt, _ = kern.masked_output_stats(Yt, G, W)
    assert cnt[0] == 0 and np.all(D[0] == 0) and np.all(E[0] == 0)
    Yt[1, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        kern.masked_output_stats(Yt, G, W)
    with pytest.raises(ValueError, match="rows"):
        kern.masked_output_stats(Yt, G[:-1], W)
