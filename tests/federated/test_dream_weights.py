"""The DREAM server QP: closed form, KKT, scipy cross-check, special cases."""

import numpy as np
import pytest
from scipy.optimize import minimize

from mvlearn_ext.federated import dream_direction, dream_weights
from mvlearn_ext.moo import min_norm_direction, min_norm_weights


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


@pytest.mark.parametrize("rho", [0.0, 0.3, 5.0])
def test_two_task_closed_form_vs_grid_and_qp(rho):
    rng = np.random.default_rng(int(rho * 10))
    for _ in range(10):
        G = rng.normal(size=(2, 4))
        C = np.diag(rng.uniform(0.5, 2, 2))
        w = rng.dirichlet([1, 1])
        lam = dream_weights(G, correction=C, reg_rho=rho, anchor=w)
        lam_qp = dream_weights(G, correction=C, reg_rho=rho, anchor=w, method="qp")
        np.testing.assert_allclose(lam, lam_qp, atol=1e-9)
        M = C.T @ G
        grid = np.linspace(0, 1, 200001)
        d = grid[:, None] * M[0] + (1 - grid)[:, None] * M[1]
        obj = 0.5 * (d**2).sum(1) + 0.5 * rho * ((grid - w[0]) ** 2 + (1 - grid - w[1]) ** 2)
        assert abs(lam[0] - grid[np.argmin(obj)]) <= 1e-5


@pytest.mark.parametrize("S", [3, 5, 8])
@pytest.mark.parametrize("rho", [0.0, 0.7])
def test_general_qp_kkt_and_scipy(S, rho):
    rng = np.random.default_rng(S)
    G = rng.normal(size=(S, 6))
    C = np.eye(S) + 0.1 * rng.normal(size=(S, S))
    w = rng.dirichlet(np.ones(S))
    lam = dream_weights(G, correction=C, reg_rho=rho, anchor=w)
    assert lam.min() >= 0 and lam.sum() == pytest.approx(1, abs=1e-12)
    M = C.T @ G
    Q = M @ M.T + rho * np.eye(S)
    c = -rho * w
    g = Q @ lam + c
    supp = lam > 1e-12
    nu = g[supp].mean()
    np.testing.assert_allclose(g[supp], nu, atol=1e-9)
    assert np.all(g[~supp] >= nu - 1e-9)
    ref = slsqp(Q, c)
    f = lambda x: 0.5 * x @ Q @ x + c @ x  # noqa: E731
    assert f(lam) <= f(ref) + 1e-10


def test_permutation_equivariance():
    rng = np.random.default_rng(5)
    G = rng.normal(size=(4, 7))
    C = np.diag(rng.uniform(0.5, 2, 4))
    w = rng.dirichlet(np.ones(4))
    lam = dream_weights(G, correction=C, reg_rho=0.2, anchor=w)
    p = np.array([2, 0, 3, 1])
    lam_p = dream_weights(G[p], correction=C[np.ix_(p, p)], reg_rho=0.2, anchor=w[p])
    np.testing.assert_allclose(lam_p, lam[p], atol=1e-9)


def test_special_cases():
    rng = np.random.default_rng(6)
    G = rng.normal(size=(4, 5))
    w = rng.dirichlet(np.ones(4))
    np.testing.assert_allclose(dream_weights(G), min_norm_weights(G))
    np.testing.assert_allclose(dream_weights(G, reg_rho=1e12, anchor=w), w, atol=1e-8)
    # C = diag(1/||g||) is MGDA on normalised rows
    norms = np.linalg.norm(G, axis=1)
    lam = dream_weights(G, correction=np.diag(1 / norms))
    np.testing.assert_allclose(lam, min_norm_weights(G / norms[:, None]), atol=1e-9)
    lam, d = dream_direction(G, correction=np.diag(1 / norms))
    np.testing.assert_allclose(d, min_norm_direction(G / norms[:, None])[1], atol=1e-9)


def test_dream_weights_errors():
    with pytest.raises(ValueError, match="correction must have shape"):
        dream_weights(np.ones((3, 2)), correction=np.eye(2))
    with pytest.raises(ValueError, match="anchor must be on the probability simplex"):
        dream_weights(np.ones((2, 2)), anchor=[0.7, 0.7])
    with pytest.raises(ValueError, match="reg_rho"):
        dream_weights(np.ones((2, 2)), reg_rho=-1.0)
    with pytest.raises(ValueError, match="closed_form"):
        dream_weights(np.ones((3, 2)), method="closed_form")


@pytest.mark.parametrize("func", [dream_weights, dream_direction])
def test_unusable_directions_are_refused_by_name(func):
    G = np.array([[1.0, 0.0], [0.0, 2.0]])
    with pytest.raises(TypeError, match="G must be a numeric array"):
        func(G.astype(str))
    with pytest.raises(ValueError, match="G holds complex values"):
        func(G + 1j)
    with pytest.raises(ValueError, match="G holds values too large"):
        func(G * 1e300)
    with pytest.raises(ValueError, match="correction contains NaN"):
        func(G, correction=np.array([[1.0, np.nan], [0.0, 1.0]]))
