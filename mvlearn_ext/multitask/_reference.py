"""Pure-NumPy route of the robust multi-task solver (a reference for the tests).

The same mathematics as the Numba kernels, written with batched NumPy
(``einsum``, stacked ``eigh``): the reference of the kernels in the
tests, and a peer to time them against.
"""

from __future__ import annotations

import numpy as np

__all__ = ["numpy_moments", "numpy_robust_fit"]


def numpy_moments(X, y, tasks, n_tasks):
    """Per-task ``Sigma_j = X_j^T X_j / n_j`` and ``b_j = X_j^T y_j / n_j`` (no intercept)."""
    d = X.shape[1]
    n = np.bincount(tasks, minlength=n_tasks).astype(float)
    Sigma = np.zeros((n_tasks, d, d))
    np.add.at(Sigma, tasks, X[:, :, None] * X[:, None, :])
    b = np.zeros((n_tasks, d))
    np.add.at(b, tasks, X * y[:, None])
    return Sigma / n[:, None, None], b / n[:, None], n


def numpy_robust_fit(X, y, tasks, n_tasks, q, *, max_iter=1000, tol=1e-10, rcond=None):
    """``(coef, center, n_iter)`` of the estimator with ``w_j = 1`` and no intercept."""
    Sigma, b, n = numpy_moments(X, y, tasks, n_tasks)
    d = X.shape[1]
    e, V = np.linalg.eigh(Sigma)
    if rcond is None:
        rcond = np.finfo(float).eps * max(int(n.max()), d)
    keep = (e > rcond * e[:, -1:]) & (e > 0)
    bt = np.einsum("jkl,jk->jl", V, b)
    inv = np.where(keep, 1.0 / np.where(keep, e, 1.0), 0.0)
    theta = np.einsum("jkl,jl->jk", V, bt * inv)
    lam = q * np.sqrt(d / n)

    def distances(beta):
        diff = theta - beta
        return np.sqrt(np.maximum(np.einsum("jk,jkl,jl->j", diff, Sigma, diff), 0.0))

    def solve(omega):
        M = np.tensordot(omega, Sigma, axes=1)
        return np.linalg.lstsq(M, omega @ b, rcond=rcond)[0]

    beta = solve(np.ones(n_tasks))
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        r = distances(beta)
        omega = np.where(r > lam, lam / np.where(r > 0, r, 1.0), 1.0)
        new = solve(omega)
        S = Sigma.mean(axis=0)  # the stopping rule's metric (w_j = 1)
        step = new - beta
        change = np.sqrt(max(step @ S @ step, 0.0))
        beta = new
        if change <= tol * (1 + np.sqrt(max(beta @ S @ beta, 0.0))):
            break
    r = distances(beta)
    shrink = np.where(r > lam, 1.0 - lam / np.where(r > 0, r, 1.0), 0.0)
    # canonical representative: beta + c_j P_j (theta_j - beta)
    pb = np.einsum("jkl,jl->jk", V, np.einsum("jkl,k->jl", V, beta) * keep)
    coef = beta + shrink[:, None] * (theta - pb)
    return coef, beta, n_iter
