"""The simplex QP and the min-norm (MGDA) weights: closed forms, KKT, scipy cross-check."""

import numpy as np
import pytest
from scipy.optimize import minimize

from mvlearn_ext.moo import min_norm_direction, min_norm_weights, solve_simplex_qp


def slsqp(Q, c):
    S = len(c)
    res = minimize(
        lambda x: 0.5 * x @ Q @ x + c @ x,
        np.full(S, 1 / S),
        jac=lambda x: Q @ x + c,
        bounds=[(0, 1)] * S,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    return res.x


def test_mgda_two_task_formula():
    g1, g2 = np.array([1.0, 2.0, 0.0]), np.array([-1.0, 0.5, 1.0])
    alpha = np.clip(g2 @ (g2 - g1) / ((g1 - g2) @ (g1 - g2)), 0, 1)
    np.testing.assert_allclose(min_norm_weights([g1, g2]), [alpha, 1 - alpha])
    # one gradient is a descent direction for both: the min norm is it
    np.testing.assert_allclose(min_norm_weights([[1.0, 0.0], [2.0, 0.0]]), [1.0, 0.0])


@pytest.mark.parametrize("S", [3, 5, 8])
def test_min_norm_kkt_and_scipy(S):
    rng = np.random.default_rng(S)
    G = rng.normal(size=(S, 6))
    lam = min_norm_weights(G)
    assert lam.min() >= 0 and lam.sum() == pytest.approx(1, abs=1e-12)
    Q = G @ G.T
    g = Q @ lam
    supp = lam > 1e-12
    nu = g[supp].mean()
    np.testing.assert_allclose(g[supp], nu, atol=1e-9)
    assert np.all(g[~supp] >= nu - 1e-9)
    ref = slsqp(Q, np.zeros(S))
    assert lam @ Q @ lam <= ref @ Q @ ref + 1e-10


def test_rank_deficient_and_many_tasks():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(10, 3))  # more tasks than parameters: singular Gram
    lam, d = min_norm_direction(G)
    # 0 is in the convex hull of 10 random directions in R^3 (w.h.p.): d = 0
    ref = slsqp(G @ G.T, np.zeros(10))
    assert np.linalg.norm(d) <= np.linalg.norm(ref @ G) + 1e-8
    # min-norm is no longer than any other convex combination
    for _ in range(50):
        v = rng.dirichlet(np.ones(10))
        assert np.linalg.norm(d) <= np.linalg.norm(v @ G) + 1e-10


def test_solve_simplex_qp_small_cases_and_errors():
    np.testing.assert_allclose(solve_simplex_qp([[1.0, 0], [0, 3.0]]), [0.75, 0.25])
    np.testing.assert_allclose(solve_simplex_qp(np.zeros((3, 3)), [1.0, -1.0, 0.0]), [0, 1, 0])
    np.testing.assert_allclose(solve_simplex_qp([[2.0]]), [1.0])
    with pytest.raises(ValueError, match="G contains NaN"):
        min_norm_weights([[np.nan, 1.0], [0.0, 1.0]])
    # A common scale of the gradients changes the weights in nothing, at any magnitude.
    weights, d = min_norm_direction([[1e300, 0.0], [0.0, 1e300]])
    np.testing.assert_allclose(weights, [0.5, 0.5])
    np.testing.assert_allclose(d, [5e299, 5e299])
    with pytest.raises(TypeError, match="Q must be a numeric array"):
        solve_simplex_qp([["1", "0"], ["0", "3"]])
    with pytest.raises(ValueError, match="Q holds complex"):
        solve_simplex_qp([[1.0, 0.0], [0.0, 3.0 + 1j]])
    with pytest.raises(ValueError, match="c contains NaN"):
        solve_simplex_qp([[1.0, 0.0], [0.0, 3.0]], [0.0, np.nan])
