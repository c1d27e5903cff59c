"""The shared anchor-graph kernels against NumPy/SciPy references and closed forms."""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from mvlearn_ext.cluster import _common
from mvlearn_ext.cluster._common import (
    anchor_spectral_embedding,
    generalized_power_iteration,
    kmeans_anchors,
    procrustes,
    sample_anchors,
    simplex_qp,
    simplex_qp_active_set,
    simplex_qp_update,
    spectral_rotation,
    squared_view_weights,
)
from mvlearn_ext.cluster._kernels import indicator_sweeps

shapes = st.tuples(st.integers(1, 7), st.integers(1, 7))
seeds = st.integers(0, 2**31 - 1)


def _random_orthonormal(rng, p, q):
    return procrustes(rng.normal(size=(p, q)))


def _on_simplex(Z, atol=1e-12):
    return bool(np.all(Z >= 0) and np.allclose(Z.sum(axis=0), 1.0, atol=atol))


# --------------------------------------------------------------------------- procrustes


@settings(max_examples=40)
@given(shape=shapes, seed=seeds)
def test_procrustes_is_the_polar_factor(shape, seed):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=shape)
    W = procrustes(M)
    p, q = shape
    gram = W.T @ W if p >= q else W @ W.T
    np.testing.assert_allclose(gram, np.eye(min(p, q)), atol=1e-12)
    reference, _ = scipy.linalg.polar(M)
    np.testing.assert_allclose(W, reference, atol=1e-10)


def test_procrustes_attains_the_maximum_of_the_trace():
    rng = np.random.default_rng(0)
    for p, q in ((6, 3), (3, 6), (4, 4)):
        M = rng.normal(size=(p, q))
        best = np.sum(procrustes(M) * M)
        candidates = [np.sum(_random_orthonormal(rng, p, q) * M) for _ in range(500)]
        assert best >= max(candidates) - 1e-12
        # The maximum of tr(W^T M) is the nuclear norm of M.
        np.testing.assert_allclose(best, np.linalg.svd(M, compute_uv=False).sum())


def test_generalized_power_iteration_is_monotone_and_beats_random_points():
    rng = np.random.default_rng(1)
    for p, q in ((3, 6), (6, 3)):
        G = rng.normal(size=(p, p))
        Q = G @ G.T
        K = rng.normal(size=(q, q))
        P = K @ K.T
        C = rng.normal(size=(p, q))

        def f(W, Q=Q, P=P, C=C):
            return np.sum((Q @ W @ P) * W) - 2 * np.sum(W * C)

        W = _random_orthonormal(rng, p, q)
        values = [f(W)]
        for _ in range(30):
            W = generalized_power_iteration(C, W, Q=Q, P=P, max_iter=1)
            values.append(f(W))
        assert np.all(np.diff(values) <= 1e-9 * abs(values[0]))
        W = generalized_power_iteration(C, W, Q=Q, P=P, max_iter=500)
        gram = W.T @ W if p >= q else W @ W.T
        np.testing.assert_allclose(gram, np.eye(min(p, q)), atol=1e-10)
        assert f(W) <= min(f(_random_orthonormal(rng, p, q)) for _ in range(300))


def test_generalized_power_iteration_reduces_to_procrustes():
    rng = np.random.default_rng(2)
    C = rng.normal(size=(5, 3))
    W0 = _random_orthonormal(rng, 5, 3)
    P = np.diag([3.0, 2.0, 1.0])
    # Orthonormal columns and Q = I: the quadratic term is tr(P), a constant.
    np.testing.assert_allclose(generalized_power_iteration(C, W0, P=P), procrustes(C))
    Ct = C.T
    np.testing.assert_allclose(
        generalized_power_iteration(Ct, W0.T, Q=P), procrustes(Ct), atol=1e-12
    )


# --------------------------------------------------------------------------- view weights


@settings(max_examples=50)
@given(losses=st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=8), seed=seeds)
def test_squared_view_weights_minimise_the_weighted_loss(losses, seed):
    losses = np.asarray(losses)
    alpha = squared_view_weights(losses)
    np.testing.assert_allclose(alpha, (1 / losses) / np.sum(1 / losses), rtol=1e-12)
    assert np.all(alpha >= 0) and np.isclose(alpha.sum(), 1.0)
    value = np.sum(alpha**2 * losses)
    rng = np.random.default_rng(seed)
    others = rng.dirichlet(np.ones(len(losses)), size=200)
    assert value <= np.min(np.sum(others**2 * losses, axis=1)) * (1 + 1e-12)


def test_inverse_square_root_weights_are_worse_unless_losses_are_equal():
    losses = np.array([1.0, 4.0, 9.0])
    alpha = squared_view_weights(losses)
    awmvc = (1 / np.sqrt(losses)) / np.sum(1 / np.sqrt(losses))
    assert np.sum(awmvc**2 * losses) > np.sum(alpha**2 * losses) + 1e-3
    equal = np.full(3, 2.0)
    np.testing.assert_allclose(squared_view_weights(equal), np.full(3, 1 / 3))


def test_squared_view_weights_zero_losses_and_errors():
    np.testing.assert_array_equal(squared_view_weights([0.0, 1.0, 0.0]), [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(squared_view_weights([0.0]), [1.0])
    # Tiny losses do not overflow.
    np.testing.assert_allclose(squared_view_weights([1e-320, 2e-320]), [2 / 3, 1 / 3])
    for bad in ([], [[1.0]], [1.0, -1.0], [1.0, np.nan], [np.inf, 1.0]):
        with pytest.raises(ValueError):
            squared_view_weights(bad)


# --------------------------------------------------------------------------- simplex QP


def _slsqp(H, b):
    m = len(b)
    result = minimize(
        lambda z: 0.5 * z @ H @ z - b @ z,
        np.full(m, 1.0 / m),
        jac=lambda z: H @ z - b,
        bounds=[(0.0, None)] * m,
        constraints=[{"type": "eq", "fun": lambda z: z.sum() - 1, "jac": lambda z: np.ones(m)}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    return result.x


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rank_deficient", [False, True])
def test_simplex_qp_matches_a_generic_solver(seed, rank_deficient):
    rng = np.random.default_rng(seed)
    m, n = 5, 12
    A = rng.normal(size=(3 if rank_deficient else 8, m))
    H = A.T @ A + (0.0 if rank_deficient else 0.1) * np.eye(m)
    B = rng.normal(scale=3.0, size=(m, n))
    Z, n_iter = simplex_qp(H, B, max_iter=20000, tol=1e-12)
    assert _on_simplex(Z) and n_iter >= 1

    def f(z, b):
        return 0.5 * z @ H @ z - b @ z

    for i in range(n):
        z_ref = _slsqp(H, B[:, i])
        # The objective is at least as low as SLSQP's (to rounding).
        assert f(Z[:, i], B[:, i]) <= f(z_ref, B[:, i]) + 1e-9
        if not rank_deficient:  # unique minimiser
            np.testing.assert_allclose(Z[:, i], z_ref, atol=1e-5)
        # KKT: the gradient is minimal (and equal) on the support.
        g = H @ Z[:, i] - B[:, i]
        support = Z[:, i] > 1e-9
        assert g[support].max() - g.min() <= 1e-6 * (1 + np.abs(g).max())


@settings(max_examples=40)
@given(m=st.integers(1, 9), n=st.integers(1, 20), c=st.floats(1e-3, 1e3), seed=seeds)
def test_simplex_qp_with_scaled_identity_is_the_projection(m, n, c, seed):
    rng = np.random.default_rng(seed)
    B = rng.normal(scale=5.0, size=(m, n))
    Z, _ = simplex_qp(c * np.eye(m), B, tol=1e-12)
    # Reference: sort-based projection of b / c, written out here.
    expected = np.empty_like(B)
    for i in range(n):
        y = B[:, i] / c
        u = np.sort(y)[::-1]
        css = np.cumsum(u) - 1
        rho = np.nonzero(u - css / np.arange(1, m + 1) > 0)[0][-1]
        expected[:, i] = np.maximum(y - css[rho] / (rho + 1), 0)
    np.testing.assert_allclose(Z, expected, atol=1e-10)


def test_simplex_qp_special_cases():
    rng = np.random.default_rng(3)
    m, n = 4, 6
    # A point on the simplex with H = I, b = z is its own solution.
    Z0 = rng.dirichlet(np.ones(m), size=n).T
    Z, _ = simplex_qp(np.eye(m), Z0)
    np.testing.assert_allclose(Z, Z0, atol=1e-12)
    # H = 0: the mass goes to the largest linear coefficient.
    B = rng.normal(size=(m, n))
    Z, n_iter = simplex_qp(np.zeros((m, m)), B)
    np.testing.assert_array_equal(Z.argmax(axis=0), B.argmax(axis=0))
    assert n_iter == 0 and _on_simplex(Z)
    # No columns.
    Z, _ = simplex_qp(np.eye(m), np.empty((m, 0)))
    assert Z.shape == (m, 0)


def test_simplex_qp_columns_are_independent_and_warm_start_agrees():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(10, 6))
    H = A.T @ A + 0.5 * np.eye(6)
    B = rng.normal(size=(6, 40))
    Z, _ = simplex_qp(H, B, max_iter=5000, tol=1e-11)
    Z_part, _ = simplex_qp(H, B[:, 5:9], max_iter=5000, tol=1e-11)
    np.testing.assert_allclose(Z_part, Z[:, 5:9], atol=1e-13)
    Z_warm, _ = simplex_qp(H, B, Z0=rng.random((6, 40)), max_iter=5000, tol=1e-11)
    np.testing.assert_allclose(Z_warm, Z, atol=1e-8)


# The exact (active-set) solver: KKT to rounding, a generic solver, limit cases.


def _kkt_residual(H, B, Z):
    """Largest violation of the simplex QP's KKT conditions, per column, relative.

    With ``g = H z - b`` and ``mu = -min_j g_j``: ``g_j + mu >= 0`` holds by
    construction, so the residual is the spread of ``g`` over the support
    (it must be 0), plus any infeasibility.
    """
    G = H @ Z - B
    spread = np.array(
        [np.ptp(G[Z[:, i] > 0, i]) if (Z[:, i] > 0).any() else np.inf for i in range(Z.shape[1])]
    )
    scale = np.maximum(np.abs(B).max(axis=0), np.abs(H).max())
    infeasible = np.abs(Z.sum(axis=0) - 1) + np.maximum(-Z.min(axis=0), 0)
    return spread / scale + infeasible


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("alpha", [0.01, 1.0, 100.0])
def test_simplex_qp_active_set_is_exact_and_matches_slsqp_and_fista(seed, alpha):
    rng = np.random.default_rng(seed)
    m, d, n = 12, 16, 200
    A = rng.normal(size=(m, d))  # anchors as rows
    X = A[rng.integers(m, size=n)] + rng.normal(scale=0.7, size=(n, d))
    H = A @ A.T + alpha * np.eye(m)
    B = A @ X.T
    Z, n_iter, n_fallback = simplex_qp_active_set(H, B)
    assert _on_simplex(Z) and n_fallback == 0 and n_iter >= 1
    # KKT to rounding, with no iteration tolerance.
    assert _kkt_residual(H, B, Z).max() < 1e-12
    values = _qp_values(H, B, Z)
    # Never above FISTA run to a tight tolerance, and within its accuracy.
    Z_fista, _ = simplex_qp(H, B, max_iter=20000, tol=1e-12)
    fista_values = _qp_values(H, B, Z_fista)
    assert np.all(values <= fista_values + 1e-12 * np.abs(fista_values).max())
    np.testing.assert_allclose(Z, Z_fista, atol=1e-8)
    # An independent reference on every column: SLSQP.
    for i in range(0, n, 5):
        z_ref = _slsqp(H, B[:, i])
        assert values[i] <= 0.5 * z_ref @ H @ z_ref - B[:, i] @ z_ref + 1e-10
        np.testing.assert_allclose(Z[:, i], z_ref, atol=1e-5)


def test_simplex_qp_active_set_limit_cases():
    rng = np.random.default_rng(7)
    m, d = 6, 10
    A = rng.normal(size=(m, d))
    # A sample equal to an anchor, alpha = 0: all its weight on that anchor.
    Z, _, n_fallback = simplex_qp_active_set(A @ A.T, A @ A.T)
    np.testing.assert_allclose(Z, np.eye(m), atol=1e-12)
    assert n_fallback == 0
    # alpha -> inf: the uniform point of the simplex (error O(1 / alpha)).
    X = rng.normal(scale=3.0, size=(25, d))
    Z, _, _ = simplex_qp_active_set(A @ A.T + 1e9 * np.eye(m), A @ X.T)
    np.testing.assert_allclose(Z, 1.0 / m, atol=1e-7)
    # H = c I: the Euclidean projection of b / c (closed form).
    B = rng.normal(scale=5.0, size=(m, 30))
    Z, _, _ = simplex_qp_active_set(2.5 * np.eye(m), B)
    Z_proj, _ = simplex_qp(2.5 * np.eye(m), B, tol=1e-12)
    np.testing.assert_allclose(Z, Z_proj, atol=1e-12)
    # One anchor; no columns.
    np.testing.assert_array_equal(simplex_qp_active_set([[2.0]], [[1.0, -3.0]])[0], [[1.0, 1.0]])
    assert simplex_qp_active_set(np.eye(3), np.empty((3, 0)))[0].shape == (3, 0)


def test_simplex_qp_active_set_falls_back_to_fista_on_a_singular_hessian():
    rng = np.random.default_rng(8)
    m, d, n = 10, 3, 60  # alpha = 0 and fewer features than anchors: H has rank 3
    A = rng.normal(size=(m, d))
    B = A @ rng.normal(scale=2.0, size=(d, n))
    H = A @ A.T
    Z, _, n_fallback = simplex_qp_active_set(H, B, max_iter=20000, tol=1e-12)
    assert n_fallback > 0 and _on_simplex(Z)
    for i in range(0, n, 6):
        z_ref = _slsqp(H, B[:, i])
        assert _qp_values(H, B[:, [i]], Z[:, [i]])[0] <= (
            0.5 * z_ref @ H @ z_ref - B[:, i] @ z_ref + 1e-9
        )
    # H = 0: every column is handed over and goes to its largest coefficient.
    Z, _, n_fallback = simplex_qp_active_set(np.zeros((m, m)), B)
    np.testing.assert_array_equal(Z.argmax(axis=0), B.argmax(axis=0))
    assert n_fallback == n


def test_simplex_qp_active_set_columns_are_independent_bits():
    rng = np.random.default_rng(9)
    A = rng.normal(size=(15, 20))
    H = A @ A.T + np.eye(15)
    B = A @ rng.normal(size=(20, 3000))
    Z, _, _ = simplex_qp_active_set(H, B, n_threads=1)
    part, _, _ = simplex_qp_active_set(H, B[:, 100:107], n_threads=1)
    np.testing.assert_array_equal(part, Z[:, 100:107])
    np.testing.assert_array_equal(simplex_qp_active_set(H, B, n_threads=2)[0], Z)


def _qp_values(H, B, Z):
    return 0.5 * np.einsum("in,in->n", H @ Z, Z) - np.einsum("in,in->n", B, Z)


@pytest.mark.parametrize("block", [7, 16_384])
def test_simplex_qp_update_solves_the_same_qps_in_place(block):
    rng = np.random.default_rng(5)
    A = rng.normal(size=(9, 6))
    H = A.T @ A + 0.2 * np.eye(6)
    B = rng.normal(scale=2.0, size=(6, 30))
    calls = []

    def linear_rows(start, stop):
        calls.append((start, stop))
        return B[:, start:stop].T

    Z = rng.dirichlet(np.ones(6), size=30).T.copy()
    n_iter = simplex_qp_update(H, linear_rows, Z, max_iter=5000, tol=1e-12, block_columns=block)
    expected, _ = simplex_qp(H, B, max_iter=5000, tol=1e-12)
    np.testing.assert_allclose(Z, expected, atol=1e-9)
    assert n_iter >= 1 and _on_simplex(Z)
    # Every column was asked for exactly once, in blocks of at most `block`.
    covered = np.concatenate([np.arange(a, b) for a, b in calls])
    np.testing.assert_array_equal(covered, np.arange(30))
    assert max(b - a for a, b in calls) <= block


def test_simplex_qp_update_never_goes_uphill():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(4, 8))
    H = A.T @ A  # rank deficient: FISTA is slow, a single step may overshoot
    B = rng.normal(scale=3.0, size=(8, 200))
    Z0 = rng.dirichlet(0.3 * np.ones(8), size=200).T.copy()
    before = _qp_values(H, B, Z0)
    for max_iter in (1, 2, 3):
        Z = Z0.copy()
        simplex_qp_update(H, lambda a, b: B[:, a:b].T, Z, max_iter=max_iter, tol=0.0)
        after = _qp_values(H, B, Z)
        assert np.all(after <= before) and _on_simplex(Z)
        kept = np.all(Z == Z0, axis=0)
        # Columns that moved strictly improved; the others are bit-identical.
        assert np.all(after[~kept] <= before[~kept])
    with pytest.raises(ValueError, match="lambda_max"):
        simplex_qp_update(np.zeros((8, 8)), lambda a, b: B[:, a:b].T, Z0.copy())


# --------------------------------------------------------------------------- spectral embedding


def _projector(F):
    return F @ F.T


def _random_graph(rng, m, n, zero_rows=0):
    Z = rng.random((m, n)) ** 3
    Z[:zero_rows] = 0.0
    return Z / Z.sum(axis=0)


@settings(max_examples=40)
@given(m=st.integers(2, 8), n=st.integers(9, 30), seed=seeds)
def test_anchor_embedding_matches_the_dense_eigendecomposition(m, n, seed):
    rng = np.random.default_rng(seed)
    Z = _random_graph(rng, m, n)
    k = min(3, m)
    F, sigma, P = anchor_spectral_embedding(Z, k, return_projection=True)
    S = Z.T @ np.diag(1 / Z.sum(axis=1)) @ Z
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    np.testing.assert_allclose(S.sum(axis=1), 1.0, atol=1e-12)
    w, V = np.linalg.eigh(S)
    np.testing.assert_allclose(sigma**2, w[::-1][:k], atol=1e-10)
    np.testing.assert_allclose(sigma[0], 1.0, atol=1e-10)
    np.testing.assert_allclose(F.T @ F, np.eye(k), atol=1e-8)
    # Matrix-free product S F = Z^T (Delta^{-1} (Z F)) = F Sigma^2.
    SF = Z.T @ ((Z @ F) / Z.sum(axis=1)[:, None])
    np.testing.assert_allclose(SF, S @ F, atol=1e-12)
    np.testing.assert_allclose(SF, F * sigma**2, atol=1e-8)
    np.testing.assert_allclose(F, Z.T @ P, atol=1e-12)
    # Projectors agree when the k-th eigenvalue is separated from the next.
    w_desc = w[::-1]
    if k < n and w_desc[k - 1] - w_desc[k] > 1e-6:
        Vk = V[:, ::-1][:, :k]
        np.testing.assert_allclose(_projector(F), _projector(Vk), atol=1e-6)


def test_anchor_embedding_sparse_zero_degree_and_unnormalised():
    rng = np.random.default_rng(5)
    Z = _random_graph(rng, 7, 25, zero_rows=2)
    F, sigma, P = anchor_spectral_embedding(Z, 3, return_projection=True)
    Fs, sigma_s = anchor_spectral_embedding(sp.csr_matrix(Z), 3)
    np.testing.assert_allclose(_projector(Fs), _projector(F), atol=1e-10)
    np.testing.assert_allclose(sigma_s, sigma, atol=1e-12)
    assert np.all(np.isfinite(F)) and np.all(P[:2] == 0)
    F_kept, _ = anchor_spectral_embedding(Z[2:], 3)
    np.testing.assert_allclose(_projector(F_kept), _projector(F), atol=1e-10)
    with pytest.raises(ValueError, match="nonzero degree"):
        anchor_spectral_embedding(Z, 6)
    # Unnormalised: the top left singular vectors of Z^T.
    F, sigma = anchor_spectral_embedding(Z, 4, normalize=False)
    U, s, _ = np.linalg.svd(Z.T, full_matrices=False)
    np.testing.assert_allclose(sigma, s[:4], atol=1e-10)
    np.testing.assert_allclose(_projector(F), _projector(U[:, :4]), atol=1e-8)
    # Beyond the rank, the extra columns are zero.
    F, sigma = anchor_spectral_embedding(Z, 7, normalize=False)
    assert np.allclose(F[:, 5:], 0) and np.allclose(sigma[5:], 0, atol=1e-7)


# --------------------------------------------------------------------------- spectral rotation


def _indicator_objective(G, labels, k, scaled):
    counts = np.bincount(labels, minlength=k)
    sums = np.bincount(labels, weights=G[np.arange(len(labels)), labels], minlength=k)
    return np.sum(sums / np.sqrt(counts)) if scaled else np.sum(sums)


@pytest.mark.parametrize("scaled", [True, False])
def test_indicator_sweeps_end_at_a_local_optimum(scaled):
    rng = np.random.default_rng(6)
    n, k = 30, 4
    G = rng.normal(size=(n, k))
    labels = np.arange(n) % k
    before = _indicator_objective(G, labels, k, scaled)
    indicator_sweeps(G, labels, scaled, 100)
    after = _indicator_objective(G, labels, k, scaled)
    assert after >= before and np.bincount(labels, minlength=k).min() >= 1
    # Brute force: no single move that keeps every cluster non-empty improves.
    for i in range(n):
        if np.sum(labels == labels[i]) == 1:
            continue
        for b in range(k):
            moved = labels.copy()
            moved[i] = b
            assert _indicator_objective(G, moved, k, scaled) <= after + 1e-10
    if not scaled:  # without singletons, this is the row-wise argmax
        np.testing.assert_array_equal(labels, G.argmax(axis=1))


@pytest.mark.parametrize("scaled", [True, False])
def test_spectral_rotation_is_monotone_and_recovers_a_rotated_indicator(scaled):
    rng = np.random.default_rng(7)
    n, k = 90, 3
    y = rng.permutation(np.arange(n) % k)
    Y = np.eye(k)[y]
    Y_hat = Y / np.sqrt(Y.sum(axis=0)) if scaled else Y
    R_true = _random_orthonormal(rng, k, k)
    F = Y_hat @ R_true.T + 0.01 * rng.normal(size=(n, k))
    labels, R, history = spectral_rotation(F, scaled=scaled, random_state=0, return_objective=True)
    assert adjusted_rand_score(y, labels) == 1.0
    np.testing.assert_allclose(R.T @ R, np.eye(k), atol=1e-12)
    assert np.all(np.diff(history) <= 1e-12 * max(1.0, abs(history[0])))
    # The recorded objective is ||F R - Y_hat||^2.
    Yl = np.eye(k)[labels]
    Yl_hat = Yl / np.sqrt(Yl.sum(axis=0)) if scaled else Yl
    np.testing.assert_allclose(history[-1], np.sum((F @ R - Yl_hat) ** 2), rtol=1e-10)


def test_spectral_rotation_is_monotone_on_noise_and_deterministic():
    rng = np.random.default_rng(8)
    F = np.linalg.qr(rng.normal(size=(200, 5)))[0]
    for scaled in (True, False):
        labels, R, history = spectral_rotation(
            F, scaled=scaled, random_state=3, return_objective=True
        )
        assert np.all(np.diff(history) <= 1e-12 * abs(history[0]))
        assert np.bincount(labels, minlength=5).min() >= 1
        again, R_again = spectral_rotation(F, scaled=scaled, random_state=3)
        np.testing.assert_array_equal(again, labels)
        np.testing.assert_array_equal(R_again, R)
    with pytest.raises(ValueError, match="n_samples >= n_clusters"):
        spectral_rotation(F[:3])


def test_empty_clusters_are_reseeded_with_the_farthest_sample():
    G = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.5, 0.4, 0.1]])
    labels = G.argmax(axis=1)
    filled = _common._fill_empty_clusters(G, labels.copy(), 3, False)
    # Cluster 2 was empty; sample 3 has the largest residual ||g_i - e_{label}||.
    np.testing.assert_array_equal(filled, [0, 0, 1, 2])


# --------------------------------------------------------------------------- anchors


def test_kmeans_anchors_are_the_kmeans_centres():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(200, 3))
    anchors = kmeans_anchors(X, 7, random_state=0)
    expected = KMeans(7, n_init=1, max_iter=100, random_state=0).fit(X).cluster_centers_
    np.testing.assert_allclose(anchors, expected)
    # Below MINIBATCH_THRESHOLD rows the default is Lloyd; the choice can be forced
    # either way (a block path passes its full data's size).
    mini = kmeans_anchors(X, 7, random_state=0, minibatch=True)
    assert mini.shape == (7, 3) and not np.allclose(mini, anchors)
    np.testing.assert_array_equal(kmeans_anchors(X, 7, random_state=0, minibatch=False), anchors)
    with pytest.raises(ValueError, match="n_anchors"):
        kmeans_anchors(X, 201, random_state=0)


def test_sample_anchors_are_distinct_rows():
    X = np.arange(40.0).reshape(20, 2)
    anchors = sample_anchors(X, 8, random_state=0)
    assert len({tuple(a) for a in anchors}) == 8
    assert all(any(np.array_equal(a, x) for x in X) for a in anchors)
    np.testing.assert_array_equal(anchors, sample_anchors(X, 8, random_state=0))


@pytest.mark.parametrize("standardize", [True, False])
def test_stack_scaled_views_equals_the_scaled_views_side_by_side(standardize):
    from mvlearn_ext.cluster._preprocessing import (
        apply_view_scaling,
        fit_view_scaling,
        stack_scaled_views,
    )

    rng = np.random.default_rng(7)
    Xs = [rng.normal(size=(20, 3)), rng.normal(size=(20, 5)).astype(np.float32)]
    means, scales = fit_view_scaling(Xs) if standardize else (None, None)
    joint, views = stack_scaled_views(Xs, means, scales)
    expected = apply_view_scaling(Xs, means, scales)
    assert joint.flags.c_contiguous and joint.dtype == np.float64
    np.testing.assert_allclose(joint, np.hstack(expected), rtol=1e-15, atol=0)
    for view, ref in zip(views, expected, strict=True):
        assert np.shares_memory(view, joint)
        np.testing.assert_allclose(view, ref, rtol=1e-15, atol=0)
