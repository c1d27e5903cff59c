"""The package's simplex QP: KKT conditions, closed forms, faces, SLSQP, limit cases."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from mvlearn_ext.utils import _simplex_qp
from mvlearn_ext.utils._simplex_qp import simplex_qp

METHODS = ["active_set", "fista"]
seeds = st.integers(0, 2**31 - 1)


def _on_simplex(Z, atol=1e-12):
    return Z.min() >= 0 and np.allclose(Z.sum(axis=0), 1.0, atol=atol)


def _qp_values(H, B, Z):
    return 0.5 * np.einsum("in,in->n", H @ Z, Z) - np.einsum("in,in->n", B, Z)


def _kkt_residual(H, B, Z):
    """Largest violation of the simplex QP's KKT conditions, per column, relative.

    With ``g = H z - b``: ``g`` is equal on the support of ``z`` and no lower
    off it. The residual is the spread of ``g`` over the support, plus how far
    ``g`` falls below its support value elsewhere, plus any infeasibility.
    """
    G = H @ Z - B
    residual = np.empty(Z.shape[1])
    for i in range(Z.shape[1]):
        support = Z[:, i] > 0
        if not support.any():
            residual[i] = np.inf
            continue
        nu = G[support, i].min()
        off = G[~support, i]
        below = max(0.0, nu - off.min()) if off.size else 0.0
        residual[i] = np.ptp(G[support, i]) + below
    scale = np.maximum(np.abs(B).max(axis=0), np.abs(H).max())
    infeasible = np.abs(Z.sum(axis=0) - 1) + np.maximum(-Z.min(axis=0), 0)
    return residual / scale + infeasible


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


def _best_face(H, b):
    """The lowest value over the minimisers of every face found by a pseudo-inverse.

    On a face ``S`` the KKT system ``H_SS z + mu 1 = b_S, 1^T z = 1`` has, when
    consistent, a least-norm solution; the optimum is the best of those that
    lie on the simplex (a face of the optimum always contains one).
    """
    m = len(b)
    best = np.inf
    for size in range(1, m + 1):
        for face in itertools.combinations(range(m), size):
            idx = list(face)
            k = len(idx)
            A = np.block([[H[np.ix_(idx, idx)], np.ones((k, 1))], [np.ones((1, k)), 0.0]])
            x = np.linalg.pinv(A) @ np.append(b[idx], 1.0)
            if x[:k].min() < -1e-12:
                continue
            z = np.zeros(m)
            z[idx] = x[:k]
            if abs(z.sum() - 1) > 1e-9:
                continue
            best = min(best, 0.5 * z @ H @ z - b @ z)
    return best


# --------------------------------------------------------------------------- both methods


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rank_deficient", [False, True])
def test_simplex_qp_matches_a_generic_solver(method, seed, rank_deficient):
    rng = np.random.default_rng(seed)
    m, n = 5, 12
    A = rng.normal(size=(3 if rank_deficient else 8, m))
    H = A.T @ A + (0.0 if rank_deficient else 0.1) * np.eye(m)
    B = rng.normal(scale=3.0, size=(m, n))
    Z, n_iter = simplex_qp(H, B, method=method, max_iter=20000, tol=1e-12)
    assert _on_simplex(Z) and n_iter >= 1
    values = _qp_values(H, B, Z)
    for i in range(n):
        z_ref = _slsqp(H, B[:, i])
        # The objective is at least as low as SLSQP's (to rounding).
        assert values[i] <= 0.5 * z_ref @ H @ z_ref - B[:, i] @ z_ref + 1e-9
        if not rank_deficient:  # unique minimiser
            np.testing.assert_allclose(Z[:, i], z_ref, atol=1e-5)
    assert _kkt_residual(H, B, Z).max() < (1e-9 if method == "active_set" else 1e-6)


@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 9), n=st.integers(1, 20), c=st.floats(1e-3, 1e3), seed=seeds)
def test_simplex_qp_with_scaled_identity_is_the_projection(method, m, n, c, seed):
    rng = np.random.default_rng(seed)
    B = rng.normal(scale=5.0, size=(m, n))
    Z, _ = simplex_qp(c * np.eye(m), B, method=method, tol=1e-12)
    # Reference: sort-based projection of b / c, written out here.
    expected = np.empty_like(B)
    for i in range(n):
        y = B[:, i] / c
        u = np.sort(y)[::-1]
        css = np.cumsum(u) - 1
        rho = np.nonzero(u - css / np.arange(1, m + 1) > 0)[0][-1]
        expected[:, i] = np.maximum(y - css[rho] / (rho + 1), 0)
    np.testing.assert_allclose(Z, expected, atol=1e-10)


@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=60, deadline=None)
@given(seed=seeds, singular=st.booleans())
def test_two_columns_closed_form(method, seed, singular):
    # m = 2: z = (t, 1 - t) with t the clipped minimiser of a parabola in t.
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(1 if singular else 3, 2))
    H = a.T @ a
    b = rng.normal(scale=2.0, size=2)
    curvature = H[0, 0] - 2 * H[0, 1] + H[1, 1]
    slope = H[0, 1] - H[1, 1] - b[0] + b[1]  # derivative at t = 0
    if curvature > 1e-9 * np.abs(H).max():
        t = np.clip(-slope / curvature, 0.0, 1.0)
    else:  # linear in t: a vertex
        t = 1.0 if slope + 0.5 * curvature < 0 else 0.0
        if abs(slope + 0.5 * curvature) < 1e-9:
            return  # every point ties
    Z, _ = simplex_qp(H, b[:, None], method=method, max_iter=20000, tol=1e-14)
    np.testing.assert_allclose(Z[:, 0], [t, 1 - t], atol=1e-6 if method == "fista" else 1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_simplex_qp_special_cases(method):
    rng = np.random.default_rng(3)
    m, n = 4, 6
    # A point on the simplex with H = I, b = z is its own solution.
    Z0 = rng.dirichlet(np.ones(m), size=n).T
    Z, _ = simplex_qp(np.eye(m), Z0, method=method)
    np.testing.assert_allclose(Z, Z0, atol=1e-12)
    # H = 0: the mass goes to the largest linear coefficient.
    B = rng.normal(size=(m, n))
    Z, _ = simplex_qp(np.zeros((m, m)), B, method=method)
    np.testing.assert_array_equal(Z, np.eye(m)[:, B.argmax(axis=0)])
    # One entry: the only point of the simplex; no columns.
    np.testing.assert_array_equal(simplex_qp([[2.0]], [[1.0, -3.0]], method=method)[0], [[1, 1]])
    assert simplex_qp(np.eye(m), np.empty((m, 0)), method=method)[0].shape == (m, 0)


def test_simplex_qp_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="method must be"):
        simplex_qp(np.eye(2), np.ones((2, 1)), method="newton")


# --------------------------------------------------------------------------- first-order method


def test_fista_columns_are_independent_and_warm_start_agrees():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(10, 6))
    H = A.T @ A + 0.5 * np.eye(6)
    B = rng.normal(size=(6, 40))
    Z, _ = simplex_qp(H, B, method="fista", max_iter=5000, tol=1e-11)
    Z_part, _ = simplex_qp(H, B[:, 5:9], method="fista", max_iter=5000, tol=1e-11)
    np.testing.assert_allclose(Z_part, Z[:, 5:9], atol=1e-13)
    Z_warm, _ = simplex_qp(H, B, method="fista", Z0=rng.random((6, 40)), max_iter=5000, tol=1e-11)
    np.testing.assert_allclose(Z_warm, Z, atol=1e-8)
    # H = 0 needs no iteration.
    assert simplex_qp(np.zeros((6, 6)), B, method="fista")[1] == 0


# --------------------------------------------------------------------------- active-set method


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("alpha", [0.01, 1.0, 100.0])
def test_active_set_is_exact_and_matches_slsqp_and_fista(seed, alpha):
    rng = np.random.default_rng(seed)
    m, d, n = 12, 16, 200
    A = rng.normal(size=(m, d))  # anchors as rows
    X = A[rng.integers(m, size=n)] + rng.normal(scale=0.7, size=(n, d))
    H = A @ A.T + alpha * np.eye(m)
    B = A @ X.T
    Z, n_iter = simplex_qp(H, B)
    assert _on_simplex(Z) and n_iter >= 1
    # KKT to rounding, with no iteration tolerance.
    assert _kkt_residual(H, B, Z).max() < 1e-12
    values = _qp_values(H, B, Z)
    # Never above FISTA run to a tight tolerance, and within its accuracy.
    Z_fista, _ = simplex_qp(H, B, method="fista", max_iter=20000, tol=1e-12)
    fista_values = _qp_values(H, B, Z_fista)
    assert np.all(values <= fista_values + 1e-12 * np.abs(fista_values).max())
    np.testing.assert_allclose(Z, Z_fista, atol=1e-8)
    # An independent reference on every fifth column: SLSQP.
    for i in range(0, n, 5):
        z_ref = _slsqp(H, B[:, i])
        assert values[i] <= 0.5 * z_ref @ H @ z_ref - B[:, i] @ z_ref + 1e-10
        np.testing.assert_allclose(Z[:, i], z_ref, atol=1e-5)


def test_active_set_limit_cases():
    rng = np.random.default_rng(7)
    m, d = 6, 10
    A = rng.normal(size=(m, d))
    # A sample equal to an anchor, alpha = 0: all its weight on that anchor.
    Z, _ = simplex_qp(A @ A.T, A @ A.T)
    np.testing.assert_allclose(Z, np.eye(m), atol=1e-12)
    # alpha -> inf: the uniform point of the simplex (error O(1 / alpha)).
    X = rng.normal(scale=3.0, size=(25, d))
    Z, _ = simplex_qp(A @ A.T + 1e9 * np.eye(m), A @ X.T)
    np.testing.assert_allclose(Z, 1.0 / m, atol=1e-7)


@pytest.mark.parametrize("m, d", [(10, 3), (6, 2), (8, 1)])
def test_active_set_is_exact_on_a_singular_hessian(m, d):
    # alpha = 0 and fewer features than anchors: H has rank d, minimisers form faces.
    rng = np.random.default_rng(8 + m)
    A = rng.normal(size=(m, d))
    B = A @ rng.normal(scale=2.0, size=(d, 40))
    H = A @ A.T
    Z, _ = simplex_qp(H, B, max_iter=20000, tol=1e-12)
    assert _on_simplex(Z)
    # The KKT conditions certify the optimum...
    assert _kkt_residual(H, B, Z).max() < 1e-9
    values = _qp_values(H, B, Z)
    for i in range(0, 40, 4):
        # ... which no face improves on, nor SLSQP.
        assert values[i] <= _best_face(H, B[:, i]) + 1e-9 * (1 + abs(values[i]))
        z_ref = _slsqp(H, B[:, i])
        assert values[i] <= 0.5 * z_ref @ H @ z_ref - B[:, i] @ z_ref + 1e-9


def test_a_column_that_fails_its_certificate_tries_every_face():
    # The centre of the simplex as a (bad) first-order iterate on a rank-2 H:
    # the optimum is not on its face (every entry), so its face system has no
    # certified solution, and every face is tried and the best one kept.
    rng = np.random.default_rng(11)
    A = rng.normal(size=(5, 2))
    H = A @ A.T
    b = A @ rng.normal(size=2) + rng.normal(size=5)
    polished = _simplex_qp._polish(H, b, np.full(5, 0.2))
    assert (polished == 0).any()
    assert _kkt_residual(H, b[:, None], polished[:, None])[0] < 1e-9
    value = 0.5 * polished @ H @ polished - b @ polished
    assert value <= _best_face(H, b) + 1e-12 * (1 + abs(value))


def test_active_set_columns_are_independent_bits():
    rng = np.random.default_rng(9)
    A = rng.normal(size=(15, 20))
    H = A @ A.T + np.eye(15)
    B = A @ rng.normal(size=(20, 3000))
    Z, _ = simplex_qp(H, B, n_jobs=1)
    part, _ = simplex_qp(H, B[:, 100:107], n_jobs=1)
    np.testing.assert_array_equal(part, Z[:, 100:107])
    np.testing.assert_array_equal(simplex_qp(H, B, n_jobs=2)[0], Z)
